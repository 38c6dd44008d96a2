/**
 * What a SQLite failure means to a user of agentscm (docs/native-store.md "Damaged and
 * unreadable databases"): one documented code per kind of failure, for every database (the
 * authority, the workflow journal, a workspace's state). No I/O and no SQLite import, so that
 * the CLI's error handler can classify an escaped SQLite error without loading the driver.
 */
import { AgentscmError, type ErrorCode } from '../contracts/errors.js';

/**
 * The agentscm code of each primary SQLite result code. Extended codes
 * (SQLITE_IOERR_SHORT_READ, SQLITE_READONLY_CANTINIT…) fall under their primary code; any
 * other code is a failure this build did not expect (INTERNAL).
 */
const SQLITE_CODES: Readonly<Record<string, ErrorCode>> = {
  SQLITE_BUSY: 'STORE_BUSY',
  SQLITE_LOCKED: 'STORE_BUSY',
  SQLITE_CORRUPT: 'STORE_CORRUPT',
  SQLITE_NOTADB: 'STORE_CORRUPT',
  SQLITE_READONLY: 'DATABASE_ACCESS_DENIED',
  SQLITE_CANTOPEN: 'DATABASE_ACCESS_DENIED',
  SQLITE_PERM: 'DATABASE_ACCESS_DENIED',
  SQLITE_AUTH: 'DATABASE_ACCESS_DENIED',
  SQLITE_IOERR: 'IO_ERROR',
  SQLITE_FULL: 'IO_ERROR',
  SQLITE_NOLFS: 'IO_ERROR',
  SQLITE_PROTOCOL: 'IO_ERROR',
  SQLITE_NOMEM: 'IO_ERROR',
};

export const SQLITE_ERROR_HINTS = {
  STORE_BUSY: 'retry after the other operation finishes',
  STORE_CORRUPT: 'restore the file from a backup; agentscm never re-initializes or repairs a damaged database',
  DATABASE_ACCESS_DENIED:
    'run as the user that owns the files, or let this user write the database directory (SQLite writes -wal/-shm ' +
    'files even to read)',
} as const satisfies Partial<Record<ErrorCode, string>>;

/** True for an error raised by SQLite (better-sqlite3's SqliteError: its name and a SQLITE_ code). */
export function isSqliteError(error: unknown): error is Error & { code: string } {
  if (!(error instanceof Error) || error.name !== 'SqliteError') return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}

/**
 * A SQLite failure as the one documented code it stands for: contention STORE_BUSY, a damaged
 * file STORE_CORRUPT, a file this user cannot open or write DATABASE_ACCESS_DENIED, an
 * operating-system failure IO_ERROR, anything else INTERNAL. `what` names the database when the
 * caller knows it.
 */
export function classifySqliteError(error: Error & { code: string }, what: string | null): AgentscmError {
  const primary = /^SQLITE_[A-Z]+/.exec(error.code)?.[0] ?? '';
  const code = SQLITE_CODES[primary] ?? 'INTERNAL';
  const subject = what ?? 'a database of agentscm';
  const hint: string | undefined = (SQLITE_ERROR_HINTS as Partial<Record<ErrorCode, string>>)[code];
  const message =
    code === 'STORE_BUSY'
      ? `${subject} is busy with another writer`
      : code === 'STORE_CORRUPT'
        ? `${subject} is damaged: ${error.message}`
        : `${subject}: ${error.message}`;
  return new AgentscmError(code, `${message}${code === 'INTERNAL' ? ` (${error.code})` : ''}`, {
    ...(hint === undefined ? {} : { hint }),
    cause: error,
  });
}
