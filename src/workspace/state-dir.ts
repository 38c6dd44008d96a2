/**
 * The state directory WORKSPACE/.agentscm (docs/workspace.md "The state directory"): its paths,
 * the check that it is a real directory holding regular files, and its creation and removal.
 */
import { existsSync, lstatSync, mkdirSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';

export const WORKSPACE_STATE_DIR = '.agentscm';
export const WORKSPACE_DB_NAME = 'workspace.sqlite';

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
      hint:
        'remove it (if it is a link, the directory it points to is left alone) and run `agentscm init-repo` ' +
        'for this directory',
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
