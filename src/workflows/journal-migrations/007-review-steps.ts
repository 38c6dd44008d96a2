/**
 * Journal schema step 007: a workflow step may be a review step (docs/review.md "Review steps in
 * runs"). SQLite cannot change a CHECK constraint in place, so workflow_steps is rebuilt with the
 * same columns and rows and the wider kind constraint; no other table references it.
 */
import type { SqliteDatabase } from '../../native/sqlite.js';

// Interpolated: the stored schema text keeps the list on one line, as step 001 wrote it.
const STEP_STATES = "'pending', 'running', 'succeeded', 'failed', 'unavailable', 'uncertain', 'skipped'";

export function migrateReviewSteps(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE workflow_steps_007 (
      run_id TEXT NOT NULL REFERENCES workflow_runs(run_id),
      position INTEGER NOT NULL CHECK (position BETWEEN 0 AND 31),
      step_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('source_paths', 'command', 'require_capability', 'review')),
      required INTEGER NOT NULL CHECK (required IN (0, 1)),
      state TEXT NOT NULL CHECK (state IN (${STEP_STATES})),
      result BLOB,
      result_sha256 TEXT CHECK (result_sha256 IS NULL OR length(result_sha256) = 64),
      started_at_ms INTEGER,
      finished_at_ms INTEGER,
      PRIMARY KEY (run_id, step_id),
      UNIQUE (run_id, position)
    ) STRICT;
    INSERT INTO workflow_steps_007 (run_id, position, step_id, kind, required, state, result, result_sha256,
        started_at_ms, finished_at_ms)
      SELECT run_id, position, step_id, kind, required, state, result, result_sha256, started_at_ms, finished_at_ms
      FROM workflow_steps;
    DROP TABLE workflow_steps;
    ALTER TABLE workflow_steps_007 RENAME TO workflow_steps;
  `);
}
