/**
 * A long-lived session (one Store kept open, as the hub and the benchmark use it) remembers the
 * subjects it found current under the authority connection's content token
 * (docs/agent-tasks.md "Rechecks"). These tests commit to the authority between facade calls —
 * through another connection and through the session's own one — and check that every recheck
 * still sees the change.
 */
import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { bumpPolicyEpoch } from '../../src/native/policy.js';
import { contentToken } from '../../src/native/sqlite.js';
import { openAuthority } from '../../src/native/store.js';
import { trustedLocalGuard, type TaskContext, type TaskGuard, type TaskOperation } from '../../src/tasks/context.js';
import { openStore, type Store } from '../../src/tasks/store.js';
import { tempDir } from '../helpers/tmp.js';
import {
  assertionRequest,
  call,
  claimedOf,
  claimRequest,
  mutationRequest,
  statusRequest,
  taskRef,
} from '../support/task-requests.js';
import {
  bumpPolicy,
  checkpoint,
  context,
  enroll,
  FakeClock,
  makeTaskStore,
  revoke,
  type TaskStore,
} from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };

function session(
  t: TestContext,
  guard: TaskGuard = trustedLocalGuard,
): { store: TaskStore; clock: FakeClock; connections: Store; ctx: () => TaskContext } {
  const store = makeTaskStore(tempDir(t));
  const clock = new FakeClock();
  const connections = openStore(store.dataDir, { mode: 'write' });
  t.after(() => connections.close());
  // Rebuilt per call: a checkpoint gives the store a new context digest.
  return { store, clock, connections, ctx: () => ({ ...context(store, ALICE, clock, guard), store: connections }) };
}

function errorOf(fn: () => unknown): { code: string; details?: Record<string, unknown> } {
  try {
    fn();
  } catch (error) {
    return error as { code: string; details?: Record<string, unknown> };
  }
  return { code: 'no error' };
}

test("content token: changes on another connection's commit and on this connection's own row changes, and holds within one snapshot", (t) => {
  const store = makeTaskStore(tempDir(t));
  const mine = openAuthority(store.dataDir, { mode: 'write' });
  t.after(() => mine.close());
  const first = contentToken(mine.db);
  assert.equal(contentToken(mine.db), first);
  bumpPolicy(store);
  const afterOther = contentToken(mine.db);
  assert.notEqual(afterOther, first);
  bumpPolicyEpoch(mine, store.repository);
  const afterOwn = contentToken(mine.db);
  assert.notEqual(afterOwn, afterOther);
  mine.db.exec('BEGIN');
  try {
    assert.equal(contentToken(mine.db), afterOwn);
    bumpPolicy(store);
    // Same snapshot: the other connection's commit is not visible yet.
    assert.equal(contentToken(mine.db), afterOwn);
  } finally {
    mine.db.exec('COMMIT');
  }
  assert.notEqual(contentToken(mine.db), afterOwn);
});

