/**
 * Bounds of the state machine and its adapter, each at the bound and one past: attempts
 * retained per task (1024) and the request document read by `agent-task call` (272 KiB, checked
 * before the document is held).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import type { AgentRef } from '../../src/contracts/task/common.js';
import { u64ToSql } from '../../src/native/sqlite.js';
import { MAX_ATTEMPTS_PER_TASK } from '../../src/tasks/attempt-rows.js';
import { MAX_INPUT_BYTES, readTaskInput } from '../../src/tasks/input.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { tempDir } from '../helpers/tmp.js';
import { call, claimedOf, claimRequest, mutationRequest, taskRef } from '../support/task-requests.js';
import { context, FakeClock, makeTaskStore } from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };

test(`a task retains at most ${MAX_ATTEMPTS_PER_TASK} attempts`, (t) => {
  assert.equal(MAX_ATTEMPTS_PER_TASK, 1024);
  const store = makeTaskStore(tempDir(t));
  const ctx = context(store, ALICE, new FakeClock());
  const lint = taskRef(call(ctx, 'requirements'), 'lint');
  const first = claimedOf(call(ctx, 'claim', claimRequest(ALICE, lint, 'c-1', 'op-1')));
  call(ctx, 'reconcile', mutationRequest(ALICE, first, 'reconcile', 'rc-1'));
  // Fill up to one below the bound with replaced attempts (fences above the ones issued so far).
  const db = new Database(journalPaths(store.dataDir).db);
  const top = 100n + BigInt(MAX_ATTEMPTS_PER_TASK - 3);
  try {
    const insert = db.prepare(
      `INSERT INTO agent_task_attempts (attempt_id, task_seq, attempt_digest, canonical, fence, execution_operation_id, owner_id, agent_id, state,
         lease_expires_at_ms, superseded_by_fence, created_at_ms, updated_at_ms)
       VALUES (?, (SELECT seq FROM agent_tasks WHERE task_id = ?), ?, x'00', ?, ?, 'alice', 'a1', 'replaced', 0, ?, 0, 0)`,
    );
    db.transaction(() => {
      for (let i = 0; i < MAX_ATTEMPTS_PER_TASK - 2; i++) {
        const fence = 100n + BigInt(i);
        insert.run(
          `filler-${i}`,
          lint.task_id,
          'b'.repeat(64),
          u64ToSql(fence),
          `op-filler-${i}`,
          u64ToSql(fence + 1n),
        );
      }
      db.prepare('UPDATE agent_tasks SET last_fence = ? WHERE task_id = ?').run(u64ToSql(top + 1n), lint.task_id);
    })();
  } finally {
    db.close();
  }
  // The 1024th attempt is allowed…
  const last = claimedOf(call(ctx, 'claim', claimRequest(ALICE, lint, 'c-2', 'op-2')));
  assert.equal(last.fence, top + 2n);
  call(ctx, 'reconcile', mutationRequest(ALICE, last, 'reconcile', 'rc-2'));
  // …the 1025th is refused.
  assert.throws(() => call(ctx, 'claim', claimRequest(ALICE, lint, 'c-3', 'op-3')), { code: 'TASK_ATTEMPT_LIMIT' });
});

test(`agent-task call reads at most ${MAX_INPUT_BYTES} input bytes`, (t) => {
  const dir = tempDir(t);
  const atBound = join(dir, 'at.json');
  const pastBound = join(dir, 'past.json');
  writeFileSync(atBound, Buffer.alloc(MAX_INPUT_BYTES, 0x20));
  writeFileSync(pastBound, Buffer.alloc(MAX_INPUT_BYTES + 1, 0x20));
  assert.equal(readTaskInput(atBound).byteLength, MAX_INPUT_BYTES);
  assert.throws(() => readTaskInput(pastBound), { code: 'INPUT_TOO_LARGE' });
  assert.throws(() => readTaskInput(join(dir, 'missing.json')), { code: 'INPUT_NOT_FOUND' });
});
