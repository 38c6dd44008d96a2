/**
 * Which native data directory a command uses when none is named (docs/cli.md "Choosing the
 * data directory"): the store of the enclosing workspace — so every command run inside a bound
 * project, reads included, sees the store that project checkpoints into — else the per-user
 * directory of the XDG base directory convention, never a directory inside the user's project.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

import { enclosingWorkspaceDataDir } from '../workspace/locate.js';

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
