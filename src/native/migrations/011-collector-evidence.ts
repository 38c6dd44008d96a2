/**
 * Authority schema step 011: imported collector transfers and v2 receipts move from the journal
 * into the authority (docs/native-store.md "Collector evidence"; docs/collector-transfer.md
 * "Where transfers and receipts live"). Owned by src/tasks/collector/ (transfers.ts, receipts.ts).
 *
 * - `collector_transfers`: one row per validated import, keyed by its upload request: the
 *   original signed envelope bytes, their length and SHA-256, the record's outcome and the
 *   answer the import gave (what an exact retry returns). The claim it answers stays in the
 *   journal (`collector_attempts`), so the row names it by id only.
 * - `collector_receipts`: the v2 receipts written when a subject's graph completed with imported
 *   command tasks, one per subject (plan digest), with their canonical bytes.
 * Nothing here is ever updated or deleted.
 *
 * The step copies every row a journal of an earlier build holds (journal step 006), byte for
 * byte and in the same order (transfer `seq`, receipt rowid: the dashboard's cursor), inside the
 * migration's own transaction: a crash leaves the authority at step 010 and the next writing
 * open copies again. The journal is only read (a read-only connection): its tables are never
 * dropped here, so no crash can lose a record.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';

import { journalPaths } from '../journal-db.js';
import { newDatabase, type SqliteDatabase } from '../sqlite.js';

export function migrateCollectorEvidence(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE collector_transfers (
      upload_request_id TEXT PRIMARY KEY,
      attempt_id TEXT NOT NULL UNIQUE,
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

    CREATE TRIGGER collector_transfers_immutable BEFORE UPDATE ON collector_transfers
      BEGIN SELECT RAISE(ABORT, 'imported transfers are immutable'); END;
    CREATE TRIGGER collector_receipts_immutable BEFORE UPDATE ON collector_receipts
      BEGIN SELECT RAISE(ABORT, 'receipts are immutable'); END;
  `);
  copyJournalEvidence(db);
}

const TRANSFER_COLUMNS =
  'upload_request_id, attempt_id, task_id, transfer_digest, length, envelope, outcome, response, imported_at_ms, seq';
const RECEIPT_COLUMNS =
  'receipt_digest, repository, profile, target, change_id, context_digest, plan_digest, receipt, created_at_ms';

/**
 * Copy the journal's transfers and receipts of an earlier build into `db` (idempotent: a row
 * already present is kept). The journal sits at D/skill-workflows/state.sqlite beside
 * D/native/authority.sqlite; absent, or without those tables (written before its step 006), there
 * is nothing to copy (nor for a database that is not a file). Rows are read one at a time (an envelope is at most 16
 * MiB).
 */
export function copyJournalEvidence(db: SqliteDatabase): void {
  // An in-memory or temporary database (a test of the schema alone) has no data directory.
  if (!isAbsolute(db.name)) return;
  const dataDir = dirname(dirname(db.name));
  const path = journalPaths(dataDir).db;
  if (!existsSync(path)) return;
  const journal = newDatabase(path, { readonly: true, fileMustExist: true });
  try {
    const tables = new Set(
      (
        journal
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' " +
              "AND name IN ('collector_transfers', 'collector_receipts')",
          )
          .all() as { name: string }[]
      ).map((row) => row.name),
    );
    journal.exec('BEGIN');
    try {
      if (tables.has('collector_transfers')) {
        const insert = db.prepare(
          `INSERT OR IGNORE INTO collector_transfers (${TRANSFER_COLUMNS}) VALUES (${placeholders(10)})`,
        );
        const rows = journal.prepare(`SELECT ${TRANSFER_COLUMNS} FROM collector_transfers ORDER BY seq`).raw();
        for (const row of rows.iterate()) insert.run(...(row as unknown[]));
      }
      if (tables.has('collector_receipts')) {
        const insert = db.prepare(
          `INSERT OR IGNORE INTO collector_receipts (rowid, ${RECEIPT_COLUMNS}) VALUES (${placeholders(10)})`,
        );
        const rows = journal.prepare(`SELECT rowid, ${RECEIPT_COLUMNS} FROM collector_receipts ORDER BY rowid`).raw();
        for (const row of rows.iterate()) insert.run(...(row as unknown[]));
      }
    } finally {
      journal.exec('COMMIT');
    }
  } finally {
    journal.close();
  }
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}
