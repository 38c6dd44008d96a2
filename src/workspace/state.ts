/**
 * WORKSPACE/.agentscm/workspace.sqlite (docs/architecture.md "Storage"): the repository and data
 * directory binding, base revision, generation, pending operation, last scan and the stat
 * cache of the base tree. Only this module touches that database.
 *
 * The stat cache is one row, not a row per file: the whole list encoded in one binary value
 * (encodeStatCache), so loading it costs one read and one pass over a buffer. A pending
 * operation writes the cache it will install as a second row (`pending_cache`), and
 * commitPending makes that row the base one (`base_cache`) in the same transaction that records
 * the new base revision: the cache is written once, never copied.
 */
import { existsSync, lstatSync, mkdirSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { compareUtf8 } from '../contracts/paths.js';
import type { EntryMode, RevisionEntry } from '../native/revisions.js';
import {
  immediate,
  mapSqliteError,
  newDatabase,
  openReadOnly,
  openWritable,
  readSnapshot,
  u64FromSql,
  u64ToSql,
  type Migration,
  type SqliteDatabase,
} from '../native/sqlite.js';

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
        "SELECT path, CASE op WHEN 'put' THEN mode END, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino, cache_valid FROM staged_entries",
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

const CACHE_FORMAT = 1;
const MODE_CODES: readonly EntryMode[] = ['file', 'executable', 'symlink'];
const FLAG_STAT = 4;
const FLAG_VALID = 8;
const TWO_32 = 2 ** 32;
const SAFE_SIZE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The stat cache as one value: u8 format (1), u32be count, then per entry u16be path length,
 * the path's UTF-8 bytes, u8 flags (mode index in bits 0–1, 4: stat present, 8: cache valid),
 * u64be size, the 32 digest bytes, and with a stat four f64be (size, mtime ms, ctime ms, inode).
 */
export function encodeStatCache(entries: readonly CachedEntry[]): Buffer {
  // Sized first, then written in place: no intermediate buffer per path.
  let length = 5;
  for (const entry of entries)
    length += 2 + Buffer.byteLength(entry.path, 'utf8') + 1 + 8 + 32 + (entry.stat === null ? 0 : 32);
  const out = Buffer.allocUnsafe(length);
  out.writeUInt8(CACHE_FORMAT, 0);
  out.writeUInt32BE(entries.length, 1);
  let at = 5;
  for (const entry of entries) {
    const pathLength = out.write(entry.path, at + 2, 'utf8');
    out.writeUInt16BE(pathLength, at);
    at += 2 + pathLength;
    const stat = entry.stat;
    out[at] =
      MODE_CODES.indexOf(entry.mode) |
      (stat === null ? 0 : FLAG_STAT) |
      (entry.cacheValid && stat !== null ? FLAG_VALID : 0);
    // A size below 2^53 (every real one) is written as two u32 halves without BigInt arithmetic.
    const size = entry.size;
    if (size >= 0n && size <= SAFE_SIZE) {
      const n = Number(size);
      out.writeUInt32BE(Math.floor(n / TWO_32), at + 1);
      out.writeUInt32BE(n % TWO_32, at + 5);
    } else out.writeBigUInt64BE(size, at + 1);
    out.write(entry.blob, at + 9, 32, 'hex');
    at += 41;
    if (stat !== null) {
      out.writeDoubleBE(stat.size, at);
      out.writeDoubleBE(stat.mtimeMs, at + 8);
      out.writeDoubleBE(stat.ctimeMs, at + 16);
      out.writeDoubleBE(stat.ino, at + 24);
      at += 32;
    }
  }
  return out;
}

function cacheCorrupt(why: string): AgentscmError {
  return new AgentscmError('STORE_CORRUPT', `the workspace stat cache is damaged: ${why}`, {
    hint: 'remove .agentscm/ of this workspace and run `agentscm init-repo` for it again',
  });
}

/** The entries of an encoded stat cache, keyed by path. */
export function decodeStatCache(data: Buffer): Map<string, CachedEntry> {
  const map = new Map<string, CachedEntry>();
  if (data.length < 5 || data.readUInt8(0) !== CACHE_FORMAT) throw cacheCorrupt('unknown format');
  const count = data.readUInt32BE(1);
  let at = 5;
  try {
    for (let i = 0; i < count; i++) {
      const pathLength = data.readUInt16BE(at);
      const path = data.toString('utf8', at + 2, at + 2 + pathLength);
      at += 2 + pathLength;
      const flags = data.readUInt8(at);
      const mode = MODE_CODES[flags & 3];
      if (mode === undefined) throw cacheCorrupt(`entry ${i} has an unknown mode`);
      const size = data.readBigUInt64BE(at + 1);
      if (at + 41 > data.length) throw cacheCorrupt('it ends inside an entry');
      const blob = data.toString('hex', at + 9, at + 41);
      at += 41;
      let stat: StatSnapshot | null = null;
      if ((flags & FLAG_STAT) !== 0) {
        stat = {
          size: data.readDoubleBE(at),
          mtimeMs: data.readDoubleBE(at + 8),
          ctimeMs: data.readDoubleBE(at + 16),
          ino: data.readDoubleBE(at + 24),
        };
        at += 32;
      }
      map.set(path, { path, mode, size, blob, stat, cacheValid: (flags & FLAG_VALID) !== 0 && stat !== null });
    }
  } catch (error) {
    if (error instanceof AgentscmError) throw error;
    throw cacheCorrupt('it ends inside an entry');
  }
  if (at !== data.length) throw cacheCorrupt('bytes follow the last entry');
  return map;
}

/** An empty stat cache (no entries), as encoded. */
export const EMPTY_STAT_CACHE: Buffer = encodeStatCache([]);

/**
 * An encoded stat cache read in place (a checkpoint compares it with the scan without decoding
 * it): the start offset of every entry, and the offset its flags byte is at (after its path).
 * Entry i spans starts[i] to starts[i + 1]; the layout is encodeStatCache's.
 */
export interface StatCacheView {
  readonly data: Buffer;
  readonly count: number;
  /** count + 1 offsets: where each entry starts, then the end of the data. */
  readonly starts: Int32Array;
  /** Offset of each entry's flags byte (the u8 after its path). */
  readonly flagsAt: Int32Array;
}

/** Bytes of an entry after its path: flags, size, digest; plus the stat snapshot when present. */
export const ENTRY_FIXED_BYTES = 1 + 8 + 32;
export const ENTRY_STAT_BYTES = 32;
export { FLAG_STAT, FLAG_VALID, MODE_CODES };

/** Index an encoded stat cache (one pass over its lengths; STORE_CORRUPT as decodeStatCache). */
export function indexStatCache(data: Buffer): StatCacheView {
  if (data.length < 5 || data[0] !== CACHE_FORMAT) throw cacheCorrupt('unknown format');
  const count = data.readUInt32BE(1);
  if (count > (data.length - 5) / (2 + ENTRY_FIXED_BYTES)) throw cacheCorrupt('it ends inside an entry');
  const starts = new Int32Array(count + 1);
  const flagsAt = new Int32Array(count);
  let at = 5;
  for (let i = 0; i < count; i++) {
    starts[i] = at;
    if (at + 2 > data.length) throw cacheCorrupt('it ends inside an entry');
    const flags = at + 2 + ((data[at] as number) << 8) + (data[at + 1] as number);
    if (flags + ENTRY_FIXED_BYTES > data.length) throw cacheCorrupt('it ends inside an entry');
    const bits = data[flags] as number;
    if ((bits & 3) === 3) throw cacheCorrupt(`entry ${i} has an unknown mode`);
    flagsAt[i] = flags;
    at = flags + ENTRY_FIXED_BYTES + ((bits & FLAG_STAT) !== 0 ? ENTRY_STAT_BYTES : 0);
  }
  if (at !== data.length)
    throw cacheCorrupt(at > data.length ? 'it ends inside an entry' : 'bytes follow the last entry');
  starts[count] = at;
  return { data, count, starts, flagsAt };
}

/** One entry encoded as encodeStatCache writes it inside the whole cache (no header). */
export function encodeStatCacheEntry(entry: CachedEntry): Buffer {
  return encodeStatCache([entry]).subarray(5);
}

/** A whole stat cache from its entries' encodings (each as encodeStatCacheEntry or copied from a cache). */
export function joinStatCache(count: number, pieces: readonly Buffer[], length: number): Buffer {
  const header = Buffer.allocUnsafe(5);
  header[0] = CACHE_FORMAT;
  header.writeUInt32BE(count, 1);
  return Buffer.concat([header, ...pieces], 5 + length);
}

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
  return new AgentscmError(
    'WORKSPACE_STATE_UNSAFE',
    `${path} is ${what}; agentscm reads and writes workspace state only in a real .agentscm directory of the workspace`,
    {
      hint: 'remove it (if it is a link, the directory it points to is left alone) and run `agentscm init-repo` for this directory',
    },
  );
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
  for (const file of [
    paths.db,
    `${paths.db}-wal`,
    `${paths.db}-shm`,
    `${paths.db}-journal`,
    paths.lock,
    `${paths.lock}-journal`,
  ]) {
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
  return new AgentscmError(
    'WORKSPACE_NOT_FOUND',
    `${root} is not an agentscm workspace (no ${WORKSPACE_STATE_DIR}/${WORKSPACE_DB_NAME})`,
    {
      hint: 'run `agentscm init-repo PATH --name NAME`, or pass --workspace',
    },
  );
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

/**
 * The data directory a workspace is bound to, read without migrating or writing the workspace
 * database and whatever its schema version (so that a writer can open the authority first).
 */
export function peekBoundDataDir(root: string): string {
  if (!workspaceExists(root)) throw notFound(root);
  let db: SqliteDatabase;
  try {
    db = newDatabase(workspaceStatePaths(root).db, { readonly: true, fileMustExist: true });
  } catch (error) {
    mapSqliteError(error, WHAT);
  }
  try {
    db.pragma('busy_timeout = 5000');
    const row = db.prepare('SELECT data_dir FROM workspace WHERE singleton = 1').get() as
      { data_dir: string } | undefined;
    if (row === undefined)
      throw new AgentscmError('WORKSPACE_NOT_FOUND', `${root} was never bound to a repository`, {
        hint: 'run `agentscm init-repo` again for it',
      });
    return row.data_dir;
  } catch (error) {
    if (error instanceof AgentscmError) throw error;
    mapSqliteError(error, WHAT);
  } finally {
    db.close();
  }
}

/** Open an existing workspace database read-only: no creation, migration or journal change. */
export function openWorkspaceReadOnly(root: string): WorkspaceDb {
  if (!workspaceExists(root)) throw notFound(root);
  return wrap(
    openReadOnly(workspaceStatePaths(root).db, WORKSPACE_MIGRATIONS.length, WHAT, 'WORKSPACE_NOT_FOUND'),
    root,
  );
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
      throw new AgentscmError('IO_ERROR', `cannot create ${paths.dir}/.gitignore: ${(error as Error).message}`, {
        cause: error,
      });
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

/**
 * Run `fn` (which commits a workspace transaction) without syncing that commit to disk
 * (synchronous=NORMAL in WAL mode): only for the adoption of an operation the authority already
 * committed. A power cut can lose such a commit but never tear it or an earlier one (the WAL is
 * append-only), and losing it leaves the pending operation, which the next writer adopts from
 * the authority (docs/workspace.md "Crash safety"). A process kill loses nothing either way.
 */
export function withoutCommitSync<T>(ws: WorkspaceDb, fn: () => T): T {
  ws.db.pragma('synchronous = NORMAL');
  try {
    return fn();
  } finally {
    ws.db.pragma('synchronous = FULL');
  }
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
    if (row.pending_revision === null)
      throw new AgentscmError('STORE_CORRUPT', 'the workspace pending operation has no revision');
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
  ws.db.prepare('DELETE FROM stat_caches').run();
  ws.db.prepare('DELETE FROM last_scan').run();
  ws.db
    .prepare(
      "INSERT INTO workspace (singleton, state, repository, data_dir, base_revision, generation) VALUES (1, 'binding', ?, ?, NULL, ?)",
    )
    .run(repository, dataDir, u64ToSql(0n));
}

/**
 * Record the pending operation and the stat cache it installs once the authority committed
 * (the whole new tree, sorted by path; one transaction by the caller).
 */
export function writePending(
  ws: WorkspaceDb,
  pending: PendingOperation,
  entries: readonly CachedEntry[] | Buffer,
): void {
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
  // The cache of an earlier pending operation (never adopted: reconciliation ran first) is replaced.
  ws.db.prepare('DELETE FROM stat_caches WHERE id = (SELECT pending_cache FROM workspace WHERE singleton = 1)').run();
  const id = ws.db
    .prepare('INSERT INTO stat_caches (data) VALUES (?)')
    .run(Buffer.isBuffer(entries) ? entries : encodeStatCache(entries)).lastInsertRowid;
  ws.db.prepare('UPDATE workspace SET pending_cache = ? WHERE singleton = 1').run(id);
}

/**
 * Install the staged stat cache as the base, set the new base and generation, clear the
 * pending operation (one transaction by the caller).
 */
export function commitPending(ws: WorkspaceDb, baseRevision: string, generation: bigint): void {
  // The pending cache becomes the base one where it lies: only the pointer moves.
  ws.db.prepare('DELETE FROM stat_caches WHERE id = (SELECT base_cache FROM workspace WHERE singleton = 1)').run();
  ws.db
    .prepare(
      `UPDATE workspace SET state = 'ready', base_revision = ?, generation = ?, base_cache = pending_cache, pending_cache = NULL, pending_kind = NULL, pending_change = NULL,
       pending_expected_version = NULL, pending_revision = NULL, pending_parent = NULL, pending_started_ms = NULL WHERE singleton = 1`,
    )
    .run(baseRevision, u64ToSql(generation));
}

/** Drop a pending operation that never reached the authority (one transaction by the caller). */
export function abandonPending(ws: WorkspaceDb): void {
  ws.db.exec(`
    DELETE FROM stat_caches WHERE id = (SELECT pending_cache FROM workspace WHERE singleton = 1);
    UPDATE workspace SET pending_cache = NULL, pending_kind = NULL, pending_change = NULL, pending_expected_version = NULL, pending_revision = NULL,
      pending_parent = NULL, pending_started_ms = NULL WHERE singleton = 1;
  `);
}

const BASE_CACHE_SQL = 'SELECT c.data FROM workspace w JOIN stat_caches c ON c.id = w.base_cache WHERE w.singleton = 1';

/** The base tree's stat cache as stored (encodeStatCache), not decoded: one row read. */
export function loadBaseCache(ws: WorkspaceDb): Buffer {
  const row = ws.db.prepare(BASE_CACHE_SQL).get() as { data: Buffer } | undefined;
  return row === undefined ? EMPTY_STAT_CACHE : row.data;
}

/** The base tree with its stat cache, keyed by path: one row read and decoded. */
export function loadBaseEntries(ws: WorkspaceDb): Map<string, CachedEntry> {
  const row = ws.db.prepare(BASE_CACHE_SQL).get() as { data: Buffer } | undefined;
  return row === undefined ? new Map<string, CachedEntry>() : decodeStatCache(row.data);
}

export function writeLastScan(ws: WorkspaceDb, scan: LastScan): void {
  ws.db
    .prepare(
      'INSERT INTO last_scan (singleton, finished_ms, complete, file_count, total_bytes, hashed_files, problem) VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT (singleton) DO UPDATE SET finished_ms = excluded.finished_ms, complete = excluded.complete, file_count = excluded.file_count, total_bytes = excluded.total_bytes, hashed_files = excluded.hashed_files, problem = excluded.problem',
    )
    .run(
      scan.finished_ms,
      scan.complete ? 1 : 0,
      scan.file_count,
      u64ToSql(scan.total_bytes),
      scan.hashed_files,
      scan.problem,
    );
}

export function readLastScan(ws: WorkspaceDb): LastScan | null {
  const row = ws.db.prepare('SELECT * FROM last_scan WHERE singleton = 1').get() as
    | {
        finished_ms: number;
        complete: number;
        file_count: number;
        total_bytes: string;
        hashed_files: number;
        problem: string | null;
      }
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
