/**
 * The receipt transaction rechecks the executor registration (issue #25 item 13; spec
 * "Operator-enrolled collector transfer"; docs/collector-transfer.md "Receipts and
 * collector_finalize").
 * An import commits its transfer in one transaction and writes the receipt in the next; a
 * registration revoked or re-enrolled between the two must keep the receipt from naming its
 * transfer. `agentscm agent-task upload` is spawned as a user runs it and paused (test pause
 * point task:after-journal-commit) right after the import's commit; the registration changes
 * while it waits, then it runs on into its receipt transaction.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { createSigningKey, loadSigningKey } from '../../src/collector/key-store.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { openAuthority } from '../../src/native/store.js';
import { cliEntryArgv, REPO_ROOT } from '../helpers/cli.js';
import { finalize } from '../support/admission.js';
import {
  claim,
  enrollAndInstall,
  envelopeOf,
  makeEvidence,
  transferParts,
  type Evidence,
} from '../support/evidence.js';
import { revoke } from '../support/tasks.js';

function receiptCount(ev: Evidence): number {
  const journal = openAuthority(ev.store.dataDir, { mode: 'read' });
  try {
    return (journal.db.prepare('SELECT count(*) AS n FROM collector_receipts').get() as { n: number }).n;
  } finally {
    journal.close();
  }
}

/** Upload `envelope` with the CLI, paused after the import's journal commit until `between` has run. */
async function uploadPausedAfterImport(ev: Evidence, envelope: Buffer, between: () => void): Promise<JsonObject> {
  const file = join(ev.dir, 'envelope.agscmtr');
  writeFileSync(file, envelope);
  const resume = join(ev.dir, 'resume');
  const child = spawn(
    process.execPath,
    [
      ...cliEntryArgv(),
      '--data-dir',
      ev.store.dataDir,
      'agent-task',
      'upload',
      file,
      '--token-file',
      ev.tokenFile,
      '--json',
    ],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        AGENTSCM_TEST_PAUSE_AT: 'task:after-journal-commit',
        AGENTSCM_TEST_PAUSE_RESUME_FILE: resume,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const paused = new Promise<void>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('agentscm-test-paused:task:after-journal-commit')) resolve();
    });
  });
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await Promise.race([paused, exit.then(() => assert.fail(`the upload ended before its pause point: ${stderr}`))]);
  // The transfer is committed; no receipt yet.
  assert.equal(receiptCount(ev), 0);
  between();
  writeFileSync(resume, '');
  assert.equal(await exit, 0, stderr);
  return (JSON.parse(stdout) as { upload: { answer: JsonObject } }).upload.answer;
}

test(
  'a registration revoked between the import and its receipt transaction: the import stands, no receipt names its transfer',
  { timeout: 120_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const answer = await uploadPausedAfterImport(ev, envelopeOf(ev.key, transferParts(claim(ev))), () =>
      revoke(ev.store, ev.enrollment.registration_id),
    );
    assert.equal(answer.status, 'imported');
    const receipt = answer.receipt as JsonObject;
    assert.equal(
      receipt.status,
      'incomplete',
      `a receipt was written under a revoked registration: ${JSON.stringify(receipt)}`,
    );
    assert.match(
      receipt.reason as string,
      new RegExp(`registration ${ev.enrollment.registration_id} .*no longer current`),
    );
    assert.equal(receiptCount(ev), 0);
    // Finalization later refuses the same way.
    assert.equal(finalize(ev).status, 'incomplete');
    assert.equal(receiptCount(ev), 0);
  },
);

test(
  'a re-enrollment (a new epoch) between the import and its receipt transaction: no receipt names the superseded registration',
  { timeout: 120_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const answer = await uploadPausedAfterImport(ev, envelopeOf(ev.key, transferParts(claim(ev))), () => {
      enrollAndInstall(ev.store, loadSigningKey(createSigningKey(join(ev.dir, 'state-2')).key_file));
    });
    assert.equal(answer.status, 'imported');
    assert.equal((answer.receipt as JsonObject).status, 'incomplete');
    assert.equal(receiptCount(ev), 0);
  },
);