test('session: a policy bump by another connection makes the remembered subject stale for heartbeat, result, status and requirements', (t) => {
  const { store, ctx } = session(t);
  const requirements = call(ctx(), 'requirements');
  const claimed = claimedOf(call(ctx(), 'claim', claimRequest(ALICE, taskRef(requirements, 'lint'), 'c-1', 'op-1')));
  assert.equal(call(ctx(), 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-1')).status, 'renewed');
  assert.equal((call(ctx(), 'status', statusRequest(claimed)).applicability as JsonObject).subject_current, true);
  bumpPolicy(store);
  const heartbeat = errorOf(() => call(ctx(), 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-2')));
  assert.equal(heartbeat.code, 'TASK_STALE');
  assert.equal(heartbeat.details?.field, 'policy_epoch');
  assert.equal(errorOf(() => call(ctx(), 'result', assertionRequest(ALICE, claimed, 'r-1'))).code, 'TASK_STALE');
  assert.equal((call(ctx(), 'status', statusRequest(claimed)).applicability as JsonObject).subject_current, false);
  assert.equal(errorOf(() => call(ctx(), 'requirements')).code, 'TASK_STALE');
  // The identical committed heartbeat still returns its retained outcome.
  assert.equal(call(ctx(), 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-1')).status, 'renewed');
});

test('session: a new Change version by another connection is seen by the next derivation and the old subject is stale', (t) => {
  const { store, ctx } = session(t);
  const before = call(ctx(), 'requirements');
  const claimed = claimedOf(call(ctx(), 'claim', claimRequest(ALICE, taskRef(before, 'lint'), 'c-1', 'op-1')));
  const oldContext = ctx();
  checkpoint(store, store.revision);
  assert.equal(errorOf(() => call(oldContext, 'requirements')).code, 'TASK_STALE');
  const heartbeat = errorOf(() => call(ctx(), 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-1')));
  assert.equal(heartbeat.code, 'TASK_STALE');
  assert.equal(heartbeat.details?.field, 'change_version');
  const after = call(ctx(), 'requirements');
  assert.equal((after.subject as JsonObject).change_version, 2n);
  assert.notEqual(taskRef(after, 'lint').task_id, taskRef(before, 'lint').task_id);
});

test("session: a commit through the session's own authority connection is seen too", (t) => {
  const { store, connections, ctx } = session(t);
  const requirements = call(ctx(), 'requirements');
  const claimed = claimedOf(call(ctx(), 'claim', claimRequest(ALICE, taskRef(requirements, 'lint'), 'c-1', 'op-1')));
  assert.equal(call(ctx(), 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-1')).status, 'renewed');
  bumpPolicyEpoch(connections.authority(), store.repository);
  assert.equal(
    errorOf(() => call(ctx(), 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-2'))).code,
    'TASK_STALE',
  );
  assert.equal(errorOf(() => call(ctx(), 'result', assertionRequest(ALICE, claimed, 'r-1'))).code, 'TASK_STALE');
});

test("session: a commit between the claim's derivation and its transition is caught by the recheck inside the reservation", (t) => {
  let claims = 0;
  let bump: (() => void) | null = null;
  // The claim's guard runs twice: the exact-retry lookup, then the transition (after the
  // derivation). The policy moves on right before the transition's body.
  const guard: TaskGuard = <T>(_actor: AgentRef, operation: TaskOperation, body: () => T): T => {
    if (operation === 'claim' && ++claims === 2 && bump !== null) bump();
    return body();
  };
  const { store, ctx } = session(t, guard);
  bump = () => bumpPolicy(store);
  const requirements = call(ctx(), 'requirements');
  const lint = taskRef(requirements, 'lint');
  const refused = errorOf(() => call(ctx(), 'claim', claimRequest(ALICE, lint, 'c-1', 'op-1')));
  assert.equal(refused.code, 'TASK_STALE');
  assert.equal(refused.details?.field, 'policy_epoch');
  // Nothing was retained: the task is still pending for a derivation of the current subject.
  checkpoint(store, store.revision);
  const current = call(ctx(), 'requirements');
  assert.deepEqual(
    (current.tasks as JsonObject[]).map((row) => row.state),
    ['controller_only', 'pending', 'pending', 'controller_only'],
  );
});

test('session: a revoked enrollment is refused on the next heartbeat even while the subject is current', (t) => {
  const { store, ctx } = session(t);
  const executor = enroll(store, 'lint');
  const requirements = call(ctx(), 'requirements');
  const claimed = claimedOf(
    call(ctx(), 'claim', claimRequest(ALICE, taskRef(requirements, 'lint'), 'c-1', 'op-1', { executor })),
  );
  assert.equal(call(ctx(), 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-1')).status, 'renewed');
  revoke(store, executor.enrollment.registration_id);
  assert.equal(
    errorOf(() => call(ctx(), 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-2'))).code,
    'REGISTRATION_NOT_CURRENT',
  );
});
