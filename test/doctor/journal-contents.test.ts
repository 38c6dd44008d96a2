/**
 * `agentscm doctor` reports the journal's size and its rows per table (docs/doctor.md "store"):
 * after real claim -> heartbeat -> result cycles, the `store.journal-contents` finding (human and
 * --json) names the bytes of the journal and the rows of every agent-task table, equal to what the
 * journal holds; one byte past the quick_check bound the per-table bytes are left out (rows stay).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import Database from 'better-sqlite3';

import { journalContents, MAX_QUICK_CHECK_BYTES } from '../../src/doctor/store.js';
import type { Journal } from '../../src/native/journal-db.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { tempDir } from '../helpers/tmp.js';
import { assertionRequest, call, claimedOf, claimRequest, mutationRequest, taskRef } from '../support/task-requests.js';
import { context, FakeClock, makeTaskStore } from '../support/tasks.js';
import { doctor, findingOf, testHome } from './fixture.js';

const ALICE = { owner_id: 'alice', agent_id: 'a1' };

test('doctor reports the journal bytes and the rows of each table, in human and --json output', async (t) => {
  const dir = tempDir(t, 'agentscm-doctor-journal-');
  const store = makeTaskStore(dir);
  const ctx = context(store, ALICE, new FakeClock());
  const requirements = call(ctx, 'requirements');
  // One cycle on lint (unit waits for the controller's paths step).
  const claimed = claimedOf(call(ctx, 'claim', claimRequest(ALICE, taskRef(requirements, 'lint'), 'c-1', 'op-1')));
  call(ctx, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'h-1'));
  call(ctx, 'result', assertionRequest(ALICE, claimed, 'r-1', 'failed'));
  const home = testHome(t);
  const { report } = await doctor(home, ['--data-dir', store.dataDir]);
  const found = findingOf(report, 'store.journal-contents', 'OK');
  const db = new Database(journalPaths(store.dataDir).db, { readonly: true });
  try {
    const bytes =
      (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
    assert.match(found.message, new RegExp(`: ${bytes} bytes \\(\\d+ free\\); per table with its indexes: `));
    for (const [table, rows] of [
      ['agent_tasks', 1],
      ['agent_task_attempts', 1],
      ['agent_task_assertions', 1],
      ['agent_task_requests', 3],
      ['agent_task_unresolved', 0],
    ] as const) {
      assert.equal(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), rows, table);
      assert.match(found.message, new RegExp(`(: |, )${table} ${rows} rows \\d+ bytes(,|$)`), table);
    }
  } finally {
    db.close();
  }
  const human = await doctor(home, ['--data-dir', store.dataDir], { json: false });
  assert.match(human.result.stdout, /store\.journal-contents: .*agent_task_requests 3 rows \d+ bytes/);
});

test('at the quick_check bound the per-table bytes are listed; one byte past it only the rows', () => {
  const db = new Database(':memory:');
  try {
    db.exec('CREATE TABLE small (x INTEGER); CREATE INDEX small_x ON small (x); INSERT INTO small VALUES (1), (2);');
    const journal = { db, mode: 'read', paths: { dir: '', db: '' }, close: () => db.close() } as unknown as Journal;
    const { bytes } = journalContents(journal);
    assert.ok(bytes <= MAX_QUICK_CHECK_BYTES);
    assert.deepEqual(journalContents(journal, bytes).tables, [{ table: 'small', rows: 2, bytes: 8192 }]);
    assert.deepEqual(journalContents(journal, bytes - 1).tables, [{ table: 'small', rows: 2, bytes: null }]);
  } finally {
    db.close();
  }
});
