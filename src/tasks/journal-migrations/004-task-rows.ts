/**
 * Journal schema step 004: the agent-task tables laid out so that each transition's commit writes
 * few pages (docs/agent-tasks.md "Journal tables", "Benchmark"). Rows and meaning are those of
 * step 003; the layout changes:
 *
 * - `agent_tasks` is a rowid table whose rowid is the retention order `seq`: a task's 1.9 KB
 *   canonical row fits a table leaf instead of spilling into an overflow page of a WITHOUT ROWID
 *   b-tree, a new task appends to the last leaf, and the next seq is the rowid SQLite assigns
 *   (no `max(seq)` scan). `task_id` is a UNIQUE index; the scope index ends in the rowid.
 * - attempts and assertions are rowid tables (appended: a full leaf gets a new right sibling
 *   instead of a rebalance of its neighbours, which a WITHOUT ROWID b-tree does on every split)
 *   with a UNIQUE index on `(task_seq, fence)`: a new task's entries append next to the previous
 *   ones, and a task's attempts are one index range, which answers its current attempt, its
 *   attempt count and its used execution identities.
 * - the one-current-attempt index is partial on `superseded_by_fence IS NULL` (equivalent to
 *   `state <> 'replaced'` by the CHECK): a heartbeat or a result, which never supersede, leave it
 *   untouched; only a reconcile removes an entry.
 * - idempotency rows are a rowid table (appended) with a UNIQUE index on (owner, agent,
 *   request_id), instead of ~1 KB rows splitting a WITHOUT ROWID b-tree at random keys.
 * - the unique index on (task, execution_operation_id) is not kept: a claim refuses a used
 *   execution identity itself, inside its BEGIN IMMEDIATE transaction, by reading the task's
 *   attempt range (at most 1024 rows).
 *
 * Existing rows are copied: tasks keep their retention order, every attempt, assertion and
 * request keeps its exact bytes, digests, states, fences and times.
 */
import type { SqliteDatabase } from '../../native/sqlite.js';

