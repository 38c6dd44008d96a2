/** Directories inside a workspace that scans skip besides `.agentscm/` and `.git`. */
import { relative, sep } from 'node:path';

/**
 * A data directory placed inside the workspace (the default `agentscm-data` when init-repo
 * runs in the project directory) is agentscm's own state, never part of a revision.
 */
export function dataDirExclusions(root: string, dataDir: string): string[] {
  const rel = relative(root, dataDir);
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) return [];
  return [dataDir];
}
