/** Journal schema step 001: runs, steps, observations and the journal lease (skill workflows). */
import type { SqliteDatabase } from '../../native/sqlite.js';

// The CHECK lists of run and step states, interpolated: the stored schema text keeps them on one line.
const RUN_STATES = "'running', 'completed', 'completed_with_omissions', 'failed', 'blocked', 'cancelled'";
const STEP_STATES = "'pending', 'running', 'succeeded', 'failed', 'unavailable', 'uncertain', 'skipped'";

// A run retains the canonical definition it was started with and the plan/skill identities
// compiled from it; steps are stored in execution order (position) with their canonical
// result bytes and a digest of them, so a reopened journal can check its own records.
// u64 values (policy epoch) are 20-digit TEXT (sqlite.ts u64ToSql).
export function migrateRuns(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE workflow_runs (
      run_id TEXT PRIMARY KEY CHECK (length(run_id) BETWEEN 1 AND 128),
      name TEXT NOT NULL,
      plan_digest TEXT NOT NULL CHECK (length(plan_digest) = 64),
      skill_digest TEXT NOT NULL CHECK (length(skill_digest) = 64),
      definition BLOB NOT NULL,
      definition_sha256 TEXT NOT NULL CHECK (length(definition_sha256) = 64),
      repository TEXT NOT NULL CHECK (length(repository) = 32),
      revision TEXT NOT NULL CHECK (length(revision) = 64),
      policy_epoch TEXT NOT NULL CHECK (length(policy_epoch) = 20),
      step_count INTEGER NOT NULL CHECK (step_count BETWEEN 1 AND 32),
      state TEXT NOT NULL CHECK (state IN (${RUN_STATES})),
      state_reason TEXT,
      created_at_ms INTEGER NOT NULL,
      updated_at_ms INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE workflow_steps (
      run_id TEXT NOT NULL REFERENCES workflow_runs(run_id),
      position INTEGER NOT NULL CHECK (position BETWEEN 0 AND 31),
      step_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('source_paths', 'command', 'require_capability')),
      required INTEGER NOT NULL CHECK (required IN (0, 1)),
      state TEXT NOT NULL CHECK (state IN (${STEP_STATES})),
      result BLOB,
      result_sha256 TEXT CHECK (result_sha256 IS NULL OR length(result_sha256) = 64),
      started_at_ms INTEGER,
      finished_at_ms INTEGER,
      PRIMARY KEY (run_id, step_id),
      UNIQUE (run_id, position)
    ) STRICT;

    -- One controller per run: a holder with an expiry, taken and renewed in BEGIN IMMEDIATE.
    CREATE TABLE workflow_leases (
      run_id TEXT PRIMARY KEY,
      holder TEXT NOT NULL,
      host TEXT NOT NULL,
      pid INTEGER NOT NULL,
      operation TEXT NOT NULL,
      acquired_at_ms INTEGER NOT NULL,
      expires_at_ms INTEGER NOT NULL
    ) STRICT;
  `);
}
