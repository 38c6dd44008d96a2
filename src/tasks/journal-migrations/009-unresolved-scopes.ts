/**
 * Journal schema step 009: the unresolved attempts of each scope, kept beside the attempts so
 * that the bounded older-subject rule (docs/agent-tasks.md "State machine") costs the same on a
 * journal of a hundred tasks and on one of a hundred thousand (docs/agent-tasks.md "Journal
 * growth").
 *
 * `agent_task_unresolved` holds one row per retained task whose current attempt is unresolved
 * (state active or cancelled; at most one attempt per task is not replaced), keyed by the task's
 * scope — repository, Change, profile and step, the columns of `agent_tasks_scope` — and its
 * seq. Triggers on `agent_task_attempts` maintain it inside the transaction that changes an
 * attempt, so no code path can leave it behind: an inserted unresolved attempt adds its task, a
 * state change adds or removes it by what the task's current attempt is after the change.
 * Existing unresolved attempts are copied in.
 */
import type { SqliteDatabase } from '../../native/sqlite.js';

/** The task of the attempt row `row` is unresolved now (its current attempt is active or cancelled). */
const UNRESOLVED = (row: string): string =>
  `EXISTS (SELECT 1 FROM agent_task_attempts c WHERE c.task_seq = ${row}.task_seq
     AND c.superseded_by_fence IS NULL AND c.state IN ('active', 'cancelled'))`;

const ADD = (row: string): string => `INSERT OR IGNORE INTO agent_task_unresolved
      (repository, change_id, profile, step_id, task_seq)
      SELECT repository, change_id, profile, step_id, seq FROM agent_tasks WHERE seq = ${row}.task_seq`;

export function migrateUnresolvedScopes(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE agent_task_unresolved (
      repository TEXT NOT NULL,
      change_id TEXT NOT NULL,
      profile TEXT NOT NULL,
      step_id TEXT NOT NULL,
      task_seq INTEGER NOT NULL,
      PRIMARY KEY (repository, change_id, profile, step_id, task_seq)
    ) STRICT, WITHOUT ROWID;

    INSERT INTO agent_task_unresolved (repository, change_id, profile, step_id, task_seq)
      SELECT t.repository, t.change_id, t.profile, t.step_id, t.seq
      FROM agent_task_attempts a JOIN agent_tasks t ON t.seq = a.task_seq
      WHERE a.superseded_by_fence IS NULL AND a.state IN ('active', 'cancelled');

    CREATE TRIGGER agent_task_unresolved_on_insert AFTER INSERT ON agent_task_attempts
      WHEN NEW.state IN ('active', 'cancelled')
    BEGIN
      ${ADD('NEW')};
    END;

    CREATE TRIGGER agent_task_unresolved_on_update AFTER UPDATE OF state, superseded_by_fence ON agent_task_attempts
    BEGIN
      ${ADD('NEW')} AND ${UNRESOLVED('NEW')};
      DELETE FROM agent_task_unresolved
        WHERE (repository, change_id, profile, step_id, task_seq) =
          (SELECT repository, change_id, profile, step_id, seq FROM agent_tasks WHERE seq = NEW.task_seq)
        AND NOT ${UNRESOLVED('NEW')};
    END;

    CREATE TRIGGER agent_task_unresolved_on_delete AFTER DELETE ON agent_task_attempts
    BEGIN
      DELETE FROM agent_task_unresolved
        WHERE (repository, change_id, profile, step_id, task_seq) =
          (SELECT repository, change_id, profile, step_id, seq FROM agent_tasks WHERE seq = OLD.task_seq)
        AND NOT ${UNRESOLVED('OLD')};
    END;
  `);
}
