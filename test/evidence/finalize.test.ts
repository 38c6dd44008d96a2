/**
 * SIGKILL during import and collector_finalize (docs/collector-transfer.md "Receipts and collector_finalize"): the
 * import commits the transfer in one journal transaction and the receipt in the next; a process
 * killed between them leaves a retained transfer and no receipt (nonpassing), and
 * collector_finalize writes the receipt from the retained transfer without running anything.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { decodeReceiptV2 } from '../../src/contracts/receipt/receipt-v2.js';
import { revokeGrant } from '../../src/native/grants.js';
import { openAuthority } from '../../src/native/store.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { callWithTokenFile } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import {
  ALICE,
  authorization,
  claim,
  envelopeOf,
  makeEvidence,
  transferParts,
  type Evidence,
} from '../support/evidence.js';
import { makeGrant } from '../support/grants.js';
import { CHANGE_ID, revoke } from '../support/tasks.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');

function receiptCount(ev: Evidence): number {
  const journal = openAuthority(ev.store.dataDir, { mode: 'read' });
  try {
    return (journal.db.prepare('SELECT count(*) AS n FROM collector_receipts').get() as { n: number }).n;
  } finally {
    journal.close();
  }
}

function finalize(ev: Evidence): JsonObject {
  return callWithTokenFile({
    store: openStore(ev.store.dataDir, { mode: 'write' }),
    tokenFile: ev.tokenFile,
    operation: 'collector_finalize',
    input: encodeCanonical({ version: 1, agent: { ...ALICE } }),
    profile: 'default',
    target: 'main',
    subject: { change_id: CHANGE_ID, context_digest: ev.store.contextDigest },
  }) as JsonObject;
}

/** Run an import in a child process and SIGKILL it right after its import transaction commits. */
async function killedImport(ev: Evidence, envelope: Buffer): Promise<void> {
  const file = join(ev.dir, 'transfer.bin');
  writeFileSync(file, envelope);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join('test', 'evidence', 'import-child.ts'), ev.store.dataDir, file, ev.tokenFile],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, AGENTSCM_TEST_PAUSE_AT: 'task:after-journal-commit' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const killed = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('agentscm-test-paused:task:after-journal-commit')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve(signal));
  });
  assert.equal(killed, 'SIGKILL');
  assert.equal(stdout, '', 'the killed import answered nothing');
}

test('SIGKILL after the import commits and before its receipt: no partial receipt; the exact retry answers the retained import; collector_finalize writes the receipt once', async (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const envelope = envelopeOf(ev.key, transferParts(descriptor));
  await killedImport(ev, envelope);
  assert.equal(receiptCount(ev), 0, 'no receipt was written by the killed import');

  const retry = withStore(ev.store.dataDir, 'write', (held) =>
    importCollectorTransfer(held, envelope, authorization(ev)),
  );
  assert.equal(retry.status, 'retained');
  assert.equal(retry.outcome, 'passed');
  assert.equal(receiptCount(ev), 0);

  const written = finalize(ev);
  assert.equal(written.status, 'written');
  assert.equal(receiptCount(ev), 1);
  const journal = openAuthority(ev.store.dataDir, { mode: 'read' });
  const stored = journal.db.prepare('SELECT receipt FROM collector_receipts').get() as { receipt: Buffer };
  journal.close();
  const receipt = decodeReceiptV2(stored.receipt);
  assert.equal(receipt.tasks.find((row) => row.step_id === 'unit')?.outcome, 'passed');
  assert.deepEqual(finalize(ev), { status: 'retained', receipt_digest: written.receipt_digest });
});

test('collector_finalize before any import reports the graph incomplete and writes nothing', (t) => {
  const ev = makeEvidence(t);
  claim(ev);
  const answer = finalize(ev);
  assert.equal(answer.status, 'incomplete');
  assert.match(answer.reason as string, /no imported transfer/);
  assert.equal(receiptCount(ev), 0);
});

test('collector_finalize runs under current authorization: a retained transfer whose registration was revoked gets no receipt', async (t) => {
  const ev = makeEvidence(t);
  const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
  await killedImport(ev, envelope);
  revoke(ev.store, ev.enrollment.registration_id);
  const answer = finalize(ev);
  assert.equal(answer.status, 'incomplete');
  assert.match(answer.reason as string, /no longer current/);
  assert.equal(receiptCount(ev), 0);
});

test('the grant revoked between the import and its receipt: the import answers imported with the receipt incomplete, and collector_finalize under another live grant writes none', async (t) => {
  const ev = makeEvidence(t);
  const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
  const file = join(ev.dir, 'transfer.bin');
  writeFileSync(file, envelope);
  const resume = join(ev.dir, 'resume');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join('test', 'evidence', 'import-child.ts'), ev.store.dataDir, file, ev.tokenFile],
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
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    let stderr = '';
    let revoked = false;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!revoked && stderr.includes('agentscm-test-paused:task:after-journal-commit')) {
        revoked = true;
        const auth = openAuthority(ev.store.dataDir, { mode: 'write' });
        try {
          revokeGrant(auth, ev.grantId, Date.now());
        } finally {
          auth.close();
        }
        writeFileSync(resume, '');
      }
    });
    child.on('error', reject);
    child.on('close', (exit) => resolve(exit));
  });
  assert.equal(code, 0);
  const answer = JSON.parse(stdout) as JsonObject;
  assert.equal(answer.status, 'imported');
  assert.equal((answer.receipt as JsonObject).status, 'incomplete');
  assert.match((answer.receipt as JsonObject).reason as string, /GRANT_TOKEN_REJECTED/);
  assert.equal(receiptCount(ev), 0);
  const other = makeGrant(ev.store.dataDir, ev.dir, ALICE).token_file;
  const final = finalize({ ...ev, tokenFile: other });
  assert.equal(final.status, 'incomplete');
  assert.match(final.reason as string, /originating grant .* no longer live/);
  assert.equal(receiptCount(ev), 0);
});
