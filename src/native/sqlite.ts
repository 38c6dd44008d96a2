/**
 * SQLite conventions for every database of agentscm (docs/architecture.md "Storage"): WAL,
 * `BEGIN IMMEDIATE` writers, migrations numbered by PRAGMA user_version, and read paths that
 * open existing files only, read-only, with no migration. Each database has one owning module
 * that calls these helpers; nothing else touches its tables.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Database, { type Statement as BetterStatement, type Database as Db } from 'better-sqlite3';

import { AgentscmError, type ErrorCode } from '../contracts/errors.js';
import { classifySqliteError, isSqliteError, SQLITE_ERROR_HINTS } from './sqlite-errors.js';

/**
 * A connection and a prepared statement. Only src/native/ imports 'better-sqlite3' (test/layering.test.ts);
 * every other module names these types.
 */
export type SqliteDatabase = Db;
export type Statement = BetterStatement;

/** One migration step: migrations[i] brings user_version from i to i + 1. */
export type Migration = (db: SqliteDatabase) => void;

/** How long a connection waits for another writer's lock before SQLITE_BUSY (STORE_BUSY). */
let BUSY_TIMEOUT_MS = 5000;

/**
 * Set the busy timeout of the connections this thread opens from now on (module state is per
 * thread). The hub's worker threads use a short one, so a busy store answers STORE_BUSY at once
 * instead of holding a request for 5 s (docs/hub.md "A busy store").
 */
export function setBusyTimeoutForNewConnections(ms: number): void {
  BUSY_TIMEOUT_MS = Math.max(0, Math.floor(ms));
}

/**
 * better-sqlite3's native addon by its path in the package, or undefined when it is not there.
 * Without it, the first open of each process finds the addon through the `bindings` package,
 * which tries a dozen candidate paths (about 5 ms of every command's start-up).
 */
let addonPath: string | null | undefined;
function nativeAddonPath(): string | undefined {
  if (addonPath === undefined) {
    addonPath = null;
    try {
      const resolveFrom = createRequire(import.meta.url);
      const candidate = join(
        dirname(resolveFrom.resolve('better-sqlite3')),
        '..',
        'build',
        'Release',
        'better_sqlite3.node',
      );
      if (existsSync(candidate)) addonPath = candidate;
    } catch {
      // The `bindings` search finds it, or reports why not.
    }
  }
  return addonPath ?? undefined;
}

/** A better-sqlite3 connection (every database of agentscm is opened through this). */
export function newDatabase(path: string, options: Database.Options = {}): SqliteDatabase {
  const nativeBinding = nativeAddonPath();
  return new Database(path, nativeBinding === undefined ? options : { ...options, nativeBinding });
}

/** The first 16 bytes of every SQLite database file. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/** Rethrow a SQLite failure as its documented code (classifySqliteError); contention is never retried. */
export function mapSqliteError(error: unknown, what: string): never {
  if (error instanceof AgentscmError) throw error;
  if (isSqliteError(error)) throw classifySqliteError(error, what);
  throw new AgentscmError('IO_ERROR', `${what}: ${(error as Error).message}`, { cause: error });
}

function damaged(what: string, why: string): AgentscmError {
  return new AgentscmError('STORE_CORRUPT', `${what} is damaged: ${why}`, { hint: SQLITE_ERROR_HINTS.STORE_CORRUPT });
}

/**
 * Refuse a database file that its store marks as initialized but that cannot hold its data:
 * missing, shorter than a SQLite header, or not starting with SQLite's magic bytes. SQLite
 * itself would take an empty file for a new database and the next writer would silently
 * create a fresh schema in it.
 */