export function migrateTaskRows(db: SqliteDatabase): void {
  db.exec(`
    DROP INDEX agent_tasks_scope;
    DROP INDEX agent_task_attempts_current;
    ALTER TABLE agent_task_requests RENAME TO agent_task_requests_v3;
    ALTER TABLE agent_task_assertions RENAME TO agent_task_assertions_v3;
    ALTER TABLE agent_task_attempts RENAME TO agent_task_attempts_v3;
    ALTER TABLE agent_tasks RENAME TO agent_tasks_v3;

    -- One row per retained logical task identity; seq (the rowid) is the retention order.
    -- last_fence is the highest fence ever issued or reserved for the task.
    CREATE TABLE agent_tasks (
      seq INTEGER PRIMARY KEY,
      task_id TEXT NOT NULL UNIQUE CHECK (length(task_id) BETWEEN 1 AND 128),
      task_digest TEXT NOT NULL CHECK (length(task_digest) = 64),
      repository TEXT NOT NULL CHECK (length(repository) = 32),
      change_id TEXT NOT NULL,
      profile TEXT NOT NULL,
      step_id TEXT NOT NULL,
      canonical BLOB NOT NULL,
      last_fence TEXT NOT NULL CHECK (length(last_fence) = 20),
      created_at_ms INTEGER NOT NULL
    ) STRICT;
    -- The scope of the bounded older-subject scan, newest (highest seq, the implicit last
    -- column) first.
    CREATE INDEX agent_tasks_scope ON agent_tasks (repository, change_id, profile, step_id);

    -- One row per attempt (fresh execution) of the task with rowid task_seq. state: active
    -- (leased or expired — expiry is only observed at read time), finished (a result was
    -- retained), cancelled, replaced (superseded by explicit reconciliation; superseded_by_fence
    -- records the new fence).
    CREATE TABLE agent_task_attempts (
      seq INTEGER PRIMARY KEY,
      task_seq INTEGER NOT NULL REFERENCES agent_tasks (seq),
      fence TEXT NOT NULL CHECK (length(fence) = 20),
      attempt_id TEXT NOT NULL CHECK (length(attempt_id) BETWEEN 1 AND 128),
      attempt_digest TEXT NOT NULL CHECK (length(attempt_digest) = 64),
      canonical BLOB NOT NULL,
      execution_operation_id TEXT NOT NULL,
      owner_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('active', 'finished', 'cancelled', 'replaced')),
      lease_expires_at_ms INTEGER NOT NULL,
      superseded_by_fence TEXT CHECK (superseded_by_fence IS NULL OR length(superseded_by_fence) = 20),
      created_at_ms INTEGER NOT NULL,
      updated_at_ms INTEGER NOT NULL,
      UNIQUE (task_seq, fence),
      CHECK ((state = 'replaced') = (superseded_by_fence IS NOT NULL))
    ) STRICT;
    -- At most one attempt per task that is not replaced: two live attempts cannot exist.
    CREATE UNIQUE INDEX agent_task_attempts_current ON agent_task_attempts (task_seq) WHERE superseded_by_fence IS NULL;

    -- One retained (always nonpassing) result per attempt, with its exact canonical bytes.
    CREATE TABLE agent_task_assertions (
      seq INTEGER PRIMARY KEY,
      task_seq INTEGER NOT NULL,
      fence TEXT NOT NULL,
      attempt_id TEXT NOT NULL,
      task_id TEXT NOT NULL,
      request_id TEXT NOT NULL,
      trust_class TEXT NOT NULL CHECK (trust_class IN ('agent_assertion', 'registered_executor_observation')),
      outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'failed', 'uncertain')),
      canonical BLOB NOT NULL,
      canonical_sha256 TEXT NOT NULL CHECK (length(canonical_sha256) = 64),
      observation_digest TEXT CHECK (observation_digest IS NULL OR length(observation_digest) = 64),
      registration_id TEXT,
      created_at_ms INTEGER NOT NULL,
      UNIQUE (task_seq, fence),
      FOREIGN KEY (task_seq, fence) REFERENCES agent_task_attempts (task_seq, fence)
    ) STRICT;

    -- Idempotency: one request id per (owner, agent), bound to its kind and canonical request
    -- digest; response holds the exact committed outcome bytes returned to an identical retry.
    CREATE TABLE agent_task_requests (
      seq INTEGER PRIMARY KEY,
      owner_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      request_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('claim', 'heartbeat', 'cancel', 'reconcile', 'result')),
      request_digest TEXT NOT NULL CHECK (length(request_digest) = 64),
      task_id TEXT NOT NULL,
      attempt_id TEXT NOT NULL,
      response BLOB NOT NULL,
      response_sha256 TEXT NOT NULL CHECK (length(response_sha256) = 64),
      created_at_ms INTEGER NOT NULL,
      UNIQUE (owner_id, agent_id, request_id)
    ) STRICT;

    INSERT INTO agent_tasks (seq, task_id, task_digest, repository, change_id, profile, step_id, canonical,
        last_fence, created_at_ms)
      SELECT row_number() OVER (ORDER BY seq, task_id), task_id, task_digest, repository, change_id, profile,
        step_id, canonical, last_fence, created_at_ms
      FROM agent_tasks_v3;
    INSERT INTO agent_task_attempts (task_seq, fence, attempt_id, attempt_digest, canonical, execution_operation_id,
        owner_id, agent_id, state, lease_expires_at_ms, superseded_by_fence, created_at_ms, updated_at_ms)
      SELECT t.seq, a.fence, a.attempt_id, a.attempt_digest, a.canonical, a.execution_operation_id, a.owner_id,
        a.agent_id, a.state, a.lease_expires_at_ms, a.superseded_by_fence, a.created_at_ms, a.updated_at_ms
      FROM agent_task_attempts_v3 a JOIN agent_tasks t ON t.task_id = a.task_id ORDER BY t.seq, a.fence;
    INSERT INTO agent_task_assertions (task_seq, fence, attempt_id, task_id, request_id, trust_class, outcome,
        canonical, canonical_sha256, observation_digest, registration_id, created_at_ms)
      SELECT t.seq, a.fence, s.attempt_id, s.task_id, s.request_id, s.trust_class, s.outcome, s.canonical,
        s.canonical_sha256, s.observation_digest, s.registration_id, s.created_at_ms
      FROM agent_task_assertions_v3 s
        JOIN agent_task_attempts_v3 a ON a.attempt_id = s.attempt_id
        JOIN agent_tasks t ON t.task_id = a.task_id
      ORDER BY t.seq, a.fence;
    INSERT INTO agent_task_requests (owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id,
        response, response_sha256, created_at_ms)
      SELECT owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id, response, response_sha256,
        created_at_ms
      FROM agent_task_requests_v3 ORDER BY created_at_ms, owner_id, agent_id, request_id;

    DROP TABLE agent_task_requests_v3;
    DROP TABLE agent_task_assertions_v3;
    DROP TABLE agent_task_attempts_v3;
    DROP TABLE agent_tasks_v3;
  `);
}
