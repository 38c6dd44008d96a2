/**
 * Journal schema step 005: execution records are append-only, and a run can be halted.
 *
 * - `command_attempt_records`: every record an attempt was ever finished or reconciled with, in
 *   order (`seq` from 1). A record, once written, is never rewritten: reconciliation (recover,
 *   cancel of an orphaned or uncertain attempt) appends a record that names the digest of the
 *   previous one, and `command_attempts` keeps the newest as the attempt's current record, which
 *   the step follows. Existing finished attempts get their one record as seq 1.
 * - `workflow_runs.halted_reason`: set when continuation stopped because the run's binding
 *   changed (policy epoch, revision, Change or context); such a run is `blocked` with that reason
 *   whatever its steps later record, because no new work can ever start under its binding.
 */
import type { SqliteDatabase } from '../../native/sqlite.js';

export function migrateAttemptRecords(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE command_attempt_records (
      attempt_id TEXT NOT NULL REFERENCES command_attempts (attempt_id),
      seq INTEGER NOT NULL CHECK (seq >= 1),
      record_json BLOB NOT NULL,
      record_digest TEXT NOT NULL CHECK (length(record_digest) = 64),
      previous_record_digest TEXT CHECK (previous_record_digest IS NULL OR length(previous_record_digest) = 64),
      state TEXT NOT NULL CHECK (state IN ('succeeded', 'failed', 'uncertain')),
      created_at_ms INTEGER NOT NULL,
      PRIMARY KEY (attempt_id, seq),
      UNIQUE (attempt_id, record_digest)
    ) STRICT;
    INSERT INTO command_attempt_records (attempt_id, seq, record_json, record_digest, previous_record_digest, state,
        created_at_ms)
      SELECT attempt_id, 1, record_json, record_digest, NULL, state, updated_at_ms FROM command_attempts
      WHERE state <> 'running' AND record_json IS NOT NULL AND record_digest IS NOT NULL AND length(record_digest) = 64;
    ALTER TABLE workflow_runs ADD COLUMN halted_reason TEXT;
  `);
}
