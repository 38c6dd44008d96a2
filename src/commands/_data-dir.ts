/**
 * Which native data directory a command uses when none is named (docs/cli.md "Choosing the
 * data directory"): the store of the enclosing workspace — so every command run inside a bound
 * project, reads included, sees the store that project checkpoints into — else the per-user
 * directory of the XDG base directory convention, never a directory inside the user's project.
 * And which repository a command acts on when --repository names none (docs/cli.md "Choosing
 * the repository"): the one the enclosing workspace is bound to, when the command uses that
 * workspace's store.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

import {
  canonicalDataDir,
  enclosingWorkspaceDataDir,
  findEnclosingWorkspace,
  locateWorkspace,
} from '../workspace/locate.js';
import { openWorkspaceReadOnly, readWorkspaceRecord, workspaceRead } from '../workspace/state.js';

/**
 * `$XDG_DATA_HOME/agentscm`, else `~/.local/share/agentscm` (a relative XDG_DATA_HOME is ignored, as the convention
 * says).
 */
export function userDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME;
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(homedir(), '.local', 'share');
  return join(base, 'agentscm');
}

/**
 * The data directory when neither --data-dir nor AGENTSCM_DATA_DIR names one: the one the
 * nearest workspace at or above `from` is bound to, else userDataDir().
 */
export function defaultDataDir(from: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): string {
  return enclosingWorkspaceDataDir(resolve(from)) ?? userDataDir(env);
}

/**
 * The repository ID of the workspace `workspace` names (`--workspace PATH`), else of the nearest
 * one at or above `from`, when that workspace finished `init-repo` and is bound to `dataDir` (the
 * data directory the command uses); else null, and the command falls back to its own default
 * (the only repository of the store, or every repository for a list). Read-only.
 */
export function workspaceRepository(dataDir: string, workspace?: string, from: string = process.cwd()): string | null {
  const root = workspace === undefined ? findEnclosingWorkspace(resolve(from)) : locateWorkspace(workspace, from);
  if (root === null) return null;
  const ws = openWorkspaceReadOnly(root);
  let record;
  try {
    record = workspaceRead(ws, () => readWorkspaceRecord(ws));
  } finally {
    ws.close();
  }
  if (record?.state !== 'ready') return null;
  // A workspace bound to another store says nothing about the repositories of this one.
  if (record.data_dir !== dataDir && canonicalDataDir(record.data_dir) !== canonicalDataDir(dataDir)) return null;
  return record.repository;
}
