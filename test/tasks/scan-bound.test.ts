/**
 * The bounded scan before a fresh claim (docs/agent-tasks.md "State machine": a bounded scan
 * of at most 4096 retained task identities refuses unresolved older subjects): 4096 older
 * identities of the same repository, Change, profile and step are scanned; one more fails closed
 * (TASK_SCAN_LIMIT) without a claim.
 */
import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import type { AgentRef } from '../../src/contracts/task/common.js';
import { MAX_SCOPE_SCAN } from '../../src/tasks/journal-rows.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { tempDir } from '../helpers/tmp.js';
import { call, claimedOf, claimRequest, taskRef } from '../support/task-requests.js';
import { CHANGE_ID, context, FakeClock, makeTaskStore, PROFILE } from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };

/** A store whose journal exists (one lint claim) and holds `count` older identities of the unit step. */
function storeWithOlder(t: TestContext, count: number) {
  const store = makeTaskStore(tempDir(t));
  const ctx = context(store, ALICE, new FakeClock());
  const requirements = call(ctx, 'requirements');
  call(ctx, 'claim', claimRequest(ALICE, taskRef(requirements, 'lint'), 'c-lint', 'op-lint'));
  const db = new Database(journalPaths(store.dataDir).db);
  try {
    const insert = db.prepare(
      "INSERT INTO agent_tasks (task_id, task_digest, repository, change_id, profile, step_id, canonical, last_fence, created_at_ms) VALUES (?, ?, ?, ?, ?, 'unit', x'00', '00000000000000000000', 0)",
    );
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(`older-${i}`, 'a'.repeat(64), store.repository, CHANGE_ID, PROFILE);
    })();
  } finally {
    db.close();
  }
  return { ctx, unit: taskRef(requirements, 'unit') };
}

test(`a fresh claim scans ${MAX_SCOPE_SCAN} older retained identities`, (t) => {
  assert.equal(MAX_SCOPE_SCAN, 4096);
  const { ctx, unit } = storeWithOlder(t, MAX_SCOPE_SCAN);
  assert.equal(claimedOf(call(ctx, 'claim', claimRequest(ALICE, unit, 'c-unit', 'op-unit'))).fence, 1n);
});

test(`one identity past ${MAX_SCOPE_SCAN} fails closed`, (t) => {
  const { ctx, unit } = storeWithOlder(t, MAX_SCOPE_SCAN + 1);
  assert.throws(() => call(ctx, 'claim', claimRequest(ALICE, unit, 'c-unit', 'op-unit')), { code: 'TASK_SCAN_LIMIT' });
  assert.equal(
    (call(ctx, 'requirements').tasks as { step_id: string; state: string }[]).find((row) => row.step_id === 'unit')
      ?.state,
    'pending',
  );
});
