/**
 * The older-subject rule answered from `agent_task_unresolved` (journal step 9, docs/agent-tasks.md
 * "Journal growth") gives exactly the answers of the scan it replaces: the newest of the newest
 * MAX_SCOPE_SCAN other identities of the scope whose attempt is active or cancelled. Checked
 * against that scan on random journals whose attempts are inserted, finished, cancelled and
 * replaced by SQL (the triggers keep the table), at the bound and one past it, and after the
 * migration copies the unresolved attempts of an older journal.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import Database from 'better-sqlite3';

import type { WorkflowTask } from '../../src/contracts/task/task.js';
import type { Journal } from '../../src/native/journal-db.js';
import { MAX_SCOPE_SCAN, olderUnresolvedTask, olderUnresolvedTaskId } from '../../src/tasks/journal-rows.js';
import { JOURNAL_MIGRATIONS } from '../../src/tasks/store.js';

const REPOSITORY = 'r'.repeat(32);

function journalAt(version: number): Journal {
  const db = new Database(':memory:');
  JOURNAL_MIGRATIONS.slice(0, version).forEach((step) => step(db));
  return { db, mode: 'write', paths: { dir: '', db: '' }, close: () => db.close() } as unknown as Journal;
}

/** A task subject as the rule reads it (only the scope columns). */
function scopeTask(change: string, step: string): WorkflowTask {
  return { subject: { repository: REPOSITORY, change_id: change, profile: 'default', step_id: step } } as WorkflowTask;
}

function addTask(journal: Journal, id: string, change: string, step: string): number {
  return Number(
    journal.db
      .prepare(
        `INSERT INTO agent_tasks (task_id, task_digest, repository, change_id, profile, step_id, canonical,
          last_fence, created_at_ms) VALUES (?, ?, ?, ?, 'default', ?, x'00', '00000000000000000001', 0)`,
      )
      .run(id, 'a'.repeat(64), REPOSITORY, change, step).lastInsertRowid,
  );
}

function addAttempt(journal: Journal, taskSeq: number, fence: number, state: string): void {
  journal.db
    .prepare(
      `INSERT INTO agent_task_attempts (task_seq, fence, attempt_id, attempt_digest, canonical,
        execution_operation_id, owner_id, agent_id, state, lease_expires_at_ms, superseded_by_fence,
        created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, x'00', ?, 'o', 'a', ?, 0, NULL, 0, 0)`,
    )
    .run(
      taskSeq,
      String(fence).padStart(20, '0'),
      `a-${taskSeq}-${fence}`,
      'b'.repeat(64),
      `op-${taskSeq}-${fence}`,
      state,
    );
}

function setState(journal: Journal, taskSeq: number, state: string): void {
  journal.db
    .prepare('UPDATE agent_task_attempts SET state = ? WHERE task_seq = ? AND superseded_by_fence IS NULL')
    .run(state, taskSeq);
}

/** Replace the task's current attempt by a new one at the next fence (reconcile). */
function replace(journal: Journal, taskSeq: number, state: string): void {
  const { fence } = journal.db
    .prepare('SELECT max(CAST(fence AS INTEGER)) AS fence FROM agent_task_attempts WHERE task_seq = ?')
    .get(taskSeq) as { fence: number };
  journal.db
    .prepare(
      `UPDATE agent_task_attempts SET state = 'replaced', superseded_by_fence = ?
       WHERE task_seq = ? AND superseded_by_fence IS NULL`,
    )
    .run(String(fence + 1).padStart(20, '0'), taskSeq);
  addAttempt(journal, taskSeq, fence + 1, state);
}

/** The scan the table replaces (journal step 8's statement), as the reference answer. */
function referenceScan(journal: Journal, task: WorkflowTask, exceptSeq: number | null, bound: number): string | null {
  const s = task.subject;
  const scope = [s.repository, s.change_id, s.profile, s.step_id, exceptSeq ?? -1];
  const row = journal.db
    .prepare(
      `SELECT (SELECT task_id FROM agent_tasks WHERE seq = o.seq) AS task_id FROM (
         SELECT seq FROM agent_tasks
         WHERE repository = ? AND change_id = ? AND profile = ? AND step_id = ? AND seq <> ?
         ORDER BY seq DESC LIMIT ${bound}
       ) o
       WHERE EXISTS (
         SELECT 1 FROM agent_task_attempts a WHERE a.task_seq = o.seq AND a.state IN ('active', 'cancelled')
       )
       ORDER BY o.seq DESC LIMIT 1`,
    )
    .get(...scope) as { task_id: string } | undefined;
  return row?.task_id ?? null;
}

