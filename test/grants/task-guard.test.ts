/**
 * Task operations run as the actor of a live grant (docs/grants.md "Task operations under a
 * grant"): the token file selects the actor and repository, request JSON never does, and a
 * revocation or rotation serializes with every transition — committed before the transition's
 * native writer reservation it refuses the transition (GRANT_NOT_LIVE, nothing retained);
 * started while the reservation is held it waits for the journal commit.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { revokeGrant, rotateGrant } from '../../src/native/grants.js';
import { createRepository } from '../../src/native/repositories.js';
import { openAuthority, writeTransaction } from '../../src/native/store.js';
import type { TaskContext, TaskGuard } from '../../src/tasks/context.js';
import { authorizeTaskToken } from '../../src/tasks/grant-guard.js';
import { openStore } from '../../src/tasks/store.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { makeGrant } from '../support/grants.js';
import { call, claimedOf, claimRequest, statusRequest, taskRef } from '../support/task-requests.js';
import { CHANGE_ID, context, FakeClock, makeTaskStore, PROFILE, type TaskStore } from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };
const HOUR = 3_600_000n;

function withAuthority<T>(dataDir: string, fn: (auth: ReturnType<typeof openAuthority>) => T): T {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    return fn(auth);
  } finally {
    auth.close();
  }
}

/** The context the CLI builds from a token: the grant's actor, repository, guard and origin. */
function grantContext(
  store: TaskStore,
  tokenFile: string,
  clock: FakeClock,
  wrap: (guard: TaskGuard) => TaskGuard = (g) => g,
): TaskContext {
  const authorization = authorizeTaskToken({
    store: openStore(store.dataDir, { mode: 'write' }),
    token: readTokenFile(tokenFile),
  });
  return {
    store: openStore(store.dataDir, { mode: 'write' }),
    actor: authorization.actor,
    repository: authorization.repository,
    profile: PROFILE,
    target: 'main',
    subject: { change_id: CHANGE_ID, context_digest: store.contextDigest },
    guard: wrap(authorization.guard),
    origin: authorization.origin,
    now: clock.now,
  };
}

/** A guard that runs `act` once, on its `n`th entry, after the grant guard authorized it and before its body. */
function actOnEntry(n: number, act: () => void): (guard: TaskGuard) => TaskGuard {
  let entries = 0;
  return (guard) =>
    <T>(actor: AgentRef, operation: Parameters<TaskGuard>[1], body: () => T): T =>
      guard(actor, operation, () => {
        entries += 1;
        if (entries === n) act();
        return body();
      });
}

test('a grant revoked or rotated after authorization and before the native reservation refuses the transition and retains nothing', (t) => {
  for (const change of ['revoke', 'rotate'] as const) {
    const dir = tempDir(t);
    const store = makeTaskStore(dir);
    const clock = new FakeClock();
    const granted = makeGrant(dir, dir, ALICE);
    const trusted = context(store, ALICE, clock);
    const task = taskRef(call(trusted, 'requirements'), 'lint');
    // claim enters the guard three times: retry lookup, precheck, transition. The grant changes
    // on the third entry, after its authentication: only the recheck inside the reservation sees it.
    const ctx = grantContext(
      store,
      granted.token_file,
      clock,
      actOnEntry(3, () => {
        withAuthority(dir, (auth) =>
          change === 'revoke'
            ? revokeGrant(auth, granted.grant.grant_id, 1)
            : rotateGrant(auth, granted.grant.grant_id, join(dir, 'rotated.token'), 1),
        );
      }),
    );
    assert.equal(
      codeOf(() => call(ctx, 'claim', claimRequest(ALICE, task, 'claim-1', 'op-1', { leaseMs: HOUR }))),
      'GRANT_NOT_LIVE',
      change,
    );
    const row = (call(trusted, 'requirements').tasks as JsonObject[]).find((r) => r.task_id === task.task_id);
    assert.equal(row?.state, 'pending', `${change}: no attempt was retained`);
    assert.equal(row?.attempt_id, null);
  }
});

test('the token selects actor and repository: another actor in the request, a reader grant, another repository and a dead token are refused', (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const clock = new FakeClock();
  const alice = makeGrant(dir, dir, ALICE);
  const ctx = grantContext(store, alice.token_file, clock);
  assert.deepEqual(ctx.actor, ALICE);
  assert.equal(ctx.repository, store.repository);
  const task = taskRef(call(ctx, 'requirements'), 'lint');
  // The request names bob: request JSON never selects the actor.
  assert.equal(
    codeOf(() => call(ctx, 'claim', claimRequest({ owner_id: 'bob', agent_id: 'b1' }, task, 'claim-b', 'op-b'))),
    'TASK_ACTOR_MISMATCH',
  );
  const claimed = claimedOf(call(ctx, 'claim', claimRequest(ALICE, task, 'claim-1', 'op-1', { leaseMs: HOUR })));
  assert.equal(call(ctx, 'status', statusRequest(claimed)).state, 'leased');
  // A reader grant runs no task operation.
  const reader = makeGrant(dir, dir, ALICE, { scope: 'reader' });
  assert.equal(
    codeOf(() =>
      authorizeTaskToken({ store: openStore(dir, { mode: 'write' }), token: readTokenFile(reader.token_file) }),
    ),
    'TASK_NOT_AUTHORIZED',
  );
  // A grant for another repository of the store: neither that repository's name nor the
  // retained tasks of this one are open to it.
  withAuthority(dir, (auth) => writeTransaction(auth, () => createRepository(auth, 'other')));
  const other = makeGrant(dir, dir, ALICE, { repository: 'other' });
  assert.equal(
    codeOf(() =>
      authorizeTaskToken({
        store: openStore(dir, { mode: 'write' }),
        token: readTokenFile(other.token_file),
        repository: 'demo',
      }),
    ),
    'TASK_NOT_AUTHORIZED',
  );
  const otherCtx = grantContext(store, other.token_file, clock);
  assert.equal(
    codeOf(() => call(otherCtx, 'status', statusRequest(claimed))),
    'TASK_NOT_AUTHORIZED',
  );
  assert.equal(
    codeOf(() =>
      call(otherCtx, 'heartbeat', {
        version: 1,
        request_id: 'hb-x',
        action: 'heartbeat',
        task_id: claimed.task_id,
        task_digest: claimed.task_digest,
        attempt_id: claimed.attempt_id,
        attempt_digest: claimed.attempt_digest,
        execution_operation_id: 'op-1',
        agent: { owner_id: 'alice', agent_id: 'a1' },
        executor: null,
        fence: claimed.fence,
        reason: null,
      }),
    ),
    'TASK_NOT_AUTHORIZED',
  );
  // Revoked: the next guard entry refuses the token itself.
  withAuthority(dir, (auth) => revokeGrant(auth, alice.grant.grant_id, 2));
  assert.equal(
    codeOf(() => call(ctx, 'status', statusRequest(claimed))),
    'GRANT_TOKEN_REJECTED',
  );
  assert.equal(
    codeOf(() =>
      authorizeTaskToken({ store: openStore(dir, { mode: 'write' }), token: readTokenFile(alice.token_file) }),
    ),
    'GRANT_TOKEN_REJECTED',
  );
});

