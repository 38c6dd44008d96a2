/**
 * Authority schema step 003: command/v1 review contexts (command collector). Owned by the module that reads and writes
 * these tables.
 */
import type { SqliteDatabase } from '../sqlite.js';

export function migrateReviewContexts(db: SqliteDatabase): void {
  // A context is immutable and keyed by its digest; `canonical` holds the exact bytes the
  // digest covers, the other columns are indexed copies of its fields. u64 columns are
  // 20-digit text (sqlite.ts u64ToSql).
  db.exec(`
    CREATE TABLE review_contexts (
      repository TEXT NOT NULL REFERENCES repositories(id),
      context_digest TEXT NOT NULL CHECK (length(context_digest) = 64),
      change_id TEXT NOT NULL,
      change_version TEXT NOT NULL CHECK (length(change_version) = 20),
      revision TEXT NOT NULL CHECK (length(revision) = 64),
      policy_epoch TEXT NOT NULL CHECK (length(policy_epoch) = 20),
      recipe_path TEXT NOT NULL,
      recipe_digest TEXT NOT NULL CHECK (length(recipe_digest) = 64),
      toolchain TEXT NOT NULL,
      environment TEXT NOT NULL,
      canonical BLOB NOT NULL,
      created_at_ms INTEGER NOT NULL,
      PRIMARY KEY (repository, context_digest)
    ) STRICT;
    CREATE INDEX review_contexts_change ON review_contexts (repository, change_id, change_version);
  `);
}
