/**
 * The phase-two state machine through the facade on real SQLite files: derivation, every
 * transition and refusal, lease expiry on a fake clock, supersession, stale subjects,
 * registered observations and revocation, and reads that never create the journal.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { REFERENCE_MAX_BYTES } from '../../src/contracts/named-reference.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { encodeTask, workflowTaskDecoder } from '../../src/contracts/task/task.js';
import { openAuthority } from '../../src/native/store.js';
import { refusingGuard, type TaskGuard, type TaskOperation } from '../../src/tasks/context.js';
import { JOURNAL_MIGRATIONS } from '../../src/tasks/store.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { openJournal } from '../support/journal.js';
import {
  assertionRequest,
  call,
  claimedOf,
  claimRequest,
  mutationRequest,
  observationRequest,
  statusRequest,
  taskRef,
} from '../support/task-requests.js';
import {
  addRevision,
  bumpPolicy,
  checkpoint,
  context,
  defaultFiles,
  enroll,
  FakeClock,
  makeTaskStore,
  NOTES_PATH,
  revoke,
  sha256,
  type TaskStore,
} from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };
const BOB: AgentRef = { owner_id: 'bob', agent_id: 'b1' };

function setup(
  t: TestContext,
  steps?: Parameters<typeof makeTaskStore>[1],
  files?: Parameters<typeof makeTaskStore>[2],
) {
  const dir = tempDir(t);
  const store = makeTaskStore(dir, steps, files);
  const clock = new FakeClock();
  const alice = context(store, ALICE, clock);
  const requirements = call(alice, 'requirements');
  return { dir, store, clock, alice, bob: context(store, BOB, clock), requirements };
}

/** bigint → number for comparisons of small values (the wire keeps u64 exact either way). */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));
}

function journalRows(store: TaskStore): boolean {
  return existsSync(journalPaths(store.dataDir).db);
}

test('derivation: one task per step with the fixed action-class rules, stable ids, every subject field bound', (t) => {
  const { store, alice, requirements } = setup(t);
  const tasks = requirements.tasks as JsonObject[];
  assert.deepEqual(
    tasks.map((row) => [row.step_id, row.action_kind, row.progression, row.required, row.state]),
    [
      ['paths', 'source_paths', 'none', true, 'controller_only'],
      ['unit', 'command', 'claim', true, 'pending'],
      ['lint', 'command', 'claim', true, 'pending'],
      ['cap', 'require_capability', 'none', false, 'controller_only'],
    ],
  );
  const subject = requirements.subject as JsonObject;
  assert.equal(subject.change_id, 'change-1');
  assert.equal(subject.context_digest, store.contextDigest);
  assert.equal(subject.revision, store.revision);
  // Deterministic: the same subject names the same tasks.
  assert.deepEqual(call(alice, 'requirements'), requirements);
  // Every entrypoint carries its criteria inline; controller-only criteria are marked.
  for (const row of tasks) {
    const answer = call(alice, 'instructions', {
      version: 1,
      task_id: row.task_id as string,
      supported_schema_versions: [1],
    });
    const entrypoint = answer.entrypoint as JsonObject;
    const criteria = entrypoint.criteria as JsonObject[];
    assert.equal(criteria.length, 1);
    // The criterion is required of its task whatever the step's graph status (row.required).
    assert.equal(criteria[0]?.required, true);
    assert.equal(criteria[0]?.controller_only, row.progression === 'none');
    assert.equal(entrypoint.policy_digest, subject.requirement_digest);
    assert.equal(entrypoint.workflow_digest, subject.plan_digest);
    const names = (entrypoint.references as JsonObject[]).map((r) => r.name);
    assert.deepEqual(
      names,
      row.action_kind === 'command' ? ['skill', 'recipe', 'resource-2'] : ['skill', 'resource-1', 'resource-2'],
    );
  }
  // A changed bound input (policy epoch; then a new Change version) gives new task ids and digests.
  bumpPolicy(store);
  assert.equal(
    codeOf(() => call(alice, 'requirements')),
    'TASK_STALE',
  );
  checkpoint(store, store.revision);
  const moved = call(context(store, ALICE, new FakeClock()), 'requirements');
  const before = new Set(tasks.map((row) => row.task_digest));
  for (const row of moved.tasks as JsonObject[]) assert.ok(!before.has(row.task_digest));
  assert.notDeepEqual(
    (moved.tasks as JsonObject[]).map((row) => row.task_id),
    tasks.map((row) => row.task_id),
  );
});

