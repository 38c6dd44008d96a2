/**
 * A receipt names every transfer (issue #25 item 10; docs/collector-transfer.md "Receipt v2"): an
 * optional command step whose imported record failed is an omission of a
 * `completed_with_omissions` receipt, and its row still names its attempt, fence, transfer,
 * profile, registration and origin. `receipt export` puts that transfer in the bundle, and
 * `receipt verify` (spawned as a user runs it) checks it like any other and binds the row's
 * outcome to the signed record's.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { decodeReceiptV2 } from '../../src/contracts/receipt/receipt-v2.js';
import { openAuthority } from '../../src/native/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { importEnvelope } from '../support/admission.js';
import { ALICE, claim, envelopeOf, makeEvidence, transferParts } from '../support/evidence.js';
import { openBundle, sealBundle } from '../support/receipts.js';

interface VerifyJson {
  verified: boolean;
  receipt_digest: string;
  transfers: {
    task_id: string;
    step_id: string;
    required: boolean;
    transfer_digest: string;
    registration_id: string;
    record_outcome: string;
  }[];
  unsigned_rows: { step_id: string; outcome: string; evidence: string }[];
}

test(
  'an optional failing command step: its receipt row names its transfer, the bundle carries it, and verify checks it',
  { timeout: 180_000 },
  async (t) => {
    const ev = makeEvidence(t, [
      { id: 'paths', kind: 'source_paths' },
      { id: 'unit', kind: 'command', needs: ['paths'], required: false },
    ]);
    const descriptor = claim(ev);
    const parts = transferParts(descriptor);
    parts.record = { ...parts.record, outcome: 'failed', exit_code: 1 };
    const answer = importEnvelope(ev, envelopeOf(ev.key, parts));
    assert.equal(answer.status, 'imported');
    assert.equal(answer.outcome, 'failed');
    const written = answer.receipt as JsonObject;
    assert.equal(written.status, 'written', JSON.stringify(written));
    assert.equal(written.state, 'completed_with_omissions');

    const journal = openAuthority(ev.store.dataDir, { mode: 'read' });
    let stored: Buffer;
    try {
      stored = (
        journal.db
          .prepare('SELECT receipt FROM collector_receipts WHERE receipt_digest = ?')
          .get(written.receipt_digest) as { receipt: Buffer }
      ).receipt;
    } finally {
      journal.close();
    }
    const receipt = decodeReceiptV2(stored);
    const unit = receipt.tasks.find((row) => row.step_id === 'unit') as unknown as JsonObject;
    assert.deepEqual(unit, {
      task_id: descriptor.task.task_id,
      task_digest: descriptor.task.task_digest,
      step_id: 'unit',
      required: false,
      outcome: 'failed',
      attempt_id: descriptor.attempt.attempt_id,
      attempt_digest: descriptor.attempt.attempt_digest,
      fence: descriptor.attempt.fence,
      transfer_digest: answer.transfer_digest,
      collector_profile_id: ev.profileId,
      registration_id: ev.enrollment.registration_id,
      registration_epoch: ev.enrollment.registration_epoch,
      verification_key_id: ev.enrollment.verification_key_id,
      origin: { ...ALICE, grant_id: ev.grantId, grant_generation: 1n },
    });

    const bundleFile = join(ev.dir, 'omission.agscmrb');
    const exported = await runCli([
      '--data-dir',
      ev.store.dataDir,
      'receipt',
      'export',
      written.receipt_digest as string,
      '--out',
      bundleFile,
      '--json',
    ]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.deepEqual(
      (({ transfers, registrations }) => ({ transfers, registrations }))(
        jsonOf<{ transfers: number; registrations: number }>(exported),
      ),
      { transfers: 1, registrations: 1 },
    );
    const verified = await runCli(['receipt', 'verify', bundleFile, '--public-key', ev.key.publicKeyHex, '--json']);
    assert.equal(verified.code, 0, verified.stderr);
    const shown = jsonOf<VerifyJson>(verified);
    assert.equal(shown.verified, true);
    assert.equal(shown.receipt_digest, written.receipt_digest);
    assert.deepEqual(
      shown.transfers.map((row) => [
        row.step_id,
        row.required,
        row.transfer_digest,
        row.registration_id,
        row.record_outcome,
      ]),
      [['unit', false, answer.transfer_digest, ev.enrollment.registration_id, 'failed']],
    );
    assert.deepEqual(
      shown.unsigned_rows.map((row) => [row.step_id, row.evidence]),
      [['paths', 'result_digest']],
    );

    // The row's outcome is bound to the signed record: a forger who turns the omission into a pass
    // (and repairs every digest) is refused by record_outcome.
    const open = openBundle(readFileSync(bundleFile));
    open.receipt.state = 'completed';
    const row = (open.receipt.tasks as JsonObject[]).find((task) => task.step_id === 'unit') as JsonObject;
    row.outcome = 'passed';
    const forged = join(ev.dir, 'forged.agscmrb');
    writeFileSync(forged, sealBundle(open));
    const refused = await runCli(['receipt', 'verify', forged, '--json']);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /^error\[RECEIPT_BUNDLE_OUTCOME_MISMATCH\]/);
  },
);
