/** Directories inside a workspace that scans skip besides `.agentscm/` and `.git`. */
import { isAbsolute, relative, sep } from 'node:path';

/**
 * A data directory placed inside the workspace (e.g. `--data-dir ./agentscm-data` given to
 * init-repo in the project directory) is agentscm's own state, never part of a revision. It is
 * outside the workspace only when its relative path is `..` or starts with the `..`
 * component: a directory named `..store` inside the workspace is inside.
 */
export function dataDirExclusions(root: string, dataDir: string): string[] {
  const rel = relative(root, dataDir);
  if (rel === '' || isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`)) return [];
  return [dataDir];
}