test('reads never create a missing journal', (t) => {
  const { store, alice, requirements } = setup(t);
  const unit = taskRef(requirements, 'unit');
  call(alice, 'next');
  call(alice, 'capabilities');
  call(alice, 'instructions', { version: 1, task_id: unit.task_id, supported_schema_versions: [1] });
  call(alice, 'reference', {
    version: 1,
    task_id: unit.task_id,
    task_digest: unit.task_digest,
    name: 'skill',
    expected_sha256: sha256(defaultFiles()['skills/check/SKILL.md'] ?? ''),
    expected_schema_version: 1,
    agent: { owner_id: 'alice', agent_id: 'a1' },
  });
  const fakeAttempt = {
    version: 1,
    task_id: unit.task_id,
    task_digest: unit.task_digest,
    attempt_id: 'a-x',
    attempt_digest: 'a'.repeat(64),
  };
  assert.equal(
    codeOf(() => call(alice, 'status', fakeAttempt)),
    'WORKFLOW_JOURNAL_NOT_INITIALIZED',
  );
  const recovery = call(alice, 'recovery', {
    version: 1,
    request_kind: 'claim',
    request: claimRequest(ALICE, unit, 'r1', 'op-1'),
  });
  assert.equal(recovery.observed_state, 'pending');
  assert.equal(recovery.disposition, 'conclusive_rejection');
  assert.equal(journalRows(store), false);
  // The first transition creates it.
  call(alice, 'claim', claimRequest(ALICE, unit, 'r1', 'op-1'));
  assert.equal(journalRows(store), true);
});

test('claim, heartbeat, status and an agent assertion retained as nonpassing', (t) => {
  const { alice, bob, clock, requirements } = setup(t);
  const unit = taskRef(requirements, 'unit');
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, unit, 'claim-1', 'op-1', { leaseMs: 1000n })));
  assert.equal(claimed.fence, 1n);
  assert.equal(BigInt(claimed.attempt.lease_ms as number), 1000n);
  assert.equal(claimed.attempt.claim_request_id, 'claim-1');
  // Claims serialize per task: a second claim of the same task is refused while one is current.
  assert.equal(
    codeOf(() => call(bob, 'claim', claimRequest(BOB, unit, 'claim-b', 'op-b'))),
    'TASK_ALREADY_CLAIMED',
  );
  let status = call(alice, 'status', statusRequest(claimed));
  assert.equal(status.state, 'leased');
  assert.equal(status.currently_applicable, true);
  clock.advance(900);
  const renewed = call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'hb-1'));
  assert.equal(renewed.lease_expires_at_ms, clock.ms + 1000);
  clock.advance(900);
  assert.equal(call(alice, 'status', statusRequest(claimed)).state, 'leased');
  // Only the holder heartbeats or reports.
  assert.equal(
    codeOf(() => call(bob, 'heartbeat', mutationRequest(BOB, claimed, 'heartbeat', 'hb-b'))),
    'TASK_ACTOR_MISMATCH',
  );
  assert.equal(
    codeOf(() => call(bob, 'result', assertionRequest(BOB, claimed, 'res-b'))),
    'TASK_ACTOR_MISMATCH',
  );
  // The request's actor must be the authenticated one.
  assert.equal(
    codeOf(() => call(alice, 'heartbeat', mutationRequest(BOB, claimed, 'heartbeat', 'hb-x'))),
    'TASK_ACTOR_MISMATCH',
  );
  // A passed agent assertion is still retained as nonpassing material.
  const retained = call(alice, 'result', assertionRequest(ALICE, claimed, 'res-1', 'passed'));
  assert.equal(retained.status, 'retained');
  assert.equal(retained.qualifying, false);
  assert.equal(retained.trust_class, 'agent_assertion');
  status = call(alice, 'status', statusRequest(claimed));
  assert.equal(status.state, 'finished');
  assert.equal(status.currently_applicable, false);
  assert.equal((status.assertion as JsonObject).qualifying, false);
  assert.equal((status.assertion as JsonObject).observation_valid, null);
  // A finished attempt takes no more mutations and the task cannot be claimed again.
  assert.equal(
    codeOf(() => call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'hb-2'))),
    'TASK_ATTEMPT_NOT_ACTIVE',
  );
  assert.equal(
    codeOf(() => call(alice, 'cancel', mutationRequest(ALICE, claimed, 'cancel', 'c-1'))),
    'TASK_ATTEMPT_NOT_ACTIVE',
  );
  assert.equal(
    codeOf(() => call(alice, 'reconcile', mutationRequest(ALICE, claimed, 'reconcile', 'rc-1'))),
    'TASK_ATTEMPT_NOT_ACTIVE',
  );
  assert.equal(
    codeOf(() => call(alice, 'result', assertionRequest(ALICE, claimed, 'res-2'))),
    'TASK_ATTEMPT_NOT_ACTIVE',
  );
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, unit, 'claim-2', 'op-2'))),
    'TASK_ALREADY_CLAIMED',
  );
});

