/** Directories inside a workspace that scans skip besides `.agentscm/` and `.git`. */
import { isAbsolute, relative, sep } from 'node:path';

import type { Store } from '../native/store-handle.js';

/**
 * A data directory placed inside the workspace (e.g. `--data-dir ./agentscm-data` given to
 * init-repo in the project directory) is agentscm's own state, never part of a revision. It is
 * outside the workspace only when its relative path is `..` or starts with the `..`
 * component: a directory named `..store` inside the workspace is inside. Only the location is
 * used (an absolute path); nothing is opened.
 */
export function dataDirExclusions(root: string, store: Pick<Store, 'dataDir'>): string[] {
  const rel = relative(root, store.dataDir);
  if (rel === '' || isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`)) return [];
  return [store.dataDir];
}
