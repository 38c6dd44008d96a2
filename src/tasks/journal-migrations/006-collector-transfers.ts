/**
 * Journal schema step 006: the authority side of collector transfers (docs/collector-transfer.md
 * "Import"). The rows live in the journal beside the task attempts they finish, so that one
 * journal transaction (under the native writer reservation) claims or imports atomically.
 *
 * - `collector_attempts`: one row per `collector_claim` attempt: the installed profile, the
 *   originating grant and its generation, the fresh upload request id and the exact descriptor
 *   bytes the claim answered.
 * - `collector_transfers`: one row per validated import, keyed by its upload request: the
 *   original signed envelope bytes, their length and SHA-256, the record's outcome and the
 *   answer the import gave (what an exact retry returns).
 * - `collector_receipts`: the v2 receipts written when a subject's graph completed with imported
 *   command tasks, one per subject (plan digest), with their canonical bytes.
 * Nothing here is ever updated or deleted.
 */
import type { SqliteDatabase } from '../../native/sqlite.js';

export function migrateCollectorTransfers(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE collector_attempts (
      attempt_id TEXT PRIMARY KEY,
      task_id TEXT NOT NULL,
      collector_profile_id TEXT NOT NULL CHECK (length(collector_profile_id) = 64),
      origin_owner_id TEXT NOT NULL,
      origin_agent_id TEXT NOT NULL,
      grant_id TEXT NOT NULL,
      grant_generation TEXT NOT NULL CHECK (length(grant_generation) = 20),
      upload_request_id TEXT NOT NULL UNIQUE,
      descriptor BLOB NOT NULL,
      created_at_ms INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX collector_attempts_by_task ON collector_attempts (task_id);

    CREATE TABLE collector_transfers (
      upload_request_id TEXT PRIMARY KEY REFERENCES collector_attempts (upload_request_id),
      attempt_id TEXT NOT NULL UNIQUE REFERENCES collector_attempts (attempt_id),
      task_id TEXT NOT NULL,
      transfer_digest TEXT NOT NULL CHECK (length(transfer_digest) = 64),
      length INTEGER NOT NULL CHECK (length > 0 AND length <= 16777216),
      envelope BLOB NOT NULL,
      outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'failed', 'unavailable', 'uncertain')),
      response BLOB NOT NULL,
      imported_at_ms INTEGER NOT NULL,
      seq INTEGER NOT NULL UNIQUE
    ) STRICT;
    CREATE INDEX collector_transfers_by_task ON collector_transfers (task_id);

    CREATE TABLE collector_receipts (
      receipt_digest TEXT PRIMARY KEY CHECK (length(receipt_digest) = 64),
      repository TEXT NOT NULL,
      profile TEXT NOT NULL,
      target TEXT NOT NULL,
      change_id TEXT NOT NULL,
      context_digest TEXT NOT NULL,
      plan_digest TEXT NOT NULL,
      receipt BLOB NOT NULL,
      created_at_ms INTEGER NOT NULL,
      UNIQUE (repository, profile, target, change_id, context_digest, plan_digest)
    ) STRICT;

    CREATE TRIGGER collector_attempts_immutable BEFORE UPDATE ON collector_attempts
      BEGIN SELECT RAISE(ABORT, 'collector attempts are immutable'); END;
    CREATE TRIGGER collector_transfers_immutable BEFORE UPDATE ON collector_transfers
      BEGIN SELECT RAISE(ABORT, 'imported transfers are immutable'); END;
    CREATE TRIGGER collector_receipts_immutable BEFORE UPDATE ON collector_receipts
      BEGIN SELECT RAISE(ABORT, 'receipts are immutable'); END;
  `);
}