test('controller-only tasks are never claimable; bad bindings are refused', (t) => {
  const { alice, requirements } = setup(t);
  for (const step of ['paths', 'cap']) {
    assert.equal(
      codeOf(() => call(alice, 'claim', claimRequest(ALICE, taskRef(requirements, step), `c-${step}`, 'op'))),
      'TASK_CONTROLLER_ONLY',
    );
  }
  // An observation-only (registered executor) claim of a controller-only step is refused too.
  const unit = taskRef(requirements, 'unit');
  assert.equal(
    codeOf(() =>
      call(alice, 'claim', {
        ...claimRequest(ALICE, taskRef(requirements, 'paths'), 'c-px', 'op'),
        executor: {
          registration_id: 'reg-1',
          executor_id: 'box',
          registration_epoch: 1n,
          verification_key_id: 'a'.repeat(64),
        },
      }),
    ),
    'TASK_CONTROLLER_ONLY',
  );
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, { ...unit, task_digest: 'f'.repeat(64) }, 'c-d', 'op'))),
    'TASK_STALE',
  );
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, { ...unit, task_id: 't-unknown' }, 'c-u', 'op'))),
    'TASK_NOT_FOUND',
  );
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, unit, 'c-l', 'op', { leaseMs: 0n }))),
    'SCHEMA_BOUND',
  );
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, unit, 'c-1', 'op-1')));
  assert.equal(
    codeOf(() => call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h1', { fence: 2n }))),
    'TASK_FENCE_STALE',
  );
  assert.equal(
    codeOf(() =>
      call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h2', { execution_operation_id: 'other' })),
    ),
    'TASK_BINDING_MISMATCH',
  );
  assert.equal(
    codeOf(() =>
      call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h3', { attempt_digest: 'e'.repeat(64) })),
    ),
    'TASK_BINDING_MISMATCH',
  );
  assert.equal(
    codeOf(() =>
      call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h4', { attempt_id: 'a-none' })),
    ),
    'TASK_ATTEMPT_NOT_FOUND',
  );
  assert.equal(
    codeOf(() => call(alice, 'cancel', mutationRequest(ALICE, claimed, 'heartbeat', 'h5'))),
    'TASK_BINDING_MISMATCH',
  );
  // Task-aware result validation: omitted, unknown criteria and an ineligible pass.
  assert.equal(
    codeOf(() =>
      call(
        alice,
        'result',
        assertionRequest(ALICE, claimed, 'r1', 'failed', [
          { criterion: 'other', outcome: 'failed', findings: [], evidence_digests: [] },
        ]),
      ),
    ),
    'CRITERION_UNKNOWN',
  );
  assert.equal(
    codeOf(() =>
      call(
        alice,
        'result',
        assertionRequest(ALICE, claimed, 'r2', 'passed', [
          { criterion: 'command', outcome: 'failed', findings: [], evidence_digests: [] },
        ]),
      ),
    ),
    'ASSERTION_PASS_INELIGIBLE',
  );
  assert.equal(call(alice, 'status', statusRequest(claimed)).state, 'leased');
});

