/** Journal schema step 003: logical tasks, attempts, assertions and idempotency rows (agent-owned tasks). */
import type { SqliteDatabase } from '../../native/sqlite.js';

// Every retained row keeps its exact canonical bytes and a digest of them, so a reopened journal
// checks what it returns. u64 values (fences) are 20-digit TEXT (sqlite.ts u64ToSql), so text
// order is numeric order. The logic lives in src/tasks/ (docs/agent-tasks.md "Journal tables").
// Tables keyed by their identity are WITHOUT ROWID, so that a commit touches as few b-trees as
// possible (each claim, heartbeat and result is one fsynced journal commit).
export function migrateTasks(db: SqliteDatabase): void {
  db.exec(`
    -- One row per retained logical task identity. last_fence is the highest fence ever issued or
    -- reserved for the task (claims and reconciliations only raise it).
    CREATE TABLE agent_tasks (
      task_id TEXT PRIMARY KEY CHECK (length(task_id) BETWEEN 1 AND 128),
      task_digest TEXT NOT NULL CHECK (length(task_digest) = 64),
      repository TEXT NOT NULL CHECK (length(repository) = 32),
      change_id TEXT NOT NULL,
      profile TEXT NOT NULL,
      step_id TEXT NOT NULL,
      canonical BLOB NOT NULL,
      last_fence TEXT NOT NULL CHECK (length(last_fence) = 20),
      seq INTEGER NOT NULL,
      created_at_ms INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX agent_tasks_scope ON agent_tasks (repository, change_id, profile, step_id, seq);

    -- One row per attempt (fresh execution). state: active (leased or expired — expiry is only
    -- observed at read time), finished (a result was retained), cancelled, replaced (superseded
    -- by explicit reconciliation; superseded_by_fence records the new fence).
    CREATE TABLE agent_task_attempts (
      attempt_id TEXT PRIMARY KEY CHECK (length(attempt_id) BETWEEN 1 AND 128),
      task_id TEXT NOT NULL REFERENCES agent_tasks (task_id),
      attempt_digest TEXT NOT NULL CHECK (length(attempt_digest) = 64),
      canonical BLOB NOT NULL,
      fence TEXT NOT NULL CHECK (length(fence) = 20),
      execution_operation_id TEXT NOT NULL,
      owner_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('active', 'finished', 'cancelled', 'replaced')),
      lease_expires_at_ms INTEGER NOT NULL,
      superseded_by_fence TEXT CHECK (superseded_by_fence IS NULL OR length(superseded_by_fence) = 20),
      created_at_ms INTEGER NOT NULL,
      updated_at_ms INTEGER NOT NULL,
      UNIQUE (task_id, fence),
      UNIQUE (task_id, execution_operation_id),
      CHECK ((state = 'replaced') = (superseded_by_fence IS NOT NULL))
    ) STRICT, WITHOUT ROWID;
    -- At most one attempt per task that is not replaced: two live attempts cannot exist.
    CREATE UNIQUE INDEX agent_task_attempts_current ON agent_task_attempts (task_id) WHERE state <> 'replaced';

    -- One retained (always nonpassing) result per attempt, with its exact canonical bytes.
    CREATE TABLE agent_task_assertions (
      attempt_id TEXT PRIMARY KEY REFERENCES agent_task_attempts (attempt_id),
      task_id TEXT NOT NULL REFERENCES agent_tasks (task_id),
      request_id TEXT NOT NULL,
      trust_class TEXT NOT NULL CHECK (trust_class IN ('agent_assertion', 'registered_executor_observation')),
      outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'failed', 'uncertain')),
      canonical BLOB NOT NULL,
      canonical_sha256 TEXT NOT NULL CHECK (length(canonical_sha256) = 64),
      observation_digest TEXT CHECK (observation_digest IS NULL OR length(observation_digest) = 64),
      registration_id TEXT,
      created_at_ms INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;

    -- Idempotency: one request id per (owner, agent), bound to its kind and canonical request
    -- digest; response holds the exact committed outcome bytes returned to an identical retry.
    CREATE TABLE agent_task_requests (
      owner_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      request_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('claim', 'heartbeat', 'cancel', 'reconcile', 'result')),
      request_digest TEXT NOT NULL CHECK (length(request_digest) = 64),
      task_id TEXT NOT NULL REFERENCES agent_tasks (task_id),
      attempt_id TEXT NOT NULL REFERENCES agent_task_attempts (attempt_id),
      response BLOB NOT NULL,
      response_sha256 TEXT NOT NULL CHECK (length(response_sha256) = 64),
      created_at_ms INTEGER NOT NULL,
      PRIMARY KEY (owner_id, agent_id, request_id)
    ) STRICT, WITHOUT ROWID;
  `);
}