function checkDatabaseFile(path: string, what: string): void {
  const head = Buffer.alloc(SQLITE_MAGIC.length);
  let length: number;
  try {
    const fd = openSync(path, 'r');
    try {
      length = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw damaged(what, 'its store is initialized but the database file is missing');
    if (code === 'EACCES' || code === 'EPERM') {
      throw new AgentscmError('DATABASE_ACCESS_DENIED', `${what}: cannot open ${path}: ${code}`, {
        hint: SQLITE_ERROR_HINTS.DATABASE_ACCESS_DENIED,
        cause: error,
      });
    }
    throw new AgentscmError('IO_ERROR', `${what}: cannot read ${path}: ${code ?? (error as Error).message}`, {
      cause: error,
    });
  }
  if (length === 0) throw damaged(what, 'the database file is empty');
  if (length < head.length || !head.equals(SQLITE_MAGIC)) throw damaged(what, 'the file is not a SQLite database');
}

export interface OpenOptions {
  /**
   * The database belongs to an initialized store: a missing, empty or foreign file, or one
   * with no schema (user_version 0), is STORE_CORRUPT, never created or migrated afresh.
   */
  readonly initialized?: boolean;
}

/**
 * Open (creating if needed) a database for writing and bring it to the newest schema.
 * Refuses a database newer than this build (STORE_SCHEMA_UNSUPPORTED).
 */
export function openWritable(
  path: string,
  migrations: readonly Migration[],
  what: string,
  options: OpenOptions = {},
): SqliteDatabase {
  if (options.initialized === true) checkDatabaseFile(path, what);
  let db: SqliteDatabase;
  try {
    db = newDatabase(path);
  } catch (error) {
    mapSqliteError(error, what);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db, migrations, what, options.initialized === true);
  } catch (error) {
    db.close();
    mapSqliteError(error, what);
  }
  return db;
}

function migrate(db: SqliteDatabase, migrations: readonly Migration[], what: string, initialized: boolean): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (initialized && current === 0) throw damaged(what, 'its store is initialized but the database holds no schema');
  if (current > migrations.length) {
    throw new AgentscmError(
      'STORE_SCHEMA_UNSUPPORTED',
      `${what} has schema version ${current}; this build knows ${migrations.length}`,
      {
        hint: 'use the agentscm build that wrote this store',
      },
    );
  }
  if (current === migrations.length) return;
  immediate(db, what, () => {
    const again = db.pragma('user_version', { simple: true }) as number;
    for (let version = again; version < migrations.length; version++) {
      const step = migrations[version];
      if (step === undefined) throw new AgentscmError('INTERNAL', `missing migration ${version}`);
      step(db);
      db.pragma(`user_version = ${version + 1}`);
    }
  });
}

/**
 * Open an existing database read-only: no creation, no migration, no journal-mode change.
 * A missing file raises `missingCode`; a schema other than `expectedVersion` raises
 * STORE_SCHEMA_UNSUPPORTED. SQLite may still touch -wal/-shm sidecars of a WAL database.
 */
export function openReadOnly(
  path: string,
  expectedVersion: number,
  what: string,
  missingCode: ErrorCode = 'STORE_NOT_INITIALIZED',
  options: OpenOptions = {},
): SqliteDatabase {
  if (!existsSync(path)) {
    throw new AgentscmError(missingCode, `${what} does not exist`, {
      hint: 'initialize it first; read commands never create it',
    });
  }
  if (options.initialized === true) checkDatabaseFile(path, what);
  let db: SqliteDatabase;
  try {
    db = newDatabase(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    mapSqliteError(error, what);
  }
  let version: number;
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    version = db.pragma('user_version', { simple: true }) as number;
  } catch (error) {
    db.close();
    mapSqliteError(error, what);
  }
  if (version !== expectedVersion) {
    db.close();
    if (options.initialized === true && version === 0)
      throw damaged(what, 'its store is initialized but the database holds no schema');
    throw new AgentscmError(
      'STORE_SCHEMA_UNSUPPORTED',
      `${what} has schema version ${version}, expected ${expectedVersion}`,
      {
        hint: 'run a writing command of the same agentscm build to migrate it, or use the build that wrote it',
      },
    );
  }
  return db;
}

type Runner = ReturnType<SqliteDatabase['transaction']> & { (fn: () => unknown): unknown };

// One transaction wrapper per connection that runs the function it is given: building a new
// db.transaction(fn) per call costs more than the transaction's own statements. The wrapper
// behaves as before: BEGIN/COMMIT, or a savepoint when a transaction is already open.
const runners = new WeakMap<SqliteDatabase, Runner>();

function runnerOf(db: SqliteDatabase): Runner {
  let runner = runners.get(db);
  if (runner === undefined) {
    runner = db.transaction((fn: () => unknown) => fn()) as Runner;
    runners.set(db, runner);
  }
  return runner;
}

/** Run `fn` in a BEGIN IMMEDIATE transaction; contention becomes STORE_BUSY. */
export function immediate<T>(db: SqliteDatabase, what: string, fn: () => T): T {
  try {
    return runnerOf(db).immediate(fn) as T;
  } catch (error) {
    mapSqliteError(error, what);
  }
}