test('an expired lease stays uncertain until reconciled; old-fence heartbeat and result are refused after supersession', (t) => {
  const { alice, bob, clock, requirements } = setup(t);
  const unit = taskRef(requirements, 'unit');
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, unit, 'claim-1', 'op-1', { leaseMs: 1000n })));
  clock.advance(1000);
  let status = call(alice, 'status', statusRequest(claimed));
  assert.equal(status.state, 'expired');
  assert.equal(status.execution_uncertain, true);
  assert.equal(status.currently_applicable, false);
  // Expiry is not termination: nothing supersedes the attempt until an explicit reconcile.
  clock.advance(3_600_000);
  assert.equal(call(alice, 'status', statusRequest(claimed)).state, 'expired');
  assert.equal(
    codeOf(() => call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'hb'))),
    'TASK_LEASE_EXPIRED',
  );
  assert.equal(
    codeOf(() => call(alice, 'result', assertionRequest(ALICE, claimed, 'res'))),
    'TASK_LEASE_EXPIRED',
  );
  assert.equal(
    codeOf(() => call(bob, 'claim', claimRequest(BOB, unit, 'claim-b', 'op-b'))),
    'TASK_ALREADY_CLAIMED',
  );
  assert.deepEqual(call(alice, 'next').next, {
    operation: 'reconcile',
    task_id: unit.task_id,
    reason: 'attempt_expired',
  });
  // Any authorized actor may reconcile: it records the old and a strictly greater new fence.
  const reconciled = call(bob, 'reconcile', mutationRequest(BOB, claimed, 'reconcile', 'rc-1'));
  assert.deepEqual(plain(reconciled.supersession), { old_fence: 1, new_fence: 2 });
  status = call(alice, 'status', statusRequest(claimed));
  assert.equal(status.state, 'replaced');
  assert.equal(status.execution_uncertain, true);
  assert.deepEqual(plain(status.supersession), { old_fence: 1, new_fence: 2 });
  assert.equal(
    codeOf(() => call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'hb-2'))),
    'TASK_FENCE_STALE',
  );
  assert.equal(
    codeOf(() => call(alice, 'result', assertionRequest(ALICE, claimed, 'res-2'))),
    'TASK_FENCE_STALE',
  );
  assert.equal(
    codeOf(() => call(alice, 'cancel', mutationRequest(ALICE, claimed, 'cancel', 'c-2'))),
    'TASK_FENCE_STALE',
  );
  assert.equal(
    codeOf(() => call(bob, 'reconcile', mutationRequest(BOB, claimed, 'reconcile', 'rc-2'))),
    'TASK_FENCE_STALE',
  );
  // A replacement needs a fresh execution identity and gets a fence above the reserved one.
  assert.equal(
    codeOf(() => call(bob, 'claim', claimRequest(BOB, unit, 'claim-b2', 'op-1'))),
    'TASK_EXECUTION_ID_REUSED',
  );
  const fresh = claimedOf(call(bob, 'claim', claimRequest(BOB, unit, 'claim-b3', 'op-2')));
  assert.equal(fresh.fence, 3n);
  // The late old-fence result cannot finish the replacement.
  assert.equal(
    codeOf(() => call(alice, 'result', assertionRequest(ALICE, claimed, 'res-3'))),
    'TASK_FENCE_STALE',
  );
  assert.equal(call(bob, 'status', statusRequest(fresh)).state, 'leased');
});

test('cancel leaves execution uncertain until reconcile; then a fresh claim', (t) => {
  const { alice, requirements } = setup(t);
  const lint = taskRef(requirements, 'lint');
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, lint, 'claim-1', 'op-1')));
  const cancelled = call(alice, 'cancel', mutationRequest(ALICE, claimed, 'cancel', 'c-1'));
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.execution_uncertain, true);
  assert.equal(call(alice, 'status', statusRequest(claimed)).state, 'cancelled');
  assert.equal(
    codeOf(() => call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-1'))),
    'TASK_ATTEMPT_NOT_ACTIVE',
  );
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, lint, 'claim-2', 'op-2'))),
    'TASK_ALREADY_CLAIMED',
  );
  call(alice, 'reconcile', mutationRequest(ALICE, claimed, 'reconcile', 'rc-1'));
  assert.equal(claimedOf(call(alice, 'claim', claimRequest(ALICE, lint, 'claim-3', 'op-3'))).fence, 3n);
});

