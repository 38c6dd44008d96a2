/**
 * WORKSPACE/.agentscm/workspace.sqlite (docs/architecture.md "Storage"): the repository and data
 * directory binding, base revision, generation, pending operation, last scan and the stat
 * cache of the base tree. Only this module reads and writes that database; its schema steps are
 * src/workspace/state-migrations.ts, the cache's encoding src/workspace/stat-cache.ts and the
 * directory holding it src/workspace/state-dir.ts.
 *
 * The stat cache is one row, not a row per file (encodeStatCache). A pending operation writes
 * the cache it will install as a second row (`pending_cache`), and commitPending makes that row
 * the base one (`base_cache`) in the same transaction that records the new base revision: the
 * cache is written once, never copied.
 */
import { AgentscmError } from '../contracts/errors.js';
import {
  immediate,
  mapSqliteError,
  newDatabase,
  openReadOnly,
  openWritable,
  readSnapshot,
  u64FromSql,
  u64ToSql,
  type SqliteDatabase,
} from '../native/sqlite.js';
import { decodeStatCache, EMPTY_STAT_CACHE, encodeStatCache, type CachedEntry } from './stat-cache.js';
import {
  ensureStateDir,
  WORKSPACE_DB_NAME,
  WORKSPACE_STATE_DIR,
  workspaceExists,
  workspaceStatePaths,
} from './state-dir.js';
import { WORKSPACE_MIGRATIONS } from './state-migrations.js';

const WHAT = 'the workspace state';

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

/**
 * Write the binding row of a workspace being initialized (replacing an unfinished one): its
 * repository and the real path of the data directory it is bound to.
 */
export function writeBindingRecord(ws: WorkspaceDb, binding: Pick<WorkspaceRecord, 'repository' | 'data_dir'>): void {
  ws.db.prepare('DELETE FROM workspace').run();
  ws.db.prepare('DELETE FROM stat_caches').run();
  ws.db.prepare('DELETE FROM last_scan').run();
  ws.db
    .prepare(
      `INSERT INTO workspace (singleton, state, repository, data_dir, base_revision, generation)
       VALUES (1, 'binding', ?, ?, NULL, ?)`,
    )
    .run(binding.repository, binding.data_dir, u64ToSql(0n));
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
      `UPDATE workspace SET pending_kind = ?, pending_change = ?, pending_expected_version = ?, pending_revision = ?,
       pending_parent = ?, pending_started_ms = ? WHERE singleton = 1`,
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
      `UPDATE workspace SET state = 'ready', base_revision = ?, generation = ?, base_cache = pending_cache,
       pending_cache = NULL, pending_kind = NULL, pending_change = NULL, pending_expected_version = NULL,
       pending_revision = NULL, pending_parent = NULL, pending_started_ms = NULL WHERE singleton = 1`,
    )
    .run(baseRevision, u64ToSql(generation));
}

/** Drop a pending operation that never reached the authority (one transaction by the caller). */
export function abandonPending(ws: WorkspaceDb): void {
  ws.db.exec(`
    DELETE FROM stat_caches WHERE id = (SELECT pending_cache FROM workspace WHERE singleton = 1);
    UPDATE workspace SET pending_cache = NULL, pending_kind = NULL, pending_change = NULL,
      pending_expected_version = NULL, pending_revision = NULL, pending_parent = NULL, pending_started_ms = NULL
      WHERE singleton = 1;
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
      `INSERT INTO last_scan (singleton, finished_ms, complete, file_count, total_bytes, hashed_files, problem)
       VALUES (1, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (singleton) DO UPDATE SET finished_ms = excluded.finished_ms, complete = excluded.complete,
         file_count = excluded.file_count, total_bytes = excluded.total_bytes, hashed_files = excluded.hashed_files,
         problem = excluded.problem`,
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
