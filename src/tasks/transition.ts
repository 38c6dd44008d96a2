/**
 * The lock order of a new task transition (docs/agent-tasks.md "Authorization guard and lock
 * order"): actor/workspace guard, journal lease/transaction, native authority writer reservation.
 * Inside the guard the journal takes BEGIN IMMEDIATE, then the authority takes BEGIN IMMEDIATE and writes nothing —
 * the writer reservation: every native writer (checkpoint, policy bump, revocation, requirement
 * install) waits until it is released, so the rechecks made through that connection stay true
 * until the journal commits. The journal commits first, then the native reservation is rolled
 * back. Contention on either database is STORE_BUSY (exit 3) and nothing is replayed.
 */
import { existsSync } from 'node:fs';

import { AgentscmError } from '../contracts/errors.js';
import { cachedStatement, mapSqliteError, openReadOnly, type SqliteDatabase } from '../native/sqlite.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction, type Authority } from '../native/store.js';
import {
  JOURNAL_WHAT,
  journalPaths,
  journalRead,
  journalWrite,
  type Journal,
  type JournalDurability,
} from '../workflows/journal.js';
import { nowOf, type TaskContext, type TaskOperation } from './context.js';
import { taskPausePoint } from './test-hooks.js';

export interface TransitionScope {
  readonly journal: Journal;
  readonly auth: Authority;
  readonly nowMs: number;
}

function begin(db: SqliteDatabase, what: string): void {
  try {
    // Prepared once per connection: a session runs it on every transition.
    cachedStatement(db, 'BEGIN IMMEDIATE').run();
  } catch (error) {
    mapSqliteError(error, what);
  }
}

function rollbackQuietly(db: SqliteDatabase): void {
  if (!db.inTransaction) return;
  try {
    cachedStatement(db, 'ROLLBACK').run();
  } catch {
    // The connection is closed right after; SQLite rolls back an open transaction on close.
  }
}

/**
 * How each transition's journal commit reaches the disk (docs/agent-tasks.md "Durability"). A
 * claim issues a fence and a live attempt, cancel and reconcile supersede or fence attempts:
 * those must survive a power loss ('durable', fsynced). A heartbeat renewal lost to a power loss
 * only makes the lease look shorter, and a lost result is retained again by the client's
 * identical retry: both commit 'crash-safe' (WAL, synchronous=NORMAL — survives a process crash
 * or SIGKILL; a power loss may roll back only the newest such commits, and never past a later
 * durable commit). Every other transition is durable.
 */
export function transitionDurability(operation: TaskOperation): JournalDurability {
  return operation === 'heartbeat' || operation === 'result' ? 'crash-safe' : 'durable';
}

/** Whether the journal file exists (opens nothing). */
export function journalExists(ctx: TaskContext): boolean {
  return existsSync(journalPaths(ctx.store.dataDir).db);
}

/**
 * Run `body` as one transition under the guard: journal BEGIN IMMEDIATE → native writer
 * reservation → the grant recheck of ctx.origin → body (rechecks and journal writes) → journal
 * COMMIT (at the operation's durability) → native release. Only a claim creates an absent journal
 * (`whenMissing` null); every other transition names a retained task, so it opens an existing
 * journal only and, when there is none, `whenMissing` refuses — a refused request creates nothing.
 * The Store must be open for writing.
 */
export function runTransition<T>(
  ctx: TaskContext,
  operation: TaskOperation,
  body: (scope: TransitionScope) => T,
  whenMissing: (() => never) | null,
): T {
  return ctx.guard(ctx.actor, operation, () => {
    const store = ctx.store;
    if (store.mode !== 'write') throw new AgentscmError('INTERNAL', `${operation} needs a store opened for writing`);
    const auth = store.authority();
    const journal = store.journal(whenMissing === null);
    if (journal === null) {
      if (whenMissing !== null) whenMissing();
      throw new AgentscmError('INTERNAL', 'the journal was not created');
    }
    let result: T;
    try {
      result = journalWrite(
        journal,
        () => {
          taskPausePoint('task:before-native-reservation');
          begin(auth.db, 'the native authority');
          // The grant part of the combined authorization callback: rechecked through the
          // reserved connection, so a revocation or rotation either refuses this transition
          // or waits until its journal commit.
          ctx.origin?.recheck(auth);
          taskPausePoint('task:in-native-reservation');
          return body({ journal, auth, nowMs: nowOf(ctx) });
        },
        transitionDurability(operation),
      );
    } finally {
      rollbackQuietly(auth.db);
    }
    taskPausePoint('task:after-journal-commit');
    return result;
  });
}

/**
 * Read the journal if it exists (never created); `whenMissing` answers for a data directory
 * without a journal. A Store opened for reading opens it read-only without migration, and a
 * journal of a schema older than the task tables answers as missing. `forTransition` (the
 * exact-retry lookup of a request about to write, in a Store opened for writing) opens an
 * existing journal for writing, so that a journal of an older schema is migrated by the
 * transition that would migrate it anyway. That lookup reads one row with one statement, which
 * is its own snapshot: it runs without an enclosing read transaction.
 */
export function readJournal<T>(
  ctx: TaskContext,
  whenMissing: () => T,
  body: (journal: Journal) => T,
  forTransition = false,
): T {
  const store = ctx.store;
  if (store.mode === 'read' && journalPredatesTasks(store)) return whenMissing();
  const journal = store.journal(false);
  if (journal === null) return whenMissing();
  return forTransition ? body(journal) : journalRead(journal, () => body(journal));
}

/**
 * A journal written before the agent-task tables existed retains no task: reads of a Store opened
 * for reading answer as for a missing journal and leave it unmigrated (the first transition
 * migrates it). A journal of an unknown newer schema is still refused when it is opened.
 */
function journalPredatesTasks(store: Store): boolean {
  const path = journalPaths(store.dataDir).db;
  if (!existsSync(path)) return false;
  for (let version = TASK_TABLES_VERSION - 1; version >= 0; version--) {
    let db: SqliteDatabase;
    try {
      db = openReadOnly(path, version, JOURNAL_WHAT, 'WORKFLOW_JOURNAL_NOT_INITIALIZED');
    } catch (error) {
      if (error instanceof AgentscmError && error.code === 'STORE_SCHEMA_UNSUPPORTED') continue;
      throw error;
    }
    db.close();
    return true;
  }
  return false;
}

/** Journal schema step that adds the agent-task tables (003-tasks). */
const TASK_TABLES_VERSION = 3;

/** Read the native authority of the Store in one snapshot. */
export function readAuthority<T>(ctx: TaskContext, body: (auth: Authority) => T): T {
  const auth = ctx.store.authority();
  return readTransaction(auth, () => body(auth));
}