test('a stale subject: claims and heartbeats refused, status still reads, an unresolved older subject blocks a fresh claim until reconciled', (t) => {
  const { dir, store, alice, clock, requirements } = setup(t);
  const unit = taskRef(requirements, 'unit');
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, unit, 'claim-1', 'op-1')));
  const next = addRevision(dir, store.repository, defaultFiles({ 'b.txt': 'beta' }), store.revision);
  checkpoint(store, next);
  const current = context(store, ALICE, clock);
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, taskRef(requirements, 'lint'), 'claim-2', 'op-2'))),
    'TASK_STALE',
  );
  assert.equal(
    codeOf(() => call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'hb-1'))),
    'TASK_STALE',
  );
  assert.equal(
    codeOf(() => call(alice, 'result', assertionRequest(ALICE, claimed, 'res-1'))),
    'TASK_STALE',
  );
  const status = call(alice, 'status', statusRequest(claimed));
  assert.equal(status.state, 'leased');
  assert.equal(status.currently_applicable, false);
  assert.deepEqual(status.applicability, { subject_current: false, lease_live: true, registration_current: null });
  const newer = call(current, 'requirements');
  const newUnit = taskRef(newer, 'unit');
  assert.deepEqual(call(current, 'next').next, {
    operation: 'reconcile',
    task_id: unit.task_id,
    reason: 'prior_subject_unresolved',
  });
  assert.equal(
    codeOf(() => call(current, 'claim', claimRequest(ALICE, newUnit, 'claim-3', 'op-3'))),
    'TASK_PRIOR_SUBJECT_UNRESOLVED',
  );
  // Reconciliation of the stale attempt needs only authorization and the Change's existence.
  call(current, 'reconcile', mutationRequest(ALICE, claimed, 'reconcile', 'rc-1'));
  assert.equal(claimedOf(call(current, 'claim', claimRequest(ALICE, newUnit, 'claim-4', 'op-4'))).fence, 1n);
});

test('dependencies: a failed source_paths check blocks the dependent step', (t) => {
  const files = defaultFiles();
  const { alice, requirements } = setup(t, undefined, files);
  assert.equal((requirements.tasks as JsonObject[]).find((row) => row.step_id === 'unit')?.waiting_for, null);
  const t2 = tempDir(t);
  const broken = makeTaskStore(
    t2,
    [
      { id: 'paths', kind: 'source_paths' },
      { id: 'unit', kind: 'command', needs: ['paths'] },
    ],
    files,
  );
  void alice;
  // Recompute against a revision whose a.txt differs: install the requirement with a wrong expectation.
  const ctx = context(broken, ALICE, new FakeClock());
  const reqs = call(ctx, 'requirements');
  assert.equal((reqs.tasks as JsonObject[]).find((row) => row.step_id === 'unit')?.waiting_for, null);
  const next = addRevision(t2, broken.repository, { ...files, 'a.txt': 'changed' }, broken.revision);
  checkpoint(broken, next);
  const moved = context(broken, ALICE, new FakeClock());
  const blocked = call(moved, 'requirements');
  assert.equal((blocked.tasks as JsonObject[]).find((row) => row.step_id === 'unit')?.waiting_for, 'paths');
  assert.deepEqual(call(moved, 'next').next, { operation: 'none' });
  assert.equal(
    codeOf(() => call(moved, 'claim', claimRequest(ALICE, taskRef(blocked, 'unit'), 'c1', 'op1'))),
    'TASK_DEPENDENCY_INCOMPLETE',
  );
});

test('registered observations: exact binding, current enrollment and strict signature; revocation invalidates them and their dependency', (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir, [
    { id: 'lint', kind: 'command' },
    { id: 'deploy', kind: 'command', needs: ['lint'] },
  ]);
  const clock = new FakeClock();
  const alice = context(store, ALICE, clock);
  const requirements = call(alice, 'requirements');
  const lint = taskRef(requirements, 'lint');
  const executor = enroll(store, 'lint');
  // An agent assertion never completes a dependency; only a valid registered observation does.
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, taskRef(requirements, 'deploy'), 'd0', 'op-d0'))),
    'TASK_DEPENDENCY_INCOMPLETE',
  );
  const other = enroll(store, 'deploy', 'box-9');
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, lint, 'c0', 'op-0', { executor: other }))),
    'REGISTRATION_NOT_CURRENT',
  );
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, lint, 'c1', 'op-1', { executor })));
  // A tampered signature is refused and nothing is retained.
  const signed = observationRequest(ALICE, claimed, executor, 'obs-1');
  const provenance = signed.executor_provenance as JsonObject;
  const tampered = {
    ...signed,
    executor_provenance: {
      ...provenance,
      signature: `${(provenance.signature as string).startsWith('0') ? '1' : '0'}${(provenance.signature as string).slice(1)}`,
    },
  };
  assert.equal(
    codeOf(() => call(alice, 'result', tampered)),
    'SIGNATURE_INVALID',
  );
  assert.equal(call(alice, 'status', statusRequest(claimed)).state, 'leased');
  // Signed by another enrolled key than the binding names: refused.
  const foreign = observationRequest(
    ALICE,
    claimed,
    {
      ...executor,
      privateKey: other.privateKey,
      enrollment: { ...executor.enrollment, verification_key_id: other.enrollment.verification_key_id },
    },
    'obs-x',
  );
  assert.equal(
    codeOf(() => call(alice, 'result', foreign)),
    'TASK_BINDING_MISMATCH',
  );
  const retained = call(alice, 'result', signed);
  assert.equal(retained.trust_class, 'registered_executor_observation');
  assert.equal(retained.qualifying, false);
  assert.match(retained.observation_digest as string, /^[0-9a-f]{64}$/);
  let view = call(alice, 'status', statusRequest(claimed)).assertion as JsonObject;
  assert.equal(view.observation_valid, true);
  const deploy = taskRef(call(alice, 'requirements'), 'deploy');
  assert.deepEqual(call(alice, 'next').next, { operation: 'claim', ...deploy });
  revoke(store, executor.enrollment.registration_id);
  view = call(alice, 'status', statusRequest(claimed)).assertion as JsonObject;
  assert.equal(view.observation_valid, false);
  assert.equal(
    call(alice, 'status', statusRequest(claimed)).applicability &&
      (call(alice, 'status', statusRequest(claimed)).applicability as JsonObject).registration_current,
    false,
  );
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, deploy, 'd1', 'op-d1'))),
    'TASK_DEPENDENCY_INCOMPLETE',
  );
  // Re-enrollment does not rehabilitate the old observation.
  enroll(store, 'lint');
  assert.equal((call(alice, 'status', statusRequest(claimed)).assertion as JsonObject).observation_valid, false);
});

