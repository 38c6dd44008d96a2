/**
 * collector_claim / collector_descriptor and `agent-task claim` (docs/agent-tasks.md "Collector
 * claims"): a real store, a real key enrolled and a profile installed, a live grant.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { decodeCollectorDescriptor } from '../../src/contracts/collector/descriptor.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { callWithTokenFile } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { ALICE, authorization, claim, envelopeOf, makeEvidence, transferParts } from '../support/evidence.js';
import { assertionRequest } from '../support/task-requests.js';
import { CHANGE_ID, DEFAULT_STEPS, PROFILE, revoke } from '../support/tasks.js';

test('agent-task claim writes the descriptor 0600 with the profile, origin grant and a fresh upload request; collector_descriptor re-reads it; a second claim is refused', async (t) => {
  const ev = makeEvidence(t);
  const out = join(ev.dir, 'unit.descriptor.json');
  const result = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'agent-task',
    'claim',
    '--profile',
    ev.profileId,
    '--change',
    CHANGE_ID,
    '--context',
    ev.store.contextDigest,
    '--token-file',
    ev.tokenFile,
    '--out',
    out,
    '--json',
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(statSync(out).mode & 0o777, 0o600);
  const descriptor = decodeCollectorDescriptor(readFileSync(out));
  assert.equal(descriptor.collector_profile_id, ev.profileId);
  assert.deepEqual(descriptor.origin, { ...ALICE, grant_id: ev.grantId, grant_generation: 1n });
  assert.equal(descriptor.executor.registration_id, ev.enrollment.registration_id);
  assert.equal(descriptor.attempt.fence, 1n);
  assert.match(descriptor.upload_request_id, /^u-[0-9a-f]{40}$/);
  const answer = jsonOf<{ status: string; descriptor: JsonObject }>(result);
  assert.equal(answer.status, 'collector_claimed');

  const reread = callWithTokenFile({
    store: openStore(ev.store.dataDir, { mode: 'write' }),
    tokenFile: ev.tokenFile,
    operation: 'collector_descriptor',
    input: Buffer.from(
      JSON.stringify({
        version: 1,
        agent: ALICE,
        task_id: descriptor.task.task_id,
        attempt_id: descriptor.attempt.attempt_id,
      }),
    ),
    profile: PROFILE,
    target: 'main',
  });
  assert.deepEqual(decodeCollectorDescriptor(encodeCanonical(reread)), descriptor);

  // The file is never overwritten, and the task is already claimed.
  const again = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'agent-task',
    'claim',
    '--profile',
    ev.profileId,
    '--change',
    CHANGE_ID,
    '--context',
    ev.store.contextDigest,
    '--token-file',
    ev.tokenFile,
    '--out',
    join(ev.dir, 'other.json'),
    '--json',
  ]);
  assert.equal(again.code, 3, again.stderr);
  assert.match(again.stderr, /TASK_ALREADY_CLAIMED/);
});

test('agent-task claim with an existing --out file is refused before anything is claimed; the file is unchanged', async (t) => {
  const ev = makeEvidence(t);
  const out = join(ev.dir, 'exists.json');
  writeFileSync(out, 'keep');
  const refused = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'agent-task',
    'claim',
    '--profile',
    ev.profileId,
    '--change',
    CHANGE_ID,
    '--context',
    ev.store.contextDigest,
    '--token-file',
    ev.tokenFile,
    '--out',
    out,
  ]);
  assert.equal(refused.code, 4, refused.stderr);
  assert.match(refused.stderr, /IO_ERROR.*never overwritten/);
  assert.equal(readFileSync(out, 'utf8'), 'keep');
  assert.equal(claim(ev).attempt.fence, 1n);
});

test('collector_claim is refused, changing nothing, when the registration was revoked or the profile is not installed', (t) => {
  const ev = makeEvidence(t);
  revoke(ev.store, ev.enrollment.registration_id);
  assert.equal(
    codeOf(() => claim(ev)),
    'REGISTRATION_NOT_CURRENT',
  );
  const other = makeEvidence(t);
  assert.equal(
    codeOf(() => claim({ ...other, profileId: 'f'.repeat(64) })),
    'COLLECTOR_PROFILE_NOT_FOUND',
  );
  // Nothing was retained: a claim on the second store works.
  assert.equal(claim(other).attempt.fence, 1n);
});

test('collector_descriptor of an attempt that was never collector-claimed is COLLECTOR_ATTEMPT_NOT_FOUND', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  assert.equal(
    codeOf(() =>
      callWithTokenFile({
        store: openStore(ev.store.dataDir, { mode: 'write' }),
        tokenFile: ev.tokenFile,
        operation: 'collector_descriptor',
        input: Buffer.from(
          JSON.stringify({ version: 1, agent: ALICE, task_id: descriptor.task.task_id, attempt_id: 'a-nope' }),
        ),
        profile: PROFILE,
        target: 'main',
      }),
    ),
    'COLLECTOR_ATTEMPT_NOT_FOUND',
  );
});

test('a collector-claimed attempt is never finished by a result assertion: COLLECTOR_ATTEMPT_RESULT_REFUSED, and its transfer still imports', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const claimed = {
    task_id: descriptor.task.task_id,
    task_digest: descriptor.task.task_digest,
    attempt: {},
    attempt_id: descriptor.attempt.attempt_id,
    attempt_digest: descriptor.attempt.attempt_digest,
    execution_operation_id: descriptor.attempt.execution_operation_id,
    fence: descriptor.attempt.fence,
    executor: null,
  };
  const result = (outcome: 'passed' | 'failed') => () =>
    callWithTokenFile({
      store: openStore(ev.store.dataDir, { mode: 'write' }),
      tokenFile: ev.tokenFile,
      operation: 'result',
      input: encodeCanonical(assertionRequest(ALICE, claimed, `r-${outcome}`, outcome)),
      profile: PROFILE,
      target: 'main',
    });
  assert.equal(codeOf(result('failed')), 'COLLECTOR_ATTEMPT_RESULT_REFUSED');
  assert.equal(codeOf(result('passed')), 'COLLECTOR_ATTEMPT_RESULT_REFUSED');
  assert.equal(
    withStore(ev.store.dataDir, 'write', (held) =>
      importCollectorTransfer(held, envelopeOf(ev.key, transferParts(descriptor)), authorization(ev)),
    ).status,
    'imported',
  );
});

test('collector_claim through the facade: an identical retry answers the same descriptor; the request id cannot be reused for a plain claim; a profile for another step does not fit the task', (t) => {
  const ev = makeEvidence(t, DEFAULT_STEPS);
  const call = (operation: string, input: JsonObject) =>
    callWithTokenFile({
      store: openStore(ev.store.dataDir, { mode: 'write' }),
      tokenFile: ev.tokenFile,
      operation,
      input: encodeCanonical(input),
      profile: PROFILE,
      target: 'main',
      subject: { change_id: CHANGE_ID, context_digest: ev.store.contextDigest },
    }) as JsonObject;
  const requirements = callWithTokenFile({
    store: openStore(ev.store.dataDir, { mode: 'write' }),
    tokenFile: ev.tokenFile,
    operation: 'requirements',
    input: null,
    profile: PROFILE,
    target: 'main',
    subject: { change_id: CHANGE_ID, context_digest: ev.store.contextDigest },
  }) as JsonObject;
  const rows = requirements.tasks as JsonObject[];
  const row = (step: string) => rows.find((r) => r.step_id === step) as JsonObject;
  const request = (step: string, requestId: string): JsonObject => ({
    version: 1,
    request_id: requestId,
    agent: { ...ALICE },
    collector_profile_id: ev.profileId,
    task_id: row(step).task_id as string,
    task_digest: row(step).task_digest as string,
    execution_operation_id: `x-${requestId}`,
    requested_lease_ms: 60_000,
  });
  assert.equal(
    codeOf(() => call('collector_claim', request('lint', 'r-lint'))),
    'COLLECTOR_CLAIM_PROFILE_MISMATCH',
  );
  const first = call('collector_claim', request('unit', 'r-unit'));
  const again = call('collector_claim', request('unit', 'r-unit'));
  assert.deepEqual(encodeCanonical(again), encodeCanonical(first));
  const plain: JsonObject = {
    version: 1,
    request_id: 'r-unit',
    task_id: row('lint').task_id as string,
    task_digest: row('lint').task_digest as string,
    execution_operation_id: 'x-plain',
    agent: { ...ALICE },
    executor: null,
    requested_lease_ms: 60_000,
  };
  assert.equal(
    codeOf(() => call('claim', plain)),
    'TASK_REQUEST_CONFLICT',
  );
});
