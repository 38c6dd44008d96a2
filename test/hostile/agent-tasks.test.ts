/**
 * Hostile reproducers for agent-owned tasks, kept as regression tests on real SQLite stores:
 * an optional claimable step must be able to pass and complete the steps that need it; every
 * reference read answers a distinct bounded outcome (a body that is not UTF-8 or does not hash
 * to its reference is denied, an unknown or stale task is an answer, not an exception);
 * recovery of a claim that never committed reports its own identity and checks the task it
 * names; a refused request creates no journal.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { taskRecoveryEnvelopeDecoder } from '../../src/contracts/task/recovery.js';
import type { TaskContext } from '../../src/tasks/context.js';
import { openStore } from '../../src/tasks/store.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { tokenFileFor } from '../support/grants.js';
import {
  assertionRequest,
  call,
  claimedOf,
  claimRequest,
  mutationRequest,
  observationRequest,
  recoveryRequest,
  statusRequest,
  taskRef,
  type Claimed,
  type TaskRef,
} from '../support/task-requests.js';
import {
  addRevision,
  CHANGE_ID,
  checkpoint,
  context,
  defaultFiles,
  enroll,
  FakeClock,
  makeTaskStore,
  NOTES_PATH,
  sha256,
  type StepSpec,
  type TaskStore,
} from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };
const BOB: AgentRef = { owner_id: 'bob', agent_id: 'b1' };

function journalExists(store: TaskStore): boolean {
  return existsSync(journalPaths(store.dataDir).db);
}

function envelope(ctx: TaskContext, kind: string, request: JsonObject): JsonObject {
  const answer = call(ctx, 'recovery', recoveryRequest(kind, request));
  // Every envelope satisfies the contract's own rules.
  taskRecoveryEnvelopeDecoder.decode(Buffer.from(formatJson(answer)));
  return answer;
}

// ---------------------------------------------------------------- item 19: optional steps

/** An optional claimable step (lint) that a required step (deploy) needs. */
const OPTIONAL_CHAIN: readonly StepSpec[] = [
  { id: 'lint', kind: 'command', required: false },
  { id: 'deploy', kind: 'command', needs: ['lint'] },
];

test('an optional step offers a criterion its task requires, so it can pass', (t) => {
  const store = makeTaskStore(tempDir(t), OPTIONAL_CHAIN);
  const ctx = context(store, ALICE, new FakeClock());
  const requirements = call(ctx, 'requirements');
  const lintRow = (requirements.tasks as JsonObject[]).find((row) => row.step_id === 'lint');
  assert.equal(lintRow?.required, false);
  const lint = taskRef(requirements, 'lint');
  const entrypoint = call(ctx, 'instructions', { version: 1, task_id: lint.task_id, supported_schema_versions: [1] })
    .entrypoint as JsonObject;
  assert.deepEqual(
    (entrypoint.criteria as JsonObject[]).map((row) => [row.criterion, row.required, row.controller_only]),
    [['command', true, false]],
  );
  // An agent assertion of the optional step passes (and stays nonqualifying).
  const claimed = claimedOf(call(ctx, 'claim', claimRequest(ALICE, lint, 'c1', 'op-1')));
  const retained = call(ctx, 'result', assertionRequest(ALICE, claimed, 'r1', 'passed'));
  assert.equal(retained.outcome, 'passed');
  assert.equal(retained.required_complete, true);
  assert.equal(retained.qualifying, false);
});

test('a required step that needs an optional one is claimable once a registered observation of it passed', (t) => {
  const store = makeTaskStore(tempDir(t), OPTIONAL_CHAIN);
  const ctx = context(store, ALICE, new FakeClock());
  const requirements = call(ctx, 'requirements');
  const lint = taskRef(requirements, 'lint');
  const deploy = taskRef(requirements, 'deploy');
  assert.deepEqual(call(ctx, 'next').next, { operation: 'claim', ...lint });
  assert.equal(
    codeOf(() => call(ctx, 'claim', claimRequest(ALICE, deploy, 'd0', 'op-d0'))),
    'TASK_DEPENDENCY_INCOMPLETE',
  );
  const executor = enroll(store, 'lint');
  const claimed = claimedOf(call(ctx, 'claim', claimRequest(ALICE, lint, 'c1', 'op-1', { executor })));
  const retained = call(ctx, 'result', observationRequest(ALICE, claimed, executor, 'obs-1', 'passed'));
  assert.equal(retained.outcome, 'passed');
  assert.equal(retained.qualifying, false);
  const afterRows = call(ctx, 'requirements').tasks as JsonObject[];
  assert.equal(afterRows.find((row) => row.step_id === 'deploy')?.waiting_for, null);
  assert.deepEqual(call(ctx, 'next').next, { operation: 'claim', ...deploy });
  assert.equal(claimedOf(call(ctx, 'claim', claimRequest(ALICE, deploy, 'd1', 'op-d1'))).fence, 1n);
});