test('a claim and an observation under a revoked registration are refused', (t) => {
  const { store, alice, requirements } = setup(t);
  const lint = taskRef(requirements, 'lint');
  const executor = enroll(store, 'lint');
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, lint, 'c1', 'op-1', { executor })));
  revoke(store, executor.enrollment.registration_id);
  assert.equal(
    codeOf(() => call(alice, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h1'))),
    'REGISTRATION_NOT_CURRENT',
  );
  assert.equal(
    codeOf(() => call(alice, 'result', observationRequest(ALICE, claimed, executor, 'obs-1'))),
    'REGISTRATION_NOT_CURRENT',
  );
  // Cancellation and reconciliation still fence the attempt after revocation.
  call(alice, 'cancel', mutationRequest(ALICE, claimed, 'cancel', 'c-1'));
  call(alice, 'reconcile', mutationRequest(ALICE, claimed, 'reconcile', 'rc-1'));
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, lint, 'c2', 'op-2', { executor }))),
    'REGISTRATION_NOT_CURRENT',
  );
});

test('instructions and references: schema mismatch, every reference outcome, the 128 KiB bound at and past the limit', (t) => {
  const big = 'x'.repeat(REFERENCE_MAX_BYTES);
  const { alice, requirements } = setup(t, undefined, defaultFiles({ [NOTES_PATH]: big }));
  const unit = taskRef(requirements, 'unit');
  const mismatch = call(alice, 'instructions', {
    version: 1,
    task_id: unit.task_id,
    supported_schema_versions: [2, 3],
  });
  assert.equal(mismatch.status, 'schema_mismatch');
  assert.deepEqual(mismatch.supported_schema_versions, [2, 3]);
  assert.deepEqual(mismatch.server_schema_versions, [1]);
  const fetch = (name: string, expected: string, extra: JsonObject = {}) =>
    call(alice, 'reference', {
      version: 1,
      task_id: unit.task_id,
      task_digest: unit.task_digest,
      name,
      expected_sha256: expected,
      expected_schema_version: 1,
      agent: { owner_id: 'alice', agent_id: 'a1' },
      ...extra,
    });
  const notes = fetch('resource-2', sha256(big));
  assert.equal(notes.status, 'available');
  assert.equal(notes.byte_length, REFERENCE_MAX_BYTES);
  assert.equal(fetch('skill', sha256('nope')).status, 'denied');
  assert.equal(fetch('skill', sha256('nope')).code, 'digest_mismatch');
  assert.equal(fetch('nothing', sha256('x')).code, 'not_in_task');
  assert.equal(fetch('skill', sha256('x'), { task_digest: 'e'.repeat(64) }).code, 'subject_changed');
  assert.equal(fetch('skill', sha256('x'), { agent: { owner_id: 'bob', agent_id: 'b1' } }).code, 'not_authorized');
  const schema = fetch('skill', sha256('x'), { expected_schema_version: 2 });
  assert.equal(schema.status, 'schema_mismatch');
  assert.deepEqual(schema.supported_schema_versions, [2]);
  // One byte past the bound: refused from the stored size, before the body is read.
  const t2 = tempDir(t);
  const over = makeTaskStore(t2, undefined, defaultFiles({ [NOTES_PATH]: `${big}y` }));
  const ctx = context(over, ALICE, new FakeClock());
  const overUnit = taskRef(call(ctx, 'requirements'), 'unit');
  const limit = call(ctx, 'reference', {
    version: 1,
    task_id: overUnit.task_id,
    task_digest: overUnit.task_digest,
    name: 'resource-2',
    expected_sha256: sha256(`${big}y`),
    expected_schema_version: 1,
    agent: { owner_id: 'alice', agent_id: 'a1' },
  });
  assert.deepEqual(limit, {
    status: 'limit',
    name: 'resource-2',
    byte_length: REFERENCE_MAX_BYTES + 1,
    limit_bytes: REFERENCE_MAX_BYTES,
  });
});

