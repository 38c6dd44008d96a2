/**
 * WORKSPACE/.agentscm/workspace.sqlite (ARCHITECTURE.md "Storage"): the repository and data
 * directory binding, base revision, generation, pending operation, last scan and the stat
 * cache of the base tree. Only this module touches that database.
 */
import { existsSync, lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { AgentscmError } from '../contracts/errors.js';
import type { EntryMode, RevisionEntry } from '../native/revisions.js';
import { immediate, openReadOnly, openWritable, readSnapshot, u64FromSql, u64ToSql } from '../native/sqlite.js';
import type { Migration, SqliteDatabase } from '../native/sqlite.js';

export const WORKSPACE_STATE_DIR = '.agentscm';
export const WORKSPACE_DB_NAME = 'workspace.sqlite';
const WHAT = 'the workspace state';

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

export const WORKSPACE_MIGRATIONS: readonly Migration[] = [migrateWorkspace1];

export type WorkspaceLifecycle = 'binding' | 'ready';

export interface PendingOperation {
  readonly kind: 'init' | 'checkpoint';
  /** The Change a checkpoint appends to (null for init). */
  readonly change: string | null;
  /** The Change version the checkpoint expected to find (null: no Change yet, or init). */
  readonly expected_version: bigint | null;
  /** The revision the operation records. */
  readonly revision: string;
  readonly parent: string | null;
  readonly started_ms: number;
}

export interface WorkspaceRecord {
  readonly state: WorkspaceLifecycle;
  readonly repository: string;
  readonly data_dir: string;
  readonly base_revision: string | null;
  readonly generation: bigint;
  readonly pending: PendingOperation | null;
}

/**
 * A stat snapshot: what the cache compares to decide whether a file must be hashed again.
 * Plain-number stats (not bigint): three times cheaper per lstat, and the millisecond float
 * keeps sub-microsecond resolution, which is all the equality test and racy check need.
 */
export interface StatSnapshot {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
}

export interface CachedEntry extends RevisionEntry {
  readonly stat: StatSnapshot | null;
  readonly cacheValid: boolean;
}

export interface StagedChange {
  readonly path: string;
  /** null deletes the path from the base tree. */
  readonly entry: CachedEntry | null;
}

export interface LastScan {
  readonly finished_ms: number;
  readonly complete: boolean;
  readonly file_count: number;
  readonly total_bytes: bigint;
  readonly hashed_files: number;
  readonly problem: string | null;
}

export interface WorkspaceDb {
  readonly db: SqliteDatabase;
  readonly root: string;
  close(): void;
}

/** Absolute path of the state directory and database of a workspace root. */
export function workspaceStatePaths(root: string): { dir: string; db: string; lock: string } {
  const dir = join(root, WORKSPACE_STATE_DIR);
  return { dir, db: join(dir, WORKSPACE_DB_NAME), lock: join(dir, 'lock.sqlite') };
}

function unsafe(path: string, what: string): AgentscmError {
  return new AgentscmError('WORKSPACE_STATE_UNSAFE', `${path} is ${what}; agentscm reads and writes workspace state only in a real .agentscm directory of the workspace`, {
    hint: 'remove it (if it is a link, the directory it points to is left alone) and run `agentscm init-repo` for this directory',
  });
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new AgentscmError('IO_ERROR', `cannot inspect ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Check the state directory without following anything (docs/workspace.md "The state
 * directory"): `.agentscm` must be a real directory, and the databases, the lock and SQLite's
 * sidecar files in it regular files when present. A link would make every command read and
 * write another directory's state (another workspace's: this tree checkpointed into its
 * repository). WORKSPACE_STATE_UNSAFE otherwise; false when `.agentscm` does not exist.
 */
export function checkStateDir(root: string): boolean {
  const paths = workspaceStatePaths(root);
  const dir = lstatOrNull(paths.dir);
  if (dir === null) return false;
  if (dir.isSymbolicLink()) throw unsafe(paths.dir, 'a symbolic link');
  if (!dir.isDirectory()) throw unsafe(paths.dir, 'not a directory');
  for (const file of [paths.db, `${paths.db}-wal`, `${paths.db}-shm`, `${paths.db}-journal`, paths.lock, `${paths.lock}-journal`]) {
    const stat = lstatOrNull(file);
    if (stat === null || stat.isFile()) continue;
    throw unsafe(file, stat.isSymbolicLink() ? 'a symbolic link' : 'not a regular file');
  }
  return true;
}

/** True when the root holds a (safe) state directory with a workspace database. */
export function workspaceExists(root: string): boolean {
  return checkStateDir(root) && existsSync(workspaceStatePaths(root).db);
}

function notFound(root: string): AgentscmError {
  return new AgentscmError('WORKSPACE_NOT_FOUND', `${root} is not an agentscm workspace (no ${WORKSPACE_STATE_DIR}/${WORKSPACE_DB_NAME})`, {
    hint: 'run `agentscm init-repo PATH --name NAME`, or pass --workspace',
  });
}

function wrap(db: SqliteDatabase, root: string): WorkspaceDb {
  let open = true;
  return {
    db,
    root,
    close() {
      if (open) {
        open = false;
        db.close();
      }
    },
  };
}

/** Open an existing workspace database read-only: no creation, migration or journal change. */
export function openWorkspaceReadOnly(root: string): WorkspaceDb {
  if (!workspaceExists(root)) throw notFound(root);
  return wrap(openReadOnly(workspaceStatePaths(root).db, WORKSPACE_MIGRATIONS.length, WHAT, 'WORKSPACE_NOT_FOUND'), root);
}

/** Open an existing workspace database for writing (migrated). */
export function openWorkspaceWritable(root: string): WorkspaceDb {
  if (!workspaceExists(root)) throw notFound(root);
  return wrap(openWritable(workspaceStatePaths(root).db, WORKSPACE_MIGRATIONS, WHAT), root);
}

/**
 * Create the state directory if absent (mode 0700; never through a link) and check it
 * (checkStateDir). The directory gets a `.gitignore` of `*` so that git never records
 * agentscm's own files; it is created exclusively, so nothing is written through a link.
 * True when this call created the directory (init-repo removes it again when it fails).
 */
export function ensureStateDir(root: string): boolean {
  const paths = workspaceStatePaths(root);
  let created = false;
  try {
    mkdirSync(paths.dir, { mode: 0o700 });
    created = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new AgentscmError('IO_ERROR', `cannot create ${paths.dir}: ${(error as Error).message}`, { cause: error });
    }
  }
  checkStateDir(root);
  try {
    writeFileSync(join(paths.dir, '.gitignore'), '*\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new AgentscmError('IO_ERROR', `cannot create ${paths.dir}/.gitignore: ${(error as Error).message}`, { cause: error });
    }
  }
  return created;
}

/** Remove a state directory this process created, after a failed init-repo (never through a link). */
export function removeStateDir(root: string): void {
  const paths = workspaceStatePaths(root);
  if (!checkStateDir(root)) return;
  rmSync(paths.dir, { recursive: true, force: true });
}

/** Create (or open) the state directory and database (init-repo only). */
export function createWorkspaceDb(root: string): WorkspaceDb {
  ensureStateDir(root);
  return wrap(openWritable(workspaceStatePaths(root).db, WORKSPACE_MIGRATIONS, WHAT), root);
}

export function workspaceWrite<T>(ws: WorkspaceDb, fn: () => T): T {
  return immediate(ws.db, WHAT, fn);
}

export function workspaceRead<T>(ws: WorkspaceDb, fn: () => T): T {
  return readSnapshot(ws.db, WHAT, fn);
}

interface WorkspaceRow {
  state: WorkspaceLifecycle;
  repository: string;
  data_dir: string;
  base_revision: string | null;
  generation: string;
  pending_kind: 'init' | 'checkpoint' | null;
  pending_change: string | null;
  pending_expected_version: string | null;
  pending_revision: string | null;
  pending_parent: string | null;
  pending_started_ms: number | null;
}

/** The workspace row, or null for a database whose init-repo never wrote one. */
export function readWorkspaceRecord(ws: WorkspaceDb): WorkspaceRecord | null {
  const row = ws.db.prepare('SELECT * FROM workspace WHERE singleton = 1').get() as WorkspaceRow | undefined;
  if (row === undefined) return null;
  let pending: PendingOperation | null = null;
  if (row.pending_kind !== null) {
    if (row.pending_revision === null) throw new AgentscmError('STORE_CORRUPT', 'the workspace pending operation has no revision');
    pending = {
      kind: row.pending_kind,
      change: row.pending_change,
      expected_version: row.pending_expected_version === null ? null : u64FromSql(row.pending_expected_version),
      revision: row.pending_revision,
      parent: row.pending_parent,
      started_ms: row.pending_started_ms ?? 0,
    };
  }
  return {
    state: row.state,
    repository: row.repository,
    data_dir: row.data_dir,
    base_revision: row.base_revision,
    generation: u64FromSql(row.generation),
    pending,
  };
}

/** Write the binding row of a workspace being initialized (replacing an unfinished one). */
export function writeBindingRecord(ws: WorkspaceDb, repository: string, dataDir: string): void {
  ws.db.prepare('DELETE FROM workspace').run();
  ws.db.prepare('DELETE FROM base_entries').run();
  ws.db.prepare('DELETE FROM staged_entries').run();
  ws.db.prepare('DELETE FROM last_scan').run();
  ws.db
    .prepare("INSERT INTO workspace (singleton, state, repository, data_dir, base_revision, generation) VALUES (1, 'binding', ?, ?, NULL, ?)")
    .run(repository, dataDir, u64ToSql(0n));
}

/** Record the pending operation and its staged effect on the base tree (one transaction by the caller). */
export function writePending(ws: WorkspaceDb, pending: PendingOperation, staged: readonly StagedChange[]): void {
  ws.db
    .prepare(
      'UPDATE workspace SET pending_kind = ?, pending_change = ?, pending_expected_version = ?, pending_revision = ?, pending_parent = ?, pending_started_ms = ? WHERE singleton = 1',
    )
    .run(
      pending.kind,
      pending.change,
      pending.expected_version === null ? null : u64ToSql(pending.expected_version),
      pending.revision,
      pending.parent,
      pending.started_ms,
    );
  ws.db.prepare('DELETE FROM staged_entries').run();
  const insert = ws.db.prepare(
    'INSERT INTO staged_entries (path, op, mode, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino, cache_valid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  for (const change of staged) {
    const entry = change.entry;
    if (entry === null) {
      insert.run(change.path, 'delete', null, null, null, null, null, null, null, 0);
    } else {
      insert.run(change.path, 'put', entry.mode, u64ToSql(entry.size), entry.blob, ...statColumns(entry));
    }
  }
}

function statColumns(entry: CachedEntry): [number | null, number | null, number | null, number | null, number] {
  const stat = entry.stat;
  if (stat === null) return [null, null, null, null, 0];
  return [stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino, entry.cacheValid ? 1 : 0];
}

/**
 * Apply the staged base-tree change, set the new base and generation, clear the pending
 * operation (one transaction by the caller).
 */
export function commitPending(ws: WorkspaceDb, baseRevision: string, generation: bigint): void {
  ws.db.exec(`
    DELETE FROM base_entries WHERE path IN (SELECT path FROM staged_entries);
    INSERT INTO base_entries (path, mode, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino, cache_valid)
      SELECT path, mode, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino, cache_valid FROM staged_entries WHERE op = 'put';
    DELETE FROM staged_entries;
  `);
  ws.db
    .prepare(
      `UPDATE workspace SET state = 'ready', base_revision = ?, generation = ?, pending_kind = NULL, pending_change = NULL,
       pending_expected_version = NULL, pending_revision = NULL, pending_parent = NULL, pending_started_ms = NULL WHERE singleton = 1`,
    )
    .run(baseRevision, u64ToSql(generation));
}

/** Drop a pending operation that never reached the authority (one transaction by the caller). */
export function abandonPending(ws: WorkspaceDb): void {
  ws.db.exec(`
    DELETE FROM staged_entries;
    UPDATE workspace SET pending_kind = NULL, pending_change = NULL, pending_expected_version = NULL, pending_revision = NULL,
      pending_parent = NULL, pending_started_ms = NULL WHERE singleton = 1;
  `);
}

/** The base tree with its stat cache, keyed by path. */
export function loadBaseEntries(ws: WorkspaceDb): Map<string, CachedEntry> {
  const map = new Map<string, CachedEntry>();
  // Raw rows (arrays) avoid building an object per column set for every file of the tree.
  const rows = ws.db
    .prepare('SELECT path, mode, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino, cache_valid FROM base_entries')
    .raw(true)
    .all() as [string, EntryMode, string, string, number | null, number | null, number | null, number | null, number][];
  for (const [path, mode, size, blob, stSize, mtimeMs, ctimeMs, ino, valid] of rows) {
    const stat = stSize === null || mtimeMs === null || ctimeMs === null || ino === null ? null : { size: stSize, mtimeMs, ctimeMs, ino };
    map.set(path, { path, mode, size: u64FromSql(size), blob, stat, cacheValid: valid === 1 && stat !== null });
  }
  return map;
}

/** Refresh stat snapshots of unchanged base entries (content proven equal by hashing). */
export function refreshCache(ws: WorkspaceDb, entries: readonly CachedEntry[]): void {
  const update = ws.db.prepare('UPDATE base_entries SET st_size = ?, st_mtime_ms = ?, st_ctime_ms = ?, st_ino = ?, cache_valid = ? WHERE path = ? AND blob = ? AND mode = ?');
  for (const entry of entries) update.run(...statColumns(entry), entry.path, entry.blob, entry.mode);
}

export function writeLastScan(ws: WorkspaceDb, scan: LastScan): void {
  ws.db
    .prepare(
      'INSERT INTO last_scan (singleton, finished_ms, complete, file_count, total_bytes, hashed_files, problem) VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT (singleton) DO UPDATE SET finished_ms = excluded.finished_ms, complete = excluded.complete, file_count = excluded.file_count, total_bytes = excluded.total_bytes, hashed_files = excluded.hashed_files, problem = excluded.problem',
    )
    .run(scan.finished_ms, scan.complete ? 1 : 0, scan.file_count, u64ToSql(scan.total_bytes), scan.hashed_files, scan.problem);
}

export function readLastScan(ws: WorkspaceDb): LastScan | null {
  const row = ws.db.prepare('SELECT * FROM last_scan WHERE singleton = 1').get() as
    | { finished_ms: number; complete: number; file_count: number; total_bytes: string; hashed_files: number; problem: string | null }
    | undefined;
  if (row === undefined) return null;
  return {
    finished_ms: row.finished_ms,
    complete: row.complete === 1,
    file_count: row.file_count,
    total_bytes: u64FromSql(row.total_bytes),
    hashed_files: row.hashed_files,
    problem: row.problem,
  };
}
