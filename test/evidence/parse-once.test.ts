/**
 * Parse once, then verify (docs/collector-transfer.md "Import"): one upload of either kind reads
 * its envelope once and checks its signature once, counted by readVerifiedTransfer's test
 * counters; the import modules reach the envelope reader and the signature check only through
 * it. Real stores, a real enrolled key, real claims; the review transfer is collected by a real
 * `agent-task collect` process with the stand-in Claude Code executable.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { importTransfer } from '../../src/collector/review/import.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { openAuthority } from '../../src/native/store.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { verifiedTransferCounts } from '../../src/tasks/collector/verified-transfer.js';
import { authorizeTaskToken, callWithTokenFile } from '../../src/tasks/grant-guard.js';
import { openStore, withStore, type Store } from '../../src/tasks/store.js';
import { jsonOf, REPO_ROOT, type CliResult } from '../helpers/cli.js';
import {
  ALICE,
  authorization,
  claim,
  envelopeOf,
  makeEvidence,
  transferParts,
  type Evidence,
} from '../support/evidence.js';
import { fixtureEnv } from '../support/review-run.js';
import { buildReviewScenario } from '../support/review-scenario.js';
import { CHANGE_ID } from '../support/tasks.js';

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/** The counts of one call: how many envelopes were parsed and signatures checked during it. */
async function counted<T>(run: () => Promise<T>): Promise<{ answer: T; parsed: number; signaturesChecked: number }> {
  const before = { ...verifiedTransferCounts };
  const answer = await run();
  return {
    answer,
    parsed: verifiedTransferCounts.parsed - before.parsed,
    signaturesChecked: verifiedTransferCounts.signaturesChecked - before.signaturesChecked,
  };
}

/** The Store ('write') an import runs with, closed after the test. */
function writeStore(t: TestContext, dataDir: string): Store {
  const store = openStore(dataDir, { mode: 'write' });
  t.after(() => store.close());
  return store;
}

test(
  'a command upload that completes the graph and writes the receipt, and its exact retry, each ' +
    'parse the envelope once and check its signature once',
  async (t) => {
    const ev = makeEvidence(t);
    const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
    const store = writeStore(t, ev.store.dataDir);
    const first = await counted(() => importTransfer(store, envelope, authorization(ev)));
    assert.equal(first.answer.status, 'imported');
    // The upload completed the graph: its receipt was written in the same call, and counted.
    assert.equal(((first.answer as JsonObject).receipt as JsonObject).status, 'written');
    assert.deepEqual([first.parsed, first.signaturesChecked], [1, 1]);
    const retry = await counted(() => importTransfer(store, envelope, authorization(ev)));
    assert.equal(retry.answer.status, 'retained');
    assert.deepEqual([retry.parsed, retry.signaturesChecked], [1, 1]);
  },
);

test('the counters count the receipt path: collector_finalize re-verifies the retained envelope once, by design', async (t) => {
  const ev = makeEvidence(t);
  const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
  const first = withStore(ev.store.dataDir, 'write', (held) =>
    importCollectorTransfer(held, envelope, authorization(ev)),
  );
  const receipt = (first as JsonObject).receipt as JsonObject;
  assert.equal(receipt.status, 'written');
  // The state a process killed between the import and its receipt leaves (test/evidence/finalize.test.ts).
  const journal = openAuthority(ev.store.dataDir, { mode: 'write' });
  try {
    assert.equal(journal.db.prepare('DELETE FROM collector_receipts').run().changes, 1);
  } finally {
    journal.close();
  }
  const finalized = await counted(() => Promise.resolve(finalize(ev)));
  assert.deepEqual(
    finalized.answer,
    { status: 'written', receipt_digest: receipt.receipt_digest, state: receipt.state },
    'the same receipt bytes',
  );
  assert.deepEqual([finalized.parsed, finalized.signaturesChecked], [1, 1]);
});

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

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

test(
  'a review upload (prepare, replay, import) and its exact retry each parse the envelope once and ' +
    'check its signature once',
  async (t) => {
    const { scenario, fixture, profileFile } = await buildReviewScenario(t);
    const { root, dataDir, tokenFile, stateDir, keyFile } = scenario;
    const cli = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => scenario.cli(args, { env });
    const profileId = jsonOf<{ collector_profile_id: string }>(
      ok(await cli(['agent-task', 'profile', 'install', profileFile, '--json'])),
    ).collector_profile_id;
    const descriptorFile = join(root, 'review.descriptor.json');
    ok(
      await cli([
        'agent-task',
        'claim',
        '--profile',
        profileId,
        '--change',
        'c1',
        '--context',
        scenario.contextDigest,
        '--token-file',
        tokenFile,
        '--out',
        descriptorFile,
        '--json',
      ]),
    );
    // Collect without uploading (the endpoint refuses), to get the signed envelope.
    const offline = await cli(
      [
        'agent-task',
        'collect',
        '--descriptor',
        descriptorFile,
        '--key',
        keyFile,
        '--state-dir',
        stateDir,
        '--token-file',
        tokenFile,
        '--review-executable',
        fixture.executable,
        '--review-env',
        'PATH',
        '--review-env',
        'FIXTURE_PLAN',
        '--review-env',
        'FIXTURE_LOG',
        '--endpoint',
        'http://127.0.0.1:9/none',
        '--json',
      ],
      fixtureEnv(fixture),
    );
    assert.notEqual(offline.code, 0);
    const uploadRequestId = (JSON.parse(readFileSync(descriptorFile, 'utf8')) as { upload_request_id: string })
      .upload_request_id;
    const envelope = readFileSync(join(stateDir, 'collections', sha256(uploadRequestId), 'envelope.agscmtr'));
    const store = writeStore(t, dataDir);
    const grant = (): ReturnType<typeof authorizeTaskToken> =>
      authorizeTaskToken({ store, token: readTokenFile(tokenFile) });

    const first = await counted(() => importTransfer(store, envelope, grant()));
    assert.equal(first.answer.status, 'imported');
    assert.equal(first.answer.outcome, 'passed');
    assert.deepEqual([first.parsed, first.signaturesChecked], [1, 1]);
    const retry = await counted(() => importTransfer(store, envelope, grant()));
    assert.equal(retry.answer.status, 'retained');
    assert.deepEqual([retry.parsed, retry.signaturesChecked], [1, 1]);
  },
);

test('the import and receipt modules read and verify an envelope only through collector-verified-transfer.ts', () => {
  for (const file of [
    'src/tasks/collector/import.ts',
    'src/collector/review/import.ts',
    'src/tasks/collector/receipts.ts',
  ]) {
    const source = readFileSync(join(REPO_ROOT, file), 'utf8');
    for (const direct of [
      'readTransferEnvelope',
      'checkTransferSignature',
      'verifyTransferEnvelope',
      'transferDigest(',
    ]) {
      assert.ok(!source.includes(direct), `${file} calls ${direct} itself; go through collector-verified-transfer.ts`);
    }
  }
});