test('every selection and read runs the caller-supplied guard; a refusal changes nothing', (t) => {
  const { store, clock, alice, requirements } = setup(t);
  const unit = taskRef(requirements, 'unit');
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, unit, 'c1', 'op-1')));
  const seen: TaskOperation[] = [];
  const recording: TaskGuard = (actor, operation, body) => {
    assert.deepEqual(actor, ALICE);
    seen.push(operation);
    return body();
  };
  const watched = context(store, ALICE, clock, recording);
  call(watched, 'capabilities');
  call(watched, 'requirements');
  call(watched, 'next');
  call(watched, 'status', statusRequest(claimed));
  call(watched, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h1'));
  assert.deepEqual(seen, ['capabilities', 'requirements', 'next', 'status', 'heartbeat']);
  const refused = context(store, ALICE, clock, refusingGuard('token revoked'));
  for (const [operation, input] of [
    ['capabilities', null],
    ['requirements', null],
    ['next', null],
    ['status', statusRequest(claimed)],
    ['heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h2')],
    ['cancel', mutationRequest(ALICE, claimed, 'cancel', 'c2')],
    ['claim', claimRequest(ALICE, taskRef(requirements, 'lint'), 'c3', 'op-3')],
  ] as const) {
    assert.equal(
      codeOf(() => call(refused, operation, input)),
      'TASK_NOT_AUTHORIZED',
      operation,
    );
  }
  assert.equal(call(alice, 'status', statusRequest(claimed)).state, 'leased');
  assert.equal(
    call(alice, 'requirements').tasks &&
      (call(alice, 'requirements').tasks as JsonObject[]).find((row) => row.step_id === 'lint')?.state,
    'pending',
  );
});

test('contention on the journal or the native reservation fails closed with STORE_BUSY and replays nothing', (t) => {
  const { store, alice, requirements } = setup(t);
  const lint = taskRef(requirements, 'lint');
  const unit = taskRef(requirements, 'unit');
  // Create the journal with one claim, then hold each database's writer lock in turn.
  call(alice, 'claim', claimRequest(ALICE, unit, 'c-0', 'op-0'));
  const claim = claimRequest(ALICE, lint, 'c-1', 'op-1');
  const holder = openAuthority(store.dataDir, { mode: 'write' });
  try {
    holder.db.exec('BEGIN IMMEDIATE');
    assert.equal(
      codeOf(() => call(alice, 'claim', claim)),
      'STORE_BUSY',
    );
    holder.db.exec('ROLLBACK');
  } finally {
    holder.close();
  }
  const journal = openJournal(store.dataDir, 'write');
  try {
    journal.db.exec('BEGIN IMMEDIATE');
    assert.equal(
      codeOf(() => call(alice, 'claim', claim)),
      'STORE_BUSY',
    );
    journal.db.exec('ROLLBACK');
  } finally {
    journal.close();
  }
  // Nothing was committed by the refused attempts: the claim now gets the first fence.
  assert.equal(claimedOf(call(alice, 'claim', claim)).fence, 1n);
});

