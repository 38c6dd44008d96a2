/**
 * The schema steps of WORKSPACE/.agentscm/workspace.sqlite, numbered by `PRAGMA user_version`
 * (docs/architecture.md "Storage"). Step 2 and 3 carry the rows of older builds over as they
 * are, so that a pending operation left by such a build still reconciles.
 */
import { compareUtf8 } from '../contracts/paths.js';
import type { EntryMode } from '../native/revisions.js';
import { u64FromSql, type Migration, type SqliteDatabase } from '../native/sqlite.js';
import { encodeStatCache, type CachedEntry } from './stat-cache.js';

function migrateWorkspace1(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE workspace (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      state TEXT NOT NULL CHECK (state IN ('binding', 'ready')),
      repository TEXT NOT NULL CHECK (length(repository) = 32),
      data_dir TEXT NOT NULL,
      base_revision TEXT CHECK (base_revision IS NULL OR length(base_revision) = 64),
      generation TEXT NOT NULL CHECK (length(generation) = 20),
      pending_kind TEXT CHECK (pending_kind IS NULL OR pending_kind IN ('init', 'checkpoint')),
      pending_change TEXT,
      pending_expected_version TEXT,
      pending_revision TEXT,
      pending_parent TEXT,
      pending_started_ms INTEGER
    ) STRICT;

    -- The base tree with the stat snapshot taken when it was hashed. cache_valid = 0 marks a
    -- "racily clean" entry whose mtime was too close to the scan to prove it unchanged.
    CREATE TABLE base_entries (
      path TEXT PRIMARY KEY,
      mode TEXT NOT NULL CHECK (mode IN ('file', 'executable', 'symlink')),
      size TEXT NOT NULL,
      blob TEXT NOT NULL,
      st_size INTEGER,
      st_mtime_ms REAL,
      st_ctime_ms REAL,
      st_ino INTEGER,
      cache_valid INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;

    -- The pending operation's effect on base_entries, applied once the authority committed.
    CREATE TABLE staged_entries (
      path TEXT PRIMARY KEY,
      op TEXT NOT NULL CHECK (op IN ('put', 'delete')),
      mode TEXT,
      size TEXT,
      blob TEXT,
      st_size INTEGER,
      st_mtime_ms REAL,
      st_ctime_ms REAL,
      st_ino INTEGER,
      cache_valid INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE last_scan (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      finished_ms INTEGER NOT NULL,
      complete INTEGER NOT NULL,
      file_count INTEGER NOT NULL,
      total_bytes TEXT NOT NULL,
      hashed_files INTEGER NOT NULL,
      problem TEXT
    ) STRICT;
  `);
}

/**
 * Step 2: the per-file base_entries and staged_entries rows become one encoded stat cache per
 * slot. Rows are carried over as they are (the staged slot is the base with the staged
 * changes applied), so a pending operation still reconciles.
 */
function migrateWorkspace2(db: SqliteDatabase): void {
  type Row = [
    string,
    string | null,
    string | null,
    string | null,
    number | null,
    number | null,
    number | null,
    number | null,
    number,
  ];
  const toEntry = (row: Row): CachedEntry | null => {
    const [path, mode, size, blob, stSize, mtimeMs, ctimeMs, ino, valid] = row;
    if (mode === null || size === null || blob === null) return null;
    const stat =
      stSize === null || mtimeMs === null || ctimeMs === null || ino === null
        ? null
        : { size: stSize, mtimeMs, ctimeMs, ino };
    return {
      path,
      mode: mode as EntryMode,
      size: u64FromSql(size),
      blob,
      stat,
      cacheValid: valid === 1 && stat !== null,
    };
  };
  const base = new Map<string, CachedEntry>();
  for (const row of db
    .prepare('SELECT path, mode, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino, cache_valid FROM base_entries')
    .raw(true)
    .all() as Row[]) {
    const entry = toEntry(row);
    if (entry !== null) base.set(entry.path, entry);
  }
  db.exec(`
    CREATE TABLE stat_cache (
      slot TEXT PRIMARY KEY CHECK (slot IN ('base', 'staged')),
      data BLOB NOT NULL
    ) STRICT;
  `);
  const sorted = (map: Map<string, CachedEntry>): CachedEntry[] =>
    [...map.values()].sort((a, b) => compareUtf8(a.path, b.path));
  db.prepare("INSERT INTO stat_cache (slot, data) VALUES ('base', ?)").run(encodeStatCache(sorted(base)));
  const pending = db.prepare('SELECT pending_kind FROM workspace WHERE singleton = 1').get() as
    { pending_kind: string | null } | undefined;
  if (pending?.pending_kind !== undefined && pending.pending_kind !== null) {
    const staged = new Map(base);
    for (const row of db
      .prepare(
        `SELECT path, CASE op WHEN 'put' THEN mode END, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino,
           cache_valid FROM staged_entries`,
      )
      .raw(true)
      .all() as Row[]) {
      const entry = toEntry(row);
      if (entry === null) staged.delete(row[0]);
      else staged.set(entry.path, entry);
    }
    db.prepare("INSERT INTO stat_cache (slot, data) VALUES ('staged', ?)").run(encodeStatCache(sorted(staged)));
  }
  db.exec('DROP TABLE base_entries; DROP TABLE staged_entries;');
}

/**
 * Step 3: each stat cache is a row of its own (`stat_caches`) that the workspace row points at
 * (`base_cache`, and `pending_cache` while an operation is pending), so that a checkpoint
 * writes its new cache once: the pending operation inserts it, and adopting the operation moves
 * the pointer instead of copying the cache over the base. The two slots carry over as they are.
 */
function migrateWorkspace3(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE stat_caches (
      id INTEGER PRIMARY KEY,
      data BLOB NOT NULL
    ) STRICT;
    ALTER TABLE workspace ADD COLUMN base_cache INTEGER;
    ALTER TABLE workspace ADD COLUMN pending_cache INTEGER;
    INSERT INTO stat_caches (id, data) SELECT CASE slot WHEN 'base' THEN 1 ELSE 2 END, data FROM stat_cache;
    UPDATE workspace SET
      base_cache = (SELECT 1 FROM stat_cache WHERE slot = 'base'),
      pending_cache = (SELECT 2 FROM stat_cache WHERE slot = 'staged');
    DROP TABLE stat_cache;
  `);
}

export const WORKSPACE_MIGRATIONS: readonly Migration[] = [migrateWorkspace1, migrateWorkspace2, migrateWorkspace3];
