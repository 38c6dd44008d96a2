/** Finding the workspace a command acts on, and the data directory it is bound to. */
import { realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import type { Store } from '../native/store-handle.js';
import { workspaceExists } from './state-dir.js';
import { openWorkspaceReadOnly, peekBoundDataDir, readWorkspaceRecord, workspaceRead } from './state.js';

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * The workspace root: `--workspace PATH` exactly, or else the nearest directory from the
 * current one upwards that holds `.agentscm/workspace.sqlite` (as git finds `.git`). A
 * `.agentscm` met on the way that is a link, a file or holds links is refused
 * (WORKSPACE_STATE_UNSAFE), never followed or skipped.
 */
export function locateWorkspace(explicit: string | undefined, cwd: string = process.cwd()): string {
  if (explicit !== undefined) {
    const root = realOrResolved(explicit);
    if (!workspaceExists(root)) {
      throw new AgentscmError('WORKSPACE_NOT_FOUND', `${root} is not an agentscm workspace`, {
        hint: 'run `agentscm init-repo PATH --name NAME` first',
      });
    }
    return root;
  }
  const found = findEnclosingWorkspace(cwd);
  if (found !== null) return found;
  throw new AgentscmError('WORKSPACE_NOT_FOUND', `no agentscm workspace at or above ${realOrResolved(cwd)}`, {
    hint: 'pass --workspace PATH, or run `agentscm init-repo PATH --name NAME` first',
  });
}

/** The nearest workspace root at or above `start`, or null when there is none. */
export function findEnclosingWorkspace(start: string): string | null {
  let dir = realOrResolved(start);
  for (;;) {
    if (workspaceExists(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The data directory the nearest workspace at or above `start` is bound to (docs/cli.md
 * "Choosing the data directory"), or null when there is no workspace or it was never bound.
 * Read-only: nothing is created or migrated.
 */
export function enclosingWorkspaceDataDir(start: string): string | null {
  const root = findEnclosingWorkspace(start);
  if (root === null) return null;
  const ws = openWorkspaceReadOnly(root);
  try {
    return workspaceRead(ws, () => readWorkspaceRecord(ws))?.data_dir ?? null;
  } finally {
    ws.close();
  }
}

/** Canonical form of a data directory's path for comparisons (realpath when it exists). */
export function canonicalDataDir(path: string): string {
  return realOrResolved(path);
}

/**
 * The data directory a workspace command opens its Store on when no --data-dir is given: the
 * one the workspace (`--workspace PATH` or the nearest one) is bound to, read without writing
 * or migrating anything. The workspace operation checks it again (boundDataDir).
 */
export function workspaceDataDir(workspace: string | undefined, cwd?: string): string {
  return peekBoundDataDir(locateWorkspace(workspace, cwd));
}

/**
 * The data directory a workspace command uses: the one the workspace is bound to. A Store
 * opened on another store (an explicit --data-dir, leading flag or AGENTSCM_DATA_DIR naming
 * it) is refused; one opened on the bound directory itself always matches.
 */
export function boundDataDir(bound: string, store: Pick<Store, 'dataDir'>): string {
  if (store.dataDir !== bound && canonicalDataDir(store.dataDir) !== bound) {
    throw new AgentscmError(
      'WORKSPACE_DATA_DIR_MISMATCH',
      `the workspace is bound to the data directory ${bound}, not ${canonicalDataDir(store.dataDir)}`,
      {
        hint: 'omit --data-dir, or pass the data directory the workspace was initialized with',
      },
    );
  }
  return bound;
}