test('a journal of the previous schema is migrated by the first transition, never by a read', (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  // A journal written before the agent-task tables existed (schema steps 1 and 2 only).
  mkdirSync(journalPaths(dir).dir, { recursive: true });
  const old = new Database(journalPaths(dir).db);
  old.pragma('journal_mode = WAL');
  JOURNAL_MIGRATIONS.slice(0, 2).forEach((step) => step(old));
  old.pragma('user_version = 2');
  old.close();
  const ctx = context(store, ALICE, new FakeClock());
  const requirements = call(ctx, 'requirements');
  assert.deepEqual(call(ctx, 'next').next, { operation: 'claim', ...taskRef(requirements, 'unit') });
  const before = new Database(journalPaths(dir).db, { readonly: true });
  assert.equal(before.pragma('user_version', { simple: true }), 2, 'reads left the journal unmigrated');
  before.close();
  const claimed = claimedOf(call(ctx, 'claim', claimRequest(ALICE, taskRef(requirements, 'lint'), 'c-1', 'op-1')));
  assert.equal(call(ctx, 'status', statusRequest(claimed)).state, 'leased');
  const reopened = new Database(journalPaths(dir).db, { readonly: true });
  assert.equal(reopened.pragma('user_version', { simple: true }), JOURNAL_MIGRATIONS.length);
  reopened.close();
});

test('a journal changed outside agentscm is refused with TASK_JOURNAL_INCONSISTENT and left as it is', (t) => {
  const { store, alice, requirements } = setup(t);
  const lint = taskRef(requirements, 'lint');
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, lint, 'claim-1', 'op-1')));
  call(alice, 'reconcile', mutationRequest(ALICE, claimed, 'reconcile', 'rc-1'));
  const path = journalPaths(store.dataDir).db;
  const edit = (sql: string, ...params: unknown[]): void => {
    const db = new Database(path);
    try {
      db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
  };
  const rows = (): unknown => {
    const db = new Database(path, { readonly: true });
    try {
      return [
        db.prepare('SELECT * FROM agent_tasks').all(),
        db.prepare('SELECT * FROM agent_task_attempts').all(),
        db.prepare('SELECT * FROM agent_task_requests').all(),
      ];
    } finally {
      db.close();
    }
  };
  const original = (() => {
    const db = new Database(path, { readonly: true });
    try {
      return db.prepare('SELECT task_digest, canonical FROM agent_tasks WHERE task_id = ?').get(lint.task_id) as {
        task_digest: string;
        canonical: Buffer;
      };
    } finally {
      db.close();
    }
  })();

  // A task row whose digest no longer covers its bytes.
  edit('UPDATE agent_tasks SET task_digest = ? WHERE task_id = ?', 'f'.repeat(64), lint.task_id);
  let before = rows();
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, lint, 'claim-2', 'op-2'))),
    'TASK_JOURNAL_INCONSISTENT',
  );
  assert.equal(
    codeOf(() => call(alice, 'status', statusRequest(claimed))),
    'TASK_JOURNAL_INCONSISTENT',
  );
  assert.deepEqual(rows(), before);

  // A self-consistent row of another task under the derived task's id: the claim compares the
  // retained digest with the derived one.
  const foreign = workflowTaskDecoder.decode(original.canonical);
  const encoded = encodeTask({ ...foreign, required: !foreign.required });
  edit(
    'UPDATE agent_tasks SET task_digest = ?, canonical = ? WHERE task_id = ?',
    encoded.digest,
    encoded.canonical,
    lint.task_id,
  );
  before = rows();
  assert.equal(
    codeOf(() => call(alice, 'claim', claimRequest(ALICE, lint, 'claim-3', 'op-3'))),
    'TASK_JOURNAL_INCONSISTENT',
  );
  assert.deepEqual(rows(), before);

  // An attempt row whose bytes were changed.
  edit(
    'UPDATE agent_tasks SET task_digest = ?, canonical = ? WHERE task_id = ?',
    original.task_digest,
    original.canonical,
    lint.task_id,
  );
  edit(
    'UPDATE agent_task_attempts SET attempt_digest = ? WHERE attempt_id = ?',
    'e'.repeat(64),
    claimed.attempt.attempt_id,
  );
  assert.equal(
    codeOf(() => call(alice, 'status', statusRequest(claimed))),
    'TASK_JOURNAL_INCONSISTENT',
  );

  // Put back, the journal answers again and the next claim continues the fences.
  edit(
    'UPDATE agent_task_attempts SET attempt_digest = ? WHERE attempt_id = ?',
    claimed.attempt_digest,
    claimed.attempt.attempt_id,
  );
  assert.equal(call(alice, 'status', statusRequest(claimed)).state, 'replaced');
  assert.equal(claimedOf(call(alice, 'claim', claimRequest(ALICE, lint, 'claim-4', 'op-4'))).fence, 3n);
});
