/**
 * Authority schema step 009: revisions as content-addressed trees (docs/native-store.md
 * "Revisions"). Replaces the flat revision_entries listing by trees shared between revisions.
 *
 * A store that already holds revisions of the flat format is refused with
 * STORE_REVISIONS_OUTDATED and left unchanged (the step runs inside the migration transaction,
 * so nothing of it or of earlier steps in the same run is kept): its revision IDs are named by
 * signed collector transfers and receipts, which cannot be re-signed under new IDs, and by the
 * journal, a second database no transaction of this one covers (docs/native-store.md "Stores
 * made before revision trees" gives the way over). A store with no revision yet migrates.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { SqliteDatabase } from '../sqlite.js';

export function migrateTrees(db: SqliteDatabase): void {
  const held = db.prepare('SELECT count(*) AS n FROM revisions').get() as { n: number };
  if (held.n > 0) {
    throw new AgentscmError(
      'STORE_REVISIONS_OUTDATED',
      `this store holds ${held.n} revisions of the flat-manifest format that revision trees replaced; it was ` +
        `left unchanged`,
      {
        hint:
          'keep using the agentscm build that wrote it, or start a new --data-dir and run `agentscm ' +
          'init-repo` for each workspace (docs/native-store.md "Stores made before revision trees")',
      },
    );
  }
  // The referencing tables name revisions(id) by table name: with no revision stored, the
  // table is replaced and every reference keeps pointing at the new one.
  db.exec(`
    DROP TABLE revision_entries;
    DROP TABLE revisions;

    -- One row per directory tree; its entries are in tree_entries. Shared by every revision
    -- (of any repository) whose tree holds that directory with the same content.
    CREATE TABLE trees (
      rowid INTEGER PRIMARY KEY,
      digest TEXT NOT NULL UNIQUE CHECK (length(digest) = 64),
      entry_count INTEGER NOT NULL CHECK (entry_count >= 0)
    ) STRICT;

    -- object is blobs.rowid for file, executable and symlink, trees.rowid for directory: an
    -- integer key instead of a 64-hex digest keeps a tree's rows small (a checkpoint writes
    -- the trees on the changed paths only). Rows are inserted with their trees row, in the
    -- same transaction, and checked against blobs and trees as they are inserted.
    CREATE TABLE tree_entries (
      tree INTEGER NOT NULL,
      name TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('file', 'executable', 'symlink', 'directory')),
      object INTEGER NOT NULL,
      PRIMARY KEY (tree, name)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE revisions (
      rowid INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE CHECK (length(id) = 64),
      parent TEXT REFERENCES revisions(id),
      tree INTEGER NOT NULL REFERENCES trees(rowid),
      entry_count INTEGER NOT NULL,
      total_bytes TEXT NOT NULL CHECK (length(total_bytes) = 20)
    ) STRICT;
  `);
}