// ---------------------------------------------------------------- item 20: reference outcomes

function referenceRequest(task: TaskRef, name: string, expected: string, actor: AgentRef = ALICE): JsonObject {
  return {
    version: 1,
    task_id: task.task_id,
    task_digest: task.task_digest,
    name,
    expected_sha256: expected,
    expected_schema_version: 1,
    agent: { owner_id: actor.owner_id, agent_id: actor.agent_id },
  };
}

test('a reference body that is not UTF-8 is denied/not_utf8, not uncertain', (t) => {
  const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0xc3]);
  const store = makeTaskStore(tempDir(t), undefined, defaultFiles({ [NOTES_PATH]: binary }));
  const ctx = context(store, ALICE, new FakeClock());
  const lint = taskRef(call(ctx, 'requirements'), 'lint');
  assert.deepEqual(call(ctx, 'reference', referenceRequest(lint, 'resource-2', sha256(binary))), {
    status: 'denied',
    name: 'resource-2',
    code: 'not_utf8',
  });
});

test('a reference body that does not hash to the stored reference is denied/digest_mismatch, not uncertain', (t) => {
  const store = makeTaskStore(tempDir(t));
  const ctx = context(store, ALICE, new FakeClock());
  const lint = taskRef(call(ctx, 'requirements'), 'lint');
  call(ctx, 'claim', claimRequest(ALICE, lint, 'c1', 'op-1'));
  // The revision's notes entry is pointed at another stored blob (an intact blob, so the read
  // itself succeeds): the body no longer hashes to the reference the retained task names.
  const db = new Database(join(store.dataDir, 'native', 'authority.sqlite'));
  try {
    const other = db.prepare("SELECT object FROM tree_entries WHERE name = 'a.txt'").get() as { object: number };
    const changed = db
      .prepare('UPDATE tree_entries SET object = ? WHERE name = ?')
      .run(other.object, NOTES_PATH.slice(NOTES_PATH.lastIndexOf('/') + 1));
    assert.equal(changed.changes, 1);
  } finally {
    db.close();
  }
  assert.deepEqual(call(ctx, 'reference', referenceRequest(lint, 'resource-2', sha256('notes'))), {
    status: 'denied',
    name: 'resource-2',
    code: 'digest_mismatch',
  });
});

test('a reference read of an unknown task answers denied/not_in_task; of a stale subject, uncertain/subject_changed', (t) => {
  const store = makeTaskStore(tempDir(t));
  const ctx = context(store, ALICE, new FakeClock());
  const lint = taskRef(call(ctx, 'requirements'), 'lint');
  const unknown = { task_id: `t-${'0'.repeat(40)}`, task_digest: 'a'.repeat(64) };
  assert.deepEqual(call(ctx, 'reference', referenceRequest(unknown, 'skill', sha256('x'))), {
    status: 'denied',
    name: 'skill',
    code: 'not_in_task',
  });
  // A checkpoint moves the Change on: the context the caller names is no longer current.
  checkpoint(store, addRevision(store.dataDir, store.repository, defaultFiles({ 'b.txt': 'beta' }), store.revision));
  assert.deepEqual(call(ctx, 'reference', referenceRequest(lint, 'skill', sha256('x'))), {
    status: 'uncertain',
    name: 'skill',
    code: 'subject_changed',
  });
  assert.equal(journalExists(store), false);
});

// ---------------------------------------------------------------- item 21: recovery

