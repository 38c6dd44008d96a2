/** Journal schema step 002: durable command attempts and execution records (command collector). */
import type { SqliteDatabase } from '../../native/sqlite.js';

export function migrateCommandAttempts(db: SqliteDatabase): void {
  // One row per attempt, reserved before any container exists; (run, step, generation) is
  // unique and the attempt ID is derived from it. u64 columns are 20-digit text.
  db.exec(`
    CREATE TABLE command_attempts (
      attempt_id TEXT PRIMARY KEY,
      run_id TEXT NOT NULL,
      step_id TEXT NOT NULL,
      generation TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'uncertain')),
      phase TEXT NOT NULL CHECK (phase IN ('reserved', 'container_created', 'finished')),
      outcome TEXT,
      request_digest TEXT NOT NULL,
      request_json BLOB NOT NULL,
      container_name TEXT NOT NULL,
      container_id TEXT,
      snapshot_path TEXT NOT NULL,
      record_json BLOB,
      record_digest TEXT,
      summary TEXT,
      created_at_ms INTEGER NOT NULL,
      updated_at_ms INTEGER NOT NULL,
      UNIQUE (run_id, step_id, generation)
    ) STRICT;
    CREATE INDEX command_attempts_running ON command_attempts (state) WHERE state = 'running';
    CREATE TABLE command_attempt_outputs (
      attempt_id TEXT NOT NULL REFERENCES command_attempts (attempt_id),
      stream TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),
      bytes BLOB NOT NULL,
      PRIMARY KEY (attempt_id, stream)
    ) STRICT;
  `);
}
