/**
 * The native authority store: D/native/authority.sqlite plus D/native/lock, whose existence
 * marks an initialized store (docs/architecture.md "Storage"). Readers open existing files only,
 * read-only and without migration; only init-repo creates a store.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { AUTHORITY_MIGRATIONS } from './migrations/index.js';
import {
  cachedStatement,
  immediate,
  openReadOnly,
  openWritable,
  readSnapshot,
  type SqliteDatabase,
  type Statement,
} from './sqlite.js';

export interface NativePaths {
  /** D/native */
  readonly dir: string;
  /** D/native/authority.sqlite */
  readonly db: string;
  /** D/native/lock: present once the store is initialized. */
  readonly lock: string;
}

export type AuthorityMode = 'read' | 'write';

/** An open authority connection. Close it when done; statements are prepared once per connection. */
export interface Authority {
  readonly db: SqliteDatabase;
  readonly dataDir: string;
  readonly paths: NativePaths;
  readonly mode: AuthorityMode;
  close(): void;
}

const AUTHORITY_WHAT = 'the native authority';
const LOCK_TEXT = 'agentscm native store v1\n';

/** Paths of the native store under a data directory (docs/architecture.md "Storage"). */
export function nativePaths(dataDir: string): NativePaths {
  const dir = join(resolve(dataDir), 'native');
  return { dir, db: join(dir, 'authority.sqlite'), lock: join(dir, 'lock') };
}

/** True when D/native/lock exists (the database may still be damaged: openAuthority says); touches nothing. */
export function isStoreInitialized(dataDir: string): boolean {
  return existsSync(nativePaths(dataDir).lock);
}

function notInitialized(dataDir: string): AgentscmError {
  return new AgentscmError('STORE_NOT_INITIALIZED', `no native store in ${resolve(dataDir)}`, {
    hint: 'run `agentscm --data-dir DIR init-repo PATH --name NAME` to create one, or pass the right --data-dir',
  });
}

function wrap(db: SqliteDatabase, dataDir: string, paths: NativePaths, mode: AuthorityMode): Authority {
  let open = true;
  return {
    db,
    dataDir: resolve(dataDir),
    paths,
    mode,
    close() {
      if (!open) return;
      open = false;
      db.close();
    },
  };
}

/**
 * A lock file without its database: the store was initialized and its data is gone. That is
 * damage to report, never a missing store to create again (docs/native-store.md).
 */
function databaseMissing(paths: NativePaths): AgentscmError {
  return new AgentscmError(
    'STORE_CORRUPT',
    `${AUTHORITY_WHAT} is damaged: ${paths.lock} marks the store initialized but ${paths.db} is missing`,
    {
      hint: 'restore the data directory from a backup; agentscm never re-initializes a store whose lock file exists',
    },
  );
}

/**
 * Open an existing store (spec: read paths "open existing files only, read-only, with no
 * migration"). 'read' never creates or migrates anything; 'write' migrates an existing store.
 * A missing lock file is STORE_NOT_INITIALIZED (exit 4) in both modes; a lock file whose
 * database is missing, empty, foreign or without a schema is STORE_CORRUPT (exit 4).
 */
export function openAuthority(dataDir: string, options: { mode: AuthorityMode }): Authority {
  const paths = nativePaths(dataDir);
  if (!existsSync(paths.lock)) throw notInitialized(dataDir);
  if (!existsSync(paths.db)) throw databaseMissing(paths);
  if (options.mode === 'read') {
    const db = openReadOnly(paths.db, AUTHORITY_MIGRATIONS.length, AUTHORITY_WHAT, 'STORE_NOT_INITIALIZED', {
      initialized: true,
    });
    return wrap(db, dataDir, paths, 'read');
  }
  const db = openWritable(paths.db, AUTHORITY_MIGRATIONS, AUTHORITY_WHAT, { initialized: true });
  return wrap(db, dataDir, paths, 'write');
}

/**
 * Create the store if absent (init-repo only): D/native (0700), the migrated database, then
 * the lock file last, so that a crash in between leaves a store that is still "not
 * initialized" and the next init-repo completes it. Once the lock file exists the store is
 * only ever opened (openAuthority), so a damaged database is reported, not replaced.
 */
export function createAuthority(dataDir: string): Authority {
  const paths = nativePaths(dataDir);
  if (existsSync(paths.lock)) return openAuthority(dataDir, { mode: 'write' });
  try {
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot create ${paths.dir}: ${(error as Error).message}`, { cause: error });
  }
  const db = openWritable(paths.db, AUTHORITY_MIGRATIONS, AUTHORITY_WHAT);
  try {
    const fd = openSync(paths.lock, 'wx', 0o600);
    try {
      writeSync(fd, LOCK_TEXT);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    db.close();
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return openAuthority(dataDir, { mode: 'write' });
    throw new AgentscmError('IO_ERROR', `cannot create ${paths.lock}: ${(error as Error).message}`, { cause: error });
  }
  return wrap(db, dataDir, paths, 'write');
}

/** A statement prepared once per connection. */
export function prepared(auth: Authority, sql: string): Statement {
  return cachedStatement(auth.db, sql);
}

/** Run a writer transaction (BEGIN IMMEDIATE); contention is STORE_BUSY (exit 3). */
export function writeTransaction<T>(auth: Authority, fn: () => T): T {
  if (auth.mode !== 'write')
    throw new AgentscmError('INTERNAL', 'a write transaction needs an authority opened for writing');
  return immediate(auth.db, AUTHORITY_WHAT, fn);
}

/** Run reads in one snapshot. */
export function readTransaction<T>(auth: Authority, fn: () => T): T {
  if (auth.db.inTransaction) return fn();
  return readSnapshot(auth.db, AUTHORITY_WHAT, fn);
}

/**
 * Run a bulk of content-addressed blob writes with commits that skip their own fsync
 * (synchronous=NORMAL in WAL mode). Safe because the WAL is append-only: the FULL commit of
 * the transaction that references these blobs syncs every earlier frame with it, and a blob
 * lost to a power cut before that commit is referenced by nothing.
 */
export function withBulkBlobWrites<T>(auth: Authority, fn: () => T): T {
  if (auth.mode !== 'write') return fn();
  auth.db.pragma('synchronous = NORMAL');
  try {
    return fn();
  } finally {
    auth.db.pragma('synchronous = FULL');
  }
}

/** Next store-local creation order number for a table with a `seq` column. */
export function nextSeq(
  auth: Authority,
  table: 'repositories' | 'repository_revisions' | 'changes' | 'change_versions',
): number {
  const row = prepared(auth, `SELECT coalesce(max(seq), 0) + 1 AS next FROM ${table}`).get() as { next: number };
  return row.next;
}