test("recovery of a claim that never committed names its own attempt and execution identity, not the holder's", (t) => {
  const store = makeTaskStore(tempDir(t));
  const clock = new FakeClock();
  const alice = context(store, ALICE, clock);
  const bob = context(store, BOB, clock);
  const lint = taskRef(call(alice, 'requirements'), 'lint');
  const held: Claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, lint, 'claim-a', 'op-alice')));
  const refused = claimRequest(BOB, lint, 'claim-b', 'op-bob');
  assert.equal(
    codeOf(() => call(bob, 'claim', refused)),
    'TASK_ALREADY_CLAIMED',
  );
  const e = envelope(bob, 'claim', refused);
  assert.equal(e.request_id, 'claim-b');
  assert.equal(e.execution_operation_id, 'op-bob');
  assert.notEqual(e.attempt_id, held.attempt_id);
  assert.notEqual(e.attempt_digest, held.attempt_digest);
  assert.equal(e.fence, 2n);
  // The existing attempt is observed, not claimed as this request's effect.
  assert.equal(e.disposition, 'conclusive_rejection');
  assert.equal(e.observed_state, 'leased');
  assert.deepEqual(e.confirmed_effects, []);
  assert.equal(e.supersession, null);
  assert.deepEqual(e.permitted_actions, ['inspect', 'stop']);
  // The same once the holder's attempt was reconciled: its supersession is not this claim's.
  call(alice, 'reconcile', mutationRequest(ALICE, held, 'reconcile', 'rec-1'));
  const after = envelope(bob, 'claim', refused);
  assert.equal(after.observed_state, 'replaced');
  assert.equal(after.supersession, null);
  assert.equal(after.execution_operation_id, 'op-bob');
  assert.equal(after.fence, 3n);
});

test('recovery of a claim naming a task that does not exist, or another digest, permits no identical retry', (t) => {
  const store = makeTaskStore(tempDir(t));
  const ctx = context(store, ALICE, new FakeClock());
  const lint = taskRef(call(ctx, 'requirements'), 'lint');
  const paths = taskRef(call(ctx, 'requirements'), 'paths');
  const cases: Record<string, TaskRef> = {
    'unknown task': { task_id: `t-${'0'.repeat(40)}`, task_digest: 'a'.repeat(64) },
    'wrong digest of a derived task': { task_id: lint.task_id, task_digest: 'b'.repeat(64) },
    'controller-only task': paths,
  };
  for (const [what, task] of Object.entries(cases)) {
    const e = envelope(ctx, 'claim', claimRequest(ALICE, task, 'claim-x', 'op-x'));
    assert.equal(e.observed_state, 'unknown', what);
    assert.deepEqual(e.permitted_actions, ['inspect', 'stop'], what);
  }
  // A retained task named with another digest is not that task either.
  call(ctx, 'claim', claimRequest(ALICE, lint, 'c1', 'op-1'));
  const e = envelope(
    ctx,
    'claim',
    claimRequest(ALICE, { task_id: lint.task_id, task_digest: 'c'.repeat(64) }, 'claim-y', 'op-y'),
  );
  assert.equal(e.observed_state, 'unknown');
  assert.deepEqual(e.permitted_actions, ['inspect', 'stop']);
  // Without a subject in the context a task that is not retained cannot be checked.
  const noSubject: TaskContext = { ...context(store, ALICE, new FakeClock()), subject: undefined };
  const unchecked = envelope(
    noSubject,
    'claim',
    claimRequest(ALICE, taskRef(call(ctx, 'requirements'), 'unit'), 'claim-z', 'op-z'),
  );
  assert.equal(unchecked.observed_state, 'unknown');
  // The real, claimable, unretained task still permits its identical retry.
  const unit = taskRef(call(ctx, 'requirements'), 'unit');
  const pending = envelope(ctx, 'claim', claimRequest(ALICE, unit, 'claim-u', 'op-u'));
  assert.equal(pending.observed_state, 'pending');
  assert.deepEqual(pending.permitted_actions, ['inspect', 'stop', 'retry_identical']);
});

test("recovery of a mutation that never committed reports the request's own execution identity and fence", (t) => {
  const store = makeTaskStore(tempDir(t));
  const ctx = context(store, ALICE, new FakeClock());
  const lint = taskRef(call(ctx, 'requirements'), 'lint');
  const claimed = claimedOf(call(ctx, 'claim', claimRequest(ALICE, lint, 'c1', 'op-1')));
  const wrongOp = mutationRequest(ALICE, claimed, 'heartbeat', 'hb-x', { execution_operation_id: 'op-forged' });
  assert.equal(
    codeOf(() => call(ctx, 'heartbeat', wrongOp)),
    'TASK_BINDING_MISMATCH',
  );
  const e = envelope(ctx, 'heartbeat', wrongOp);
  assert.equal(e.execution_operation_id, 'op-forged');
  assert.equal(e.disposition, 'conclusive_rejection');
  const wrongDigest = mutationRequest(ALICE, claimed, 'heartbeat', 'hb-y', { attempt_digest: 'd'.repeat(64) });
  const d = envelope(ctx, 'heartbeat', wrongDigest);
  assert.equal(d.attempt_digest, 'd'.repeat(64));
  assert.equal(d.observed_state, 'unknown');
});

// ---------------------------------------------------------------- item 22: refusals create nothing

