/**
 * Authority schema step 010: receipts of completed server-executed runs (docs/admission.md "The server-executed path").
 * Owned by src/native/server-run-receipts.ts.
 */
import type { SqliteDatabase } from '../sqlite.js';

// The server-executed Stop loop copies the exact-subject receipt of a completed run into the
// authority (docs/admission.md "The server-executed path": the loop revalidates the graph and copies
// an exact-subject receipt into native authority). One immutable row per receipt digest: the
// subject it binds, the run, and the receipt's canonical bytes. u64 values are 20-digit TEXT.
export function migrateServerRunReceipts(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE server_run_receipts (
      receipt_digest TEXT PRIMARY KEY CHECK (length(receipt_digest) = 64),
      repository TEXT NOT NULL REFERENCES repositories(id),
      change_id TEXT NOT NULL,
      change_version TEXT NOT NULL CHECK (length(change_version) = 20),
      revision TEXT NOT NULL CHECK (length(revision) = 64),
      context_digest TEXT NOT NULL CHECK (length(context_digest) = 64),
      policy_epoch TEXT NOT NULL CHECK (length(policy_epoch) = 20),
      target TEXT NOT NULL,
      requirement_digest TEXT NOT NULL CHECK (length(requirement_digest) = 64),
      plan_digest TEXT NOT NULL CHECK (length(plan_digest) = 64),
      run_id TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('completed', 'completed_with_omissions')),
      receipt BLOB NOT NULL,
      recorded_at_ms INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX server_run_receipts_by_change ON server_run_receipts (repository, change_id, change_version);

    CREATE TRIGGER server_run_receipts_immutable_update BEFORE UPDATE ON server_run_receipts
      BEGIN SELECT RAISE(ABORT, 'server-run receipts are immutable'); END;
    CREATE TRIGGER server_run_receipts_immutable_delete BEFORE DELETE ON server_run_receipts
      BEGIN SELECT RAISE(ABORT, 'server-run receipts are immutable'); END;
  `);
}
