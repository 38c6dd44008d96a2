/**
 * Journal schema step 008: the last bytes of a command attempt's output past its retained head
 * (docs/skill-workflows.md "Status view"). An attempt retains the first bytes of stdout and stderr
 * up to its recipe's output bound (command_attempt_outputs); when a stream was cut there, its last
 * 16 KiB (at most) are kept here too, so that a failed step's status can show how the output ended.
 * Written once with the attempt's first record, never rewritten.
 */
import type { SqliteDatabase } from '../../native/sqlite.js';

export function migrateOutputTails(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE command_attempt_output_tails (
      attempt_id TEXT NOT NULL REFERENCES command_attempts (attempt_id),
      stream TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),
      bytes BLOB NOT NULL CHECK (length(bytes) <= 16384),
      PRIMARY KEY (attempt_id, stream)
    ) STRICT;
  `);
}
