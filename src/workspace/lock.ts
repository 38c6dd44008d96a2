/**
 * One writer per workspace: an exclusive SQLite lock on WORKSPACE/.agentscm/lock.sqlite,
 * held for a whole checkpoint or init-repo. The operating system drops it when the process
 * dies (even by SIGKILL), so a crash never leaves a stale lock behind; the pending operation
 * in workspace.sqlite is what records unfinished work.
 */
import Database from 'better-sqlite3';
import { AgentscmError } from '../contracts/errors.js';
import { workspaceStatePaths } from './state.js';

/** How long a second writer waits for the first before WORKSPACE_BUSY. */
export const WORKSPACE_LOCK_WAIT_MS = 15_000;

export interface WorkspaceLock {
  release(): void;
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

/** Take the workspace writer lock (creates the lock file; writers only). */
export function acquireWorkspaceLock(root: string, waitMs: number = WORKSPACE_LOCK_WAIT_MS): WorkspaceLock {
  const path = workspaceStatePaths(root).lock;
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: waitMs });
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot open the workspace lock ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if (isBusy(error)) {
      throw new AgentscmError('WORKSPACE_BUSY', `another agentscm command is writing the workspace ${root}`, {
        hint: 'wait for it to finish and run the command again',
        cause: error,
      });
    }
    throw new AgentscmError('IO_ERROR', `cannot lock the workspace ${root}: ${(error as Error).message}`, { cause: error });
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    },
  };
}