function writeJson(dir: string, name: string, value: JsonValue): string {
  const file = join(dir, name);
  writeFileSync(file, formatJson(value));
  return file;
}

function withoutDataDir(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.AGENTSCM_DATA_DIR;
  return copy;
}

function spawnCli(
  args: readonly string[],
  env: Record<string, string>,
): { child: ChildProcess; stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
    cwd: REPO_ROOT,
    env: { ...withoutDataDir(process.env), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function until(what: string, check: () => boolean, context: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('agent-task call --token-file: a revocation before the reservation refuses the claim; one during it waits for the commit', async (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const trusted = context(store, ALICE, new FakeClock());
  const lint = taskRef(call(trusted, 'requirements'), 'lint');
  const subject = ['--change', CHANGE_ID, '--context', store.contextDigest];

  // 1. Revoked while the claim waits before its native reservation: GRANT_NOT_LIVE, exit 3.
  const first = makeGrant(dir, dir, ALICE);
  const resume1 = join(dir, 'resume-1');
  const claim1 = spawnCli(
    [
      '--data-dir',
      dir,
      'agent-task',
      'call',
      'claim',
      '--token-file',
      first.token_file,
      ...subject,
      '--input',
      writeJson(dir, 'claim-1.json', claimRequest(ALICE, lint, 'claim-1', 'op-1', { leaseMs: HOUR })),
      '--json',
    ],
    { AGENTSCM_TEST_PAUSE_AT: 'task:before-native-reservation', AGENTSCM_TEST_PAUSE_RESUME_FILE: resume1 },
  );
  await until(
    'the claim to pause',
    () => claim1.stderr().includes('agentscm-test-paused:task:before-native-reservation'),
    () => claim1.stderr() + claim1.stdout(),
  );
  const revoke1 = await runCli(['--data-dir', dir, 'grant', 'revoke', first.grant.grant_id, '--json']);
  assert.equal(revoke1.code, 0, revoke1.stderr);
  writeFileSync(resume1, '');
  assert.equal(await claim1.exit, 3, claim1.stderr());
  assert.equal((JSON.parse(claim1.stdout()) as { error: { code: string } }).error.code, 'GRANT_NOT_LIVE');
  assert.equal(
    (call(trusted, 'requirements').tasks as JsonObject[]).find((r) => r.task_id === lint.task_id)?.state,
    'pending',
  );

  // 2. Revoked while the claim holds its reservation: the revocation waits, the claim commits,
  // then the revocation commits and the token is dead.
  const second = makeGrant(dir, dir, ALICE);
  const resume2 = join(dir, 'resume-2');
  const claim2 = spawnCli(
    [
      '--data-dir',
      dir,
      'agent-task',
      'call',
      'claim',
      '--token-file',
      second.token_file,
      ...subject,
      '--input',
      writeJson(dir, 'claim-2.json', claimRequest(ALICE, lint, 'claim-2', 'op-2', { leaseMs: HOUR })),
      '--json',
    ],
    { AGENTSCM_TEST_PAUSE_AT: 'task:in-native-reservation', AGENTSCM_TEST_PAUSE_RESUME_FILE: resume2 },
  );
  await until(
    'the claim to pause',
    () => claim2.stderr().includes('agentscm-test-paused:task:in-native-reservation'),
    () => claim2.stderr() + claim2.stdout(),
  );
  const revoke2 = spawnCli(['--data-dir', dir, 'grant', 'revoke', second.grant.grant_id, '--json'], {});
  let revokeDone = false;
  void revoke2.exit.then(() => (revokeDone = true));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(revokeDone, false, 'the revocation waits for the reservation');
  writeFileSync(resume2, '');
  assert.equal(await claim2.exit, 0, claim2.stderr());
  assert.equal((JSON.parse(claim2.stdout()) as { status: string }).status, 'claimed');
  assert.equal(await revoke2.exit, 0, revoke2.stderr());
  const after = await runCli([
    '--data-dir',
    dir,
    'agent-task',
    'call',
    'capabilities',
    '--token-file',
    second.token_file,
    '--json',
  ]);
  assert.equal(after.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(after).error.code, 'GRANT_TOKEN_REJECTED');
});
