/**
 * Authority schema step 001: repositories, blobs, revisions and entries, Changes and versions, policy epochs, targets
 * (foundation). Owned by the module that reads and writes these tables.
 */
import type { SqliteDatabase } from '../sqlite.js';

// u64 columns (sizes, versions, epochs) are 20-digit TEXT (sqlite.ts u64ToSql). `seq` columns
// are store-local creation order, never part of any identity.
export function migrateStore(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE repositories (
      id TEXT PRIMARY KEY CHECK (length(id) = 32),
      name TEXT NOT NULL UNIQUE,
      seq INTEGER NOT NULL UNIQUE
    ) STRICT;

    -- A blob up to one chunk keeps its bytes inline; a larger one lives in blob_chunks.
    CREATE TABLE blobs (
      rowid INTEGER PRIMARY KEY,
      digest TEXT NOT NULL UNIQUE CHECK (length(digest) = 64),
      size TEXT NOT NULL CHECK (length(size) = 20),
      chunk_count INTEGER NOT NULL CHECK (chunk_count >= 0),
      data BLOB
    ) STRICT;

    CREATE TABLE blob_chunks (
      blob INTEGER NOT NULL REFERENCES blobs(rowid),
      seq INTEGER NOT NULL,
      data BLOB NOT NULL,
      UNIQUE (blob, seq)
    ) STRICT;

    -- Revisions are content-addressed and shared by every repository that records them.
    CREATE TABLE revisions (
      rowid INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE CHECK (length(id) = 64),
      parent TEXT REFERENCES revisions(id),
      entry_count INTEGER NOT NULL,
      total_bytes TEXT NOT NULL CHECK (length(total_bytes) = 20)
    ) STRICT;

    -- Keyed by the revision's rowid: a 64-hex key in each of thousands of rows would double them.
    -- No foreign key on revision: rows are only ever inserted right after their revisions row,
    -- in the same transaction, and a per-row check would double the cost of a checkpoint.
    CREATE TABLE revision_entries (
      revision INTEGER NOT NULL,
      path TEXT NOT NULL,
      mode TEXT NOT NULL CHECK (mode IN ('file', 'executable', 'symlink')),
      size TEXT NOT NULL CHECK (length(size) = 20),
      blob TEXT NOT NULL,
      PRIMARY KEY (revision, path)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE repository_revisions (
      repository TEXT NOT NULL REFERENCES repositories(id),
      revision TEXT NOT NULL REFERENCES revisions(id),
      seq INTEGER NOT NULL UNIQUE,
      PRIMARY KEY (repository, revision)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE changes (
      repository TEXT NOT NULL REFERENCES repositories(id),
      id TEXT NOT NULL,
      current_version TEXT NOT NULL CHECK (length(current_version) = 20),
      seq INTEGER NOT NULL UNIQUE,
      PRIMARY KEY (repository, id)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE change_versions (
      repository TEXT NOT NULL,
      change TEXT NOT NULL,
      version TEXT NOT NULL CHECK (length(version) = 20),
      revision TEXT NOT NULL REFERENCES revisions(id),
      previous_revision TEXT REFERENCES revisions(id),
      seq INTEGER NOT NULL UNIQUE,
      PRIMARY KEY (repository, change, version),
      FOREIGN KEY (repository, change) REFERENCES changes(repository, id)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE policy_epochs (
      repository TEXT PRIMARY KEY REFERENCES repositories(id),
      epoch TEXT NOT NULL CHECK (length(epoch) = 20)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE targets (
      repository TEXT NOT NULL REFERENCES repositories(id),
      name TEXT NOT NULL,
      revision TEXT NOT NULL REFERENCES revisions(id),
      PRIMARY KEY (repository, name)
    ) STRICT, WITHOUT ROWID;
  `);
}