test('refused heartbeat, cancel, reconcile and result on a fresh store create no journal', (t) => {
  const store = makeTaskStore(tempDir(t));
  const ctx = context(store, ALICE, new FakeClock());
  const lint = taskRef(call(ctx, 'requirements'), 'lint');
  const forged: Claimed = {
    ...lint,
    attempt: {},
    attempt_id: `a-${'1'.repeat(40)}`,
    attempt_digest: 'e'.repeat(64),
    execution_operation_id: 'op-1',
    fence: 1n,
    executor: null,
  };
  for (const action of ['heartbeat', 'cancel', 'reconcile'] as const) {
    assert.equal(
      codeOf(() => call(ctx, action, mutationRequest(ALICE, forged, action, `${action}-1`))),
      'TASK_NOT_FOUND',
      action,
    );
  }
  assert.equal(
    codeOf(() => call(ctx, 'result', assertionRequest(ALICE, forged, 'r-1'))),
    'TASK_NOT_FOUND',
  );
  assert.equal(
    codeOf(() => call(ctx, 'status', statusRequest(forged))),
    'WORKFLOW_JOURNAL_NOT_INITIALIZED',
  );
  assert.equal(journalExists(store), false);
  // The same through a session that keeps its connections open.
  const session = openStore(store.dataDir, { mode: 'write' });
  t.after(() => session.close());
  const inSession: TaskContext = { ...ctx, store: session };
  assert.equal(
    codeOf(() => call(inSession, 'heartbeat', mutationRequest(ALICE, forged, 'heartbeat', 'hb-s'))),
    'TASK_NOT_FOUND',
  );
  assert.equal(journalExists(store), false);
});

test('a refused claim on a fresh store creates no journal; an accepted one does', (t) => {
  const store = makeTaskStore(tempDir(t), [
    { id: 'cap', kind: 'require_capability' },
    { id: 'blocked', kind: 'command', needs: ['cap'] },
    { id: 'lint', kind: 'command' },
  ]);
  const ctx = context(store, ALICE, new FakeClock());
  const requirements = call(ctx, 'requirements');
  const blocked = taskRef(requirements, 'blocked');
  const lint = taskRef(requirements, 'lint');
  assert.equal(
    codeOf(() => call(ctx, 'claim', claimRequest(ALICE, blocked, 'c1', 'op-1'))),
    'TASK_DEPENDENCY_INCOMPLETE',
  );
  const stranger = enroll(store, 'cap');
  assert.equal(
    codeOf(() => call(ctx, 'claim', claimRequest(ALICE, lint, 'c2', 'op-2', { executor: stranger }))),
    'REGISTRATION_NOT_CURRENT',
  );
  assert.equal(journalExists(store), false);
  const session = openStore(store.dataDir, { mode: 'write' });
  t.after(() => session.close());
  assert.equal(
    codeOf(() => call({ ...ctx, store: session }, 'claim', claimRequest(ALICE, blocked, 'c3', 'op-3'))),
    'TASK_DEPENDENCY_INCOMPLETE',
  );
  assert.equal(journalExists(store), false);
  call(ctx, 'claim', claimRequest(ALICE, lint, 'c4', 'op-4'));
  assert.equal(journalExists(store), true);
});

test('agent-task call heartbeat on a fresh store: TASK_NOT_FOUND, and skill-workflows/state.sqlite is not created', async (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const forged = {
    version: 1,
    request_id: 'hb-1',
    action: 'heartbeat',
    task_id: `t-${'2'.repeat(40)}`,
    task_digest: 'f'.repeat(64),
    attempt_id: `a-${'3'.repeat(40)}`,
    attempt_digest: 'f'.repeat(64),
    execution_operation_id: 'op-1',
    agent: { owner_id: 'alice', agent_id: 'a1' },
    executor: null,
    fence: 1,
    reason: null,
  };
  const file = join(dir, 'heartbeat.json');
  writeFileSync(file, JSON.stringify(forged));
  const result = await runCli([
    '--data-dir',
    dir,
    'agent-task',
    'call',
    'heartbeat',
    '--token-file',
    tokenFileFor(dir, dir, { owner_id: 'alice', agent_id: 'a1' }),
    '--change',
    CHANGE_ID,
    '--context',
    store.contextDigest,
    '--input',
    file,
    '--json',
  ]);
  assert.equal(result.code, 2, result.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, 'TASK_NOT_FOUND');
  assert.equal(existsSync(join(dir, 'skill-workflows', 'state.sqlite')), false);
  assert.equal(existsSync(join(dir, 'skill-workflows')), false);
});
