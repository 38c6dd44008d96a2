/**
 * Journal schema step 004 (docs/agent-tasks.md "Journal tables"): a journal written by schema
 * step 3 — tasks, attempts (one replaced, one finished), an assertion and idempotency rows — is
 * migrated by the first transition with every retained row, byte for byte: identical retries
 * return their retained answers, status is unchanged, fences continue, the one-current-attempt
 * rule holds. Reads never migrate it.
 */
import assert from 'node:assert/strict';
import { renameSync, rmSync } from 'node:fs';
import test from 'node:test';
import Database from 'better-sqlite3';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { JOURNAL_MIGRATIONS } from '../../src/tasks/store.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import {
  assertionRequest,
  call,
  claimedOf,
  claimRequest,
  mutationRequest,
  recoveryRequest,
  statusRequest,
  taskRef,
} from '../support/task-requests.js';
import { context, FakeClock, makeTaskStore } from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };

/** Every retained row in a layout-independent form (tasks in retention order). */
function retainedRows(path: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return {
      tasks: db
        .prepare(
          'SELECT task_id, task_digest, repository, change_id, profile, step_id, canonical, last_fence, created_at_ms FROM agent_tasks ORDER BY seq',
        )
        .all(),
      attempts: db
        .prepare(
          `SELECT t.task_id, a.attempt_id, a.attempt_digest, a.canonical, a.fence, a.execution_operation_id, a.owner_id, a.agent_id, a.state,
             a.lease_expires_at_ms, a.superseded_by_fence, a.created_at_ms, a.updated_at_ms
           FROM agent_task_attempts a JOIN agent_tasks t ON t.seq = a.task_seq ORDER BY a.attempt_id`,
        )
        .all(),
      assertions: db
        .prepare(
          `SELECT attempt_id, task_id, request_id, trust_class, outcome, canonical, canonical_sha256, observation_digest, registration_id, created_at_ms
           FROM agent_task_assertions ORDER BY attempt_id`,
        )
        .all(),
      requests: db
        .prepare(
          'SELECT owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id, response, response_sha256, created_at_ms FROM agent_task_requests ORDER BY request_id',
        )
        .all(),
    };
  } finally {
    db.close();
  }
}

/** Replace the journal with one of schema step 3 holding the same rows (retention order kept, seq values spread out). */
function rewriteAsSchema3(dataDir: string): void {
  const path = journalPaths(dataDir).db;
  const oldPath = `${path}.v3`;
  const old = new Database(oldPath);
  old.pragma('journal_mode = WAL');
  JOURNAL_MIGRATIONS.slice(0, 3).forEach((step) => step(old));
  old.pragma('user_version = 3');
  old.prepare('ATTACH DATABASE ? AS current').run(path);
  old.exec(`
    INSERT INTO main.agent_tasks (task_id, task_digest, repository, change_id, profile, step_id, canonical, last_fence, seq, created_at_ms)
      SELECT task_id, task_digest, repository, change_id, profile, step_id, canonical, last_fence, seq * 10, created_at_ms FROM current.agent_tasks;
    INSERT INTO main.agent_task_attempts (attempt_id, task_id, attempt_digest, canonical, fence, execution_operation_id, owner_id, agent_id, state,
        lease_expires_at_ms, superseded_by_fence, created_at_ms, updated_at_ms)
      SELECT a.attempt_id, t.task_id, a.attempt_digest, a.canonical, a.fence, a.execution_operation_id, a.owner_id, a.agent_id, a.state,
        a.lease_expires_at_ms, a.superseded_by_fence, a.created_at_ms, a.updated_at_ms
      FROM current.agent_task_attempts a JOIN current.agent_tasks t ON t.seq = a.task_seq;
    INSERT INTO main.agent_task_assertions (attempt_id, task_id, request_id, trust_class, outcome, canonical, canonical_sha256, observation_digest, registration_id, created_at_ms)
      SELECT attempt_id, task_id, request_id, trust_class, outcome, canonical, canonical_sha256, observation_digest, registration_id, created_at_ms FROM current.agent_task_assertions;
    INSERT INTO main.agent_task_requests (owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id, response, response_sha256, created_at_ms)
      SELECT owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id, response, response_sha256, created_at_ms FROM current.agent_task_requests;
  `);
  old.exec('DETACH DATABASE current');
  old.pragma('wal_checkpoint(TRUNCATE)');
  old.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  renameSync(oldPath, path);
  rmSync(`${oldPath}-wal`, { force: true });
  rmSync(`${oldPath}-shm`, { force: true });
}

