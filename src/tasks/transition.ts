/**
 * The lock order of a new task transition (spec "Phase-two local state machine": "actor/workspace
 * guard, journal lease/transaction, native authority writer reservation"). Inside the guard the
 * journal takes BEGIN IMMEDIATE, then the authority takes BEGIN IMMEDIATE and writes nothing —
 * the writer reservation: every native writer (checkpoint, policy bump, revocation, requirement
 * install) waits until it is released, so the rechecks made through that connection stay true
 * until the journal commits. The journal commits first, then the native reservation is rolled
 * back. Contention on either database is STORE_BUSY (exit 3) and nothing is replayed.
 */
import { existsSync } from 'node:fs';
import { mapSqliteError } from '../native/sqlite.js';
import type { SqliteDatabase } from '../native/sqlite.js';
import { openAuthority, readTransaction } from '../native/store.js';
import type { Authority } from '../native/store.js';
import type { Journal } from '../workflows/journal.js';
import { JOURNAL_WHAT, journalPaths, journalRead, openJournal } from '../workflows/journal.js';
import type { TaskContext, TaskOperation } from './context.js';
import { nowOf } from './context.js';
import { taskPausePoint } from './test-hooks.js';

export interface TransitionScope {
  readonly journal: Journal;
  readonly auth: Authority;
  readonly nowMs: number;
}

function begin(db: SqliteDatabase, what: string): void {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    mapSqliteError(error, what);
  }
}

function rollbackQuietly(db: SqliteDatabase): void {
  if (!db.inTransaction) return;
  try {
    db.exec('ROLLBACK');
  } catch {
    // The connection is closed right after; SQLite rolls back an open transaction on close.
  }
}

/**
 * Run `body` as one transition under the guard: journal BEGIN IMMEDIATE → native writer
 * reservation → body (rechecks and journal writes) → journal COMMIT → native release. The
 * journal is created when absent (transitions only; reads never create it).
 */
export function runTransition<T>(ctx: TaskContext, operation: TaskOperation, body: (scope: TransitionScope) => T): T {
  return ctx.guard(ctx.actor, operation, () => {
    const auth = openAuthority(ctx.dataDir, { mode: 'write' });
    try {
      const journal = openJournal(ctx.dataDir, 'create');
      try {
        begin(journal.db, JOURNAL_WHAT);
        let result: T;
        try {
          begin(auth.db, 'the native authority');
          result = body({ journal, auth, nowMs: nowOf(ctx) });
          try {
            journal.db.exec('COMMIT');
          } catch (error) {
            mapSqliteError(error, JOURNAL_WHAT);
          }
        } finally {
          rollbackQuietly(journal.db);
          rollbackQuietly(auth.db);
        }
        taskPausePoint('task:after-journal-commit');
        return result;
      } finally {
        journal.close();
      }
    } finally {
      auth.close();
    }
  });
}

/**
 * Read the journal if it exists (read-only, no migration, never created); `whenMissing` answers
 * for a data directory without a journal.
 */
export function readJournal<T>(dataDir: string, whenMissing: () => T, body: (journal: Journal) => T): T {
  if (!existsSync(journalPaths(dataDir).db)) return whenMissing();
  const journal = openJournal(dataDir, 'read');
  try {
    return journalRead(journal, () => body(journal));
  } finally {
    journal.close();
  }
}

/** Read the native authority (read-only, existing store only) in one snapshot. */
export function readAuthority<T>(dataDir: string, body: (auth: Authority) => T): T {
  const auth = openAuthority(dataDir, { mode: 'read' });
  try {
    return readTransaction(auth, () => body(auth));
  } finally {
    auth.close();
  }
}