/** Run `fn` in a read (deferred) transaction so that every read sees one snapshot. */
export function readSnapshot<T>(db: SqliteDatabase, what: string, fn: () => T): T {
  try {
    return runnerOf(db).deferred(fn) as T;
  } catch (error) {
    mapSqliteError(error, what);
  }
}

const statementCaches = new WeakMap<SqliteDatabase, Map<string, Statement>>();

/**
 * A prepared statement of `db`, prepared once per connection and SQL text (preparing costs more
 * than running most of our statements). Callers must not change a cached statement's mode
 * (pluck, raw, expand): every user of the same SQL on the connection shares it.
 */
export function cachedStatement(db: SqliteDatabase, sql: string): Statement {
  let cache = statementCaches.get(db);
  if (cache === undefined) {
    cache = new Map();
    statementCaches.set(db, cache);
  }
  let statement = cache.get(sql);
  if (statement === undefined) {
    statement = db.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}

/**
 * A token of the content one connection reads (docs/architecture.md "Storage"): PRAGMA data_version
 * changes whenever another connection commits to the database, and total_changes() whenever
 * this connection changes rows. Read inside a transaction, an unchanged token proves that the
 * snapshot holds the same rows as the snapshot in which it was read before.
 */
export function contentToken(db: SqliteDatabase): string {
  const { data_version } = cachedStatement(db, 'PRAGMA data_version').get() as { data_version: number };
  const { changes } = cachedStatement(db, 'SELECT total_changes() AS changes').get() as { changes: number };
  return `${data_version}:${changes}`;
}

/**
 * u64 values (fences, epochs, versions) are stored as 20-digit zero-padded TEXT: SQLite's
 * INTEGER is signed 64-bit, and padded text keeps both the exact value and the ordering.
 */
export function u64ToSql(value: bigint): string {
  if (value < 0n || value > 18446744073709551615n) throw new AgentscmError('INTERNAL', 'u64 out of range');
  return value.toString(10).padStart(20, '0');
}

export function u64FromSql(text: unknown): bigint {
  if (typeof text !== 'string' || !/^[0-9]{20}$/.test(text))
    throw new AgentscmError('INTERNAL', 'stored u64 is malformed');
  return BigInt(text);
}

/** What a read-only health check of an existing database found (docs/doctor.md "store"). */
export interface DatabaseInspection {
  /** PRAGMA user_version. */
  readonly schemaVersion: number;
  /** The database's size in bytes (main file only). */
  readonly bytes: number;
  /** 'ok'; the first problems PRAGMA quick_check reported; or 'skipped' when the file is larger than the bound. */
  readonly integrity: 'ok' | 'skipped' | readonly string[];
}

/**
 * Inspect an existing database without changing it: the header (checkDatabaseFile), then a
 * read-only connection with no migration that reads user_version and, for a file of at most
 * `maxCheckBytes`, runs PRAGMA quick_check reporting at most `maxProblems` problems. A damaged
 * file is STORE_CORRUPT, one this user cannot open DATABASE_ACCESS_DENIED (mapSqliteError).
 * As openReadOnly, SQLite may touch the -wal/-shm sidecars of a WAL database.
 */
export function inspectDatabase(
  path: string,
  what: string,
  bounds: { readonly maxCheckBytes: number; readonly maxProblems: number },
): DatabaseInspection {
  checkDatabaseFile(path, what);
  let db: SqliteDatabase;
  try {
    db = newDatabase(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    mapSqliteError(error, what);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const schemaVersion = db.pragma('user_version', { simple: true }) as number;
    const pageCount = db.pragma('page_count', { simple: true }) as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const bytes = pageCount * pageSize;
    if (bytes > bounds.maxCheckBytes) return { schemaVersion, bytes, integrity: 'skipped' };
    const rows = db.pragma(`quick_check(${Math.max(1, Math.floor(bounds.maxProblems))})`) as { quick_check: string }[];
    const problems = rows.map((row) => row.quick_check);
    return { schemaVersion, bytes, integrity: problems.length === 1 && problems[0] === 'ok' ? 'ok' : problems };
  } catch (error) {
    mapSqliteError(error, what);
  } finally {
    db.close();
  }
}