/** A small deterministic generator (the seed is in the failure message). */
function generator(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

test('the unresolved table answers as the scan on random journals', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const random = generator(seed);
    const journal = journalAt(JOURNAL_MIGRATIONS.length);
    try {
      const seqs: { seq: number; change: string; step: string }[] = [];
      const scopes = [
        ['c1', 's1'],
        ['c1', 's2'],
        ['c2', 's1'],
      ] as const;
      for (let i = 0; i < 60; i++) {
        const [change, step] = scopes[Math.floor(random() * scopes.length)] ?? scopes[0];
        const seq = addTask(journal, `t-${seed}-${i}`, change, step);
        seqs.push({ seq, change, step });
        const pick = random();
        if (pick < 0.7) addAttempt(journal, seq, 1, pick < 0.3 ? 'active' : pick < 0.4 ? 'cancelled' : 'finished');
      }
      // Later transitions: results, cancels, reconciles.
      for (let i = 0; i < 40; i++) {
        const target = seqs[Math.floor(random() * seqs.length)];
        if (target === undefined) continue;
        const has = journal.db.prepare('SELECT 1 FROM agent_task_attempts WHERE task_seq = ?').get(target.seq);
        if (has === undefined) continue;
        const pick = random();
        if (pick < 0.3) setState(journal, target.seq, 'finished');
        else if (pick < 0.5) setState(journal, target.seq, 'cancelled');
        else replace(journal, target.seq, pick < 0.8 ? 'active' : 'finished');
      }
      for (const [change, step] of scopes) {
        const task = scopeTask(change, step);
        const candidates: (number | null)[] = [
          null,
          ...seqs.filter((s) => s.change === change && s.step === step).map((s) => s.seq),
        ];
        for (const except of candidates) {
          assert.equal(
            olderUnresolvedTaskId(journal, task, except),
            referenceScan(journal, task, except, MAX_SCOPE_SCAN),
            `seed ${seed}, scope ${change}/${step}, except ${String(except)}`,
          );
        }
      }
    } finally {
      journal.close();
    }
  }
});

/** A scope of `count` finished identities with one unresolved identity `newer` places from the newest. */
function scopeWithUnresolvedAt(newer: number, count: number): { journal: Journal; unresolved: string } {
  const journal = journalAt(JOURNAL_MIGRATIONS.length);
  const position = count - 1 - newer;
  journal.db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const seq = addTask(journal, `t-${i}`, 'c1', 's1');
      addAttempt(journal, seq, 1, i === position ? 'active' : 'finished');
    }
  })();
  return { journal, unresolved: `t-${position}` };
}

test(`an unresolved identity that is the ${MAX_SCOPE_SCAN}th newest is found; one older is not`, () => {
  const task = scopeTask('c1', 's1');
  const within = scopeWithUnresolvedAt(MAX_SCOPE_SCAN - 1, MAX_SCOPE_SCAN + 1);
  try {
    assert.equal(olderUnresolvedTaskId(within.journal, task, null), within.unresolved);
    assert.equal(referenceScan(within.journal, task, null, MAX_SCOPE_SCAN), within.unresolved);
    assert.deepEqual(olderUnresolvedTask(within.journal, task, null), { exceeded: true, task_id: within.unresolved });
    // The task's own identity, newer than it, is not counted.
    const own = Number((within.journal.db.prepare('SELECT max(seq) AS s FROM agent_tasks').get() as { s: number }).s);
    assert.deepEqual(olderUnresolvedTask(within.journal, task, own), { exceeded: false, task_id: within.unresolved });
  } finally {
    within.journal.close();
  }
  const past = scopeWithUnresolvedAt(MAX_SCOPE_SCAN, MAX_SCOPE_SCAN + 2);
  try {
    assert.equal(olderUnresolvedTaskId(past.journal, task, null), null);
    assert.equal(referenceScan(past.journal, task, null, MAX_SCOPE_SCAN), null);
    assert.equal(referenceScan(past.journal, task, null, MAX_SCOPE_SCAN + 1), past.unresolved);
  } finally {
    past.journal.close();
  }
});

test('journal step 9 copies the unresolved attempts of an older journal', () => {
  const journal = journalAt(8);
  try {
    const active = addTask(journal, 't-active', 'c1', 's1');
    addAttempt(journal, active, 1, 'active');
    const cancelled = addTask(journal, 't-cancelled', 'c1', 's1');
    addAttempt(journal, cancelled, 1, 'cancelled');
    const finished = addTask(journal, 't-finished', 'c1', 's1');
    addAttempt(journal, finished, 1, 'finished');
    const step = JOURNAL_MIGRATIONS[8];
    assert.ok(step !== undefined);
    step(journal.db);
    assert.deepEqual(journal.db.prepare('SELECT task_seq FROM agent_task_unresolved ORDER BY task_seq').all(), [
      { task_seq: active },
      { task_seq: cancelled },
    ]);
    assert.equal(olderUnresolvedTaskId(journal, scopeTask('c1', 's1'), null), 't-cancelled');
    setState(journal, cancelled, 'finished');
    assert.equal(olderUnresolvedTaskId(journal, scopeTask('c1', 's1'), null), 't-active');
  } finally {
    journal.close();
  }
});
