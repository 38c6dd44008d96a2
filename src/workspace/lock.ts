/**
 * One writer per workspace: an exclusive SQLite lock on WORKSPACE/.agentscm/lock.sqlite,
 * held for a whole checkpoint or init-repo. The operating system drops it when the process
 * dies (even by SIGKILL), so a crash never leaves a stale lock behind; the pending operation
 * in workspace.sqlite is what records unfinished work.
 *
 * A lock on a file excludes nobody once that file is removed: the next writer creates a new
 * one and locks it. So the lock remembers the identity (device and inode) of the file it
 * holds, checks after acquiring that the path still names that file, and every write of the
 * holder checks it again inside the transaction that commits (assertHeld, lockedWorkspaceWrite):
 * a holder whose lock file was replaced stops with WORKSPACE_LOCK_LOST before it records
 * anything more, and the new writer's state stands (docs/workspace.md "Concurrency").
 */
import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs';

import { AgentscmError } from '../contracts/errors.js';
import { newDatabase, type SqliteDatabase as SqliteConnection } from '../native/sqlite.js';
import { checkStateDir, workspaceStatePaths } from './state-dir.js';
import { workspaceWrite, type WorkspaceDb } from './state.js';

/** How long a second writer waits for the first before WORKSPACE_BUSY. */
export const WORKSPACE_LOCK_WAIT_MS = 15_000;

export interface WorkspaceLock {
  /** WORKSPACE_LOCK_LOST unless the lock file is still the one this lock holds. */
  assertHeld(): void;
  release(): void;
}

interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

function busy(root: string, cause?: unknown): AgentscmError {
  return new AgentscmError('WORKSPACE_BUSY', `another agentscm command is writing the workspace ${root}`, {
    hint: 'wait for it to finish and run the command again',
    ...(cause === undefined ? {} : { cause }),
  });
}

/** True when `path` (not followed) is the regular file `identity`. */
function isSameFile(path: string, identity: FileIdentity): boolean {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  return stat !== undefined && stat.isFile() && stat.dev === identity.dev && stat.ino === identity.ino;
}

/** Open the lock file without following a link; the descriptor pins its inode. */
function openLockFile(path: string): { fd: number; identity: FileIdentity } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EISDIR' || code === 'ENXIO') {
      throw new AgentscmError('WORKSPACE_STATE_UNSAFE', `${path} is not a regular file`, {
        hint: 'remove it and run the command again',
        cause: error,
      });
    }
    throw new AgentscmError('IO_ERROR', `cannot open the workspace lock ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw new AgentscmError('WORKSPACE_STATE_UNSAFE', `${path} is not a regular file`, {
      hint: 'remove it and run the command again',
    });
  }
  return { fd, identity: { dev: stat.dev, ino: stat.ino } };
}

/**
 * Take the workspace writer lock (creates the lock file; writers only). The state directory
 * must exist and be safe (checkStateDir). A lock taken on a file that was removed or replaced
 * while this process waited for it is dropped and taken again on the file now at the path.
 */
export function acquireWorkspaceLock(root: string, waitMs: number = WORKSPACE_LOCK_WAIT_MS): WorkspaceLock {
  const path = workspaceStatePaths(root).lock;
  if (!checkStateDir(root))
    throw new AgentscmError('WORKSPACE_NOT_FOUND', `${root} has no ${workspaceStatePaths(root).dir}`, {
      hint: 'run `agentscm init-repo` for it',
    });
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { fd, identity } = openLockFile(path);
    // Our own descriptor must stay open until SQLite has released its locks: closing any
    // descriptor of a file drops every POSIX lock this process holds on it.
    const closeAll = (db: SqliteConnection | null): void => {
      try {
        db?.close();
      } finally {
        closeSync(fd);
      }
    };
    let db: SqliteConnection;
    try {
      db = newDatabase(path, { timeout: Math.max(0, deadline - Date.now()) });
    } catch (error) {
      closeAll(null);
      throw new AgentscmError('IO_ERROR', `cannot open the workspace lock ${path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      closeAll(db);
      if (isBusy(error)) throw busy(root, error);
      // SQLite refuses to lock a file that was unlinked while it waited (SQLITE_IOERR_FSTAT):
      // the lock file was removed, so lock the one now at the path.
      if (!isSameFile(path, identity) && Date.now() < deadline) continue;
      throw new AgentscmError('IO_ERROR', `cannot lock the workspace ${root}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (!isSameFile(path, identity)) {
      // The file was removed or replaced between opening and locking: this lock excludes nobody.
      db.exec('ROLLBACK');
      closeAll(db);
      if (Date.now() >= deadline) throw busy(root);
      continue;
    }
    let held = true;
    return {
      assertHeld() {
        if (held && isSameFile(path, identity)) return;
        throw new AgentscmError(
          'WORKSPACE_LOCK_LOST',
          `the workspace lock ${path} was removed or replaced while this command held it; another command ` +
            'may be writing the workspace',
          {
            hint:
              'never remove lock.sqlite while a command runs; run `agentscm status`, then checkpoint again ' +
              '(a version this command already recorded in the store is adopted then)',
          },
        );
      },
      release() {
        if (!held) return;
        held = false;
        try {
          db.exec('ROLLBACK');
        } finally {
          closeAll(db);
        }
      },
    };
  }
}

/** A workspace write transaction that commits only while `lock` is still held. */
export function lockedWorkspaceWrite<T>(lock: WorkspaceLock, ws: WorkspaceDb, fn: () => T): T {
  return workspaceWrite(ws, () => {
    lock.assertHeld();
    return fn();
  });
}