test('a journal of schema step 3 is migrated by the first transition with every retained row', (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const clock = new FakeClock();
  const ctx = context(store, ALICE, clock);
  const requirements = call(ctx, 'requirements');
  const lint = taskRef(requirements, 'lint');
  const unit = taskRef(requirements, 'unit');
  const lintClaim = claimRequest(ALICE, lint, 'c-lint', 'op-lint');
  const unitClaim = claimRequest(ALICE, unit, 'c-unit', 'op-unit');
  // Claimed (retained) in the order opposite to their ids, so that retention order is not id order.
  const lintFirst = lint.task_id > unit.task_id;
  const firstClaimed = claimedOf(call(ctx, 'claim', lintFirst ? lintClaim : unitClaim));
  const secondClaimed = claimedOf(call(ctx, 'claim', lintFirst ? unitClaim : lintClaim));
  const [lintClaimed, unitClaimed] = lintFirst ? [firstClaimed, secondClaimed] : [secondClaimed, firstClaimed];
  clock.advance(10);
  const heartbeat = mutationRequest(ALICE, lintClaimed, 'heartbeat', 'h-lint');
  const renewed = call(ctx, 'heartbeat', heartbeat);
  const result = assertionRequest(ALICE, lintClaimed, 'r-lint', 'failed');
  const retained = call(ctx, 'result', result);
  const reconcile = mutationRequest(ALICE, unitClaimed, 'reconcile', 'rc-unit');
  const reconciled = call(ctx, 'reconcile', reconcile);
  const statusBefore = [
    call(ctx, 'status', statusRequest(lintClaimed)),
    call(ctx, 'status', statusRequest(unitClaimed)),
  ];
  const rowsBefore = retainedRows(journalPaths(dir).db);
  assert.deepEqual(
    (rowsBefore as { tasks: { task_id: string }[] }).tasks.map((row) => row.task_id),
    lintFirst ? [lint.task_id, unit.task_id] : [unit.task_id, lint.task_id],
  );

  rewriteAsSchema3(dir);
  const v3 = new Database(journalPaths(dir).db, { readonly: true });
  assert.equal(v3.pragma('user_version', { simple: true }), 3);
  assert.equal((v3.prepare('SELECT count(*) AS n FROM agent_task_attempts').get() as { n: number }).n, 2);
  v3.close();

  // Reads never migrate: the journal of an older schema is refused until a transition migrates it.
  assert.equal(
    codeOf(() => call(ctx, 'status', statusRequest(lintClaimed))),
    'STORE_SCHEMA_UNSUPPORTED',
  );
  const still = new Database(journalPaths(dir).db, { readonly: true });
  assert.equal(still.pragma('user_version', { simple: true }), 3);
  still.close();

  // The first transition (an identical retry) migrates the journal and answers from the copied rows.
  assert.deepEqual(call(ctx, 'heartbeat', heartbeat), renewed);
  const migrated = new Database(journalPaths(dir).db, { readonly: true });
  assert.equal(migrated.pragma('user_version', { simple: true }), JOURNAL_MIGRATIONS.length);
  assert.equal(JOURNAL_MIGRATIONS.length, 9);
  assert.deepEqual(
    migrated.prepare("SELECT name FROM sqlite_schema WHERE name LIKE '%_v3' ORDER BY name").all(),
    [],
    'the schema-3 tables are gone',
  );
  migrated.close();
  assert.deepEqual(
    retainedRows(journalPaths(dir).db),
    rowsBefore,
    'every row is kept byte for byte, tasks in retention order',
  );
  assert.deepEqual(call(ctx, 'result', result), retained);
  assert.deepEqual(call(ctx, 'reconcile', reconcile), reconciled);
  assert.deepEqual(call(ctx, 'claim', lintClaim).attempt, lintClaimed.attempt);
  assert.deepEqual(
    [call(ctx, 'status', statusRequest(lintClaimed)), call(ctx, 'status', statusRequest(unitClaimed))],
    statusBefore,
  );
  assert.equal(call(ctx, 'recovery', recoveryRequest('reconcile', reconcile)).disposition, 'uncertain_effect');

  // The finished attempt is still the task's current one; the replaced one is not, and the next
  // fence is above the one the reconcile reserved.
  assert.equal(
    codeOf(() => call(ctx, 'claim', claimRequest(ALICE, lint, 'c-lint-2', 'op-lint-2'))),
    'TASK_ALREADY_CLAIMED',
  );
  assert.equal(
    codeOf(() => call(ctx, 'claim', claimRequest(ALICE, unit, 'c-unit-2', 'op-unit'))),
    'TASK_EXECUTION_ID_REUSED',
  );
  const again = claimedOf(call(ctx, 'claim', claimRequest(ALICE, unit, 'c-unit-2', 'op-unit-2')));
  assert.equal(again.fence, 3n);
  const states = (call(ctx, 'requirements').tasks as JsonObject[]).map((row) => [row.step_id, row.state]);
  assert.deepEqual(states, [
    ['paths', 'controller_only'],
    ['unit', 'leased'],
    ['lint', 'finished'],
    ['cap', 'controller_only'],
  ]);
});
