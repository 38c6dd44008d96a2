/**
 * Parse once, then verify (docs/collector-transfer.md "Import"): one upload of either kind reads
 * its envelope once and checks its signature once, counted by readVerifiedTransfer's test
 * counters; the import modules reach the envelope reader and the signature check only through
 * it. Real stores, a real enrolled key, real claims; the review transfer is collected by a real
 * `agent-task collect` process with the stand-in Claude Code executable.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { importTransfer } from '../../src/collector/review/import.js';
import { encodeCanonical, formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { openAuthority } from '../../src/native/store.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { verifiedTransferCounts } from '../../src/tasks/collector/verified-transfer.js';
import { authorizeTaskToken, callWithTokenFile } from '../../src/tasks/grant-guard.js';
import { openStore, withStore, type Store } from '../../src/tasks/store.js';
import { jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import {
  ALICE,
  authorization,
  claim,
  envelopeOf,
  makeEvidence,
  transferParts,
  type Evidence,
} from '../support/evidence.js';
import { fixtureEnv, reviewStepAction } from '../support/review-run.js';
import { answerJson, BUDGETS, installFixture, POLICY } from '../support/review.js';
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

test('a command upload that completes the graph and writes the receipt, and its exact retry, each parse the envelope once and check its signature once', async (t) => {
  const ev = makeEvidence(t);
  const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
  const store = writeStore(t, ev.store.dataDir);
  const first = await counted(() => importTransfer(store, envelope, authorization(ev)));
  assert.equal(first.answer.status, 'imported');
  // The upload completed the graph: its receipt was written in the same call, and counted.
  assert.equal((first.answer.receipt as JsonObject).status, 'written');
  assert.deepEqual([first.parsed, first.signaturesChecked], [1, 1]);
  const retry = await counted(() => importTransfer(store, envelope, authorization(ev)));
  assert.equal(retry.answer.status, 'retained');
  assert.deepEqual([retry.parsed, retry.signaturesChecked], [1, 1]);
});

test('the counters count the receipt path: collector_finalize re-verifies the retained envelope once, by design', async (t) => {
  const ev = makeEvidence(t);
  const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
  const first = withStore(ev.store.dataDir, 'write', (held) =>
    importCollectorTransfer(held, envelope, authorization(ev)),
  );
  const receipt = first.receipt as JsonObject;
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

test('a review upload (prepare, replay, import) and its exact retry each parse the envelope once and check its signature once', async (t) => {
  const root = tempDir(t, 'agentscm-parse-once-');
  const ws = join(root, 'ws');
  const dataDir = join(root, 'data');
  mkdirSync(join(ws, 'skills', 'check'), { recursive: true });
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'src', 'a.ts'), 'export const a = 0;\n');
  writeFileSync(
    join(ws, 'skills', 'check', 'SKILL.md'),
    '---\nname: check\ndescription: review the change\n---\nReview it.\n',
  );
  writeFileSync(join(ws, 'skills', 'check', 'review-policy.json'), encodeCanonical(POLICY));
  const limits = { memory_bytes: 67108864, pids: 64, cpu_millis: 1000, output_bytes: 65536, scratch_bytes: 1048576 };
  writeFileSync(
    join(ws, 'skills', 'check', 'runner.json'),
    JSON.stringify({
      version: 1,
      image: 'local/busybox:1',
      argv: ['true'],
      env: {},
      workdir: '.',
      timeout_ms: 1000,
      limits,
      toolchain: 'busybox-1',
      environment: 'posix-sh-offline',
    }),
  );
  const cli = (args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
    runCli(['--data-dir', dataDir, ...args], { env });
  ok(await cli(['init-repo', ws, '--name', 'demo', '--json']));
  writeFileSync(join(ws, 'src', 'a.ts'), 'export const a = 2;\n');
  const cp = jsonOf<{ repository: string; revision: string }>(
    ok(await cli(['checkpoint', '--change', 'c1', '--workspace', ws, '--json'])),
  );
  const context = jsonOf<{ context_digest: string }>(
    ok(await cli(['context', 'create', '--change', 'c1', '--runner', 'skills/check/runner.json', '--json'])),
  );
  const workflow = join(root, 'workflow.json');
  writeFileSync(
    workflow,
    JSON.stringify({
      version: 1,
      name: 'reviewed',
      source: { repository: cp.repository, revision: cp.revision, policy_epoch: 0 },
      skill: {
        entrypoint: 'skills/check/SKILL.md',
        resources: ['skills/check/review-policy.json', 'skills/check/runner.json'],
      },
      steps: [{ id: 'review', needs: [], required: true, action: reviewStepAction(['src/a.ts']) }],
    }),
  );
  ok(await cli(['requirement', 'install', '--target', 'main', workflow]));
  const tokenFile = join(root, 'alice.token');
  ok(await cli(['grant', 'create', '--actor', 'alice/agent-1', '--token-file', tokenFile]));
  const stateDir = join(root, 'collector');
  ok(await runCli(['agent-task', 'key', '--state-dir', stateDir]));
  const keyFile = join(stateDir, 'signing-key.json');
  const publicKey = (JSON.parse(readFileSync(keyFile, 'utf8')) as { public_key: string }).public_key;
  const enrolled = jsonOf<{ registration_id: string; registration_epoch: number; verification_key_id: string }>(
    ok(
      await cli([
        'agent-task',
        'enroll',
        '--step',
        'review',
        '--executor',
        'reviewer-1',
        '--public-key',
        publicKey,
        '--json',
      ]),
    ),
  );
  const fixture = installFixture(t, [{ mode: 'answer', response: answerJson() }]);
  const profileFile = join(root, 'review-profile.json');
  writeFileSync(
    profileFile,
    formatJson({
      version: 1,
      kind: 'finite_review',
      repository_id: cp.repository,
      workflow_profile: 'default',
      step_id: 'review',
      registration_id: enrolled.registration_id,
      registration_epoch: enrolled.registration_epoch,
      verification_key_id: enrolled.verification_key_id,
      transport: {
        basis: 'claude-code',
        executable_sha256: sha256(readFileSync(fixture.executable)),
        provider_scope: 'test-org',
        model: 'claude-sonnet-4-5',
      },
      policy_sha256: sha256(encodeCanonical(POLICY)),
      coverage: ['src/a.ts'],
      budgets: BUDGETS as never,
    }),
  );
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
      context.context_digest,
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
});

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
