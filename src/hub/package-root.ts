/**
 * Where this package's own files are: the package root (the nearest ancestor of this module that
 * holds package.json) and whether the code runs from its TypeScript sources (bin/dev.js and the
 * tests, through tsx) or from the built CLI's bundle under dist/ (bin/bundle.js). The hub reads
 * the dashboard's files (src/hub/ui-routes.ts) and starts its task worker (src/hub/task-worker-client.ts)
 * from here.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { AgentscmError } from '../contracts/errors.js';

export interface PackageSource {
  readonly root: string;
  readonly fromSources: boolean;
}

let known: PackageSource | null = null;

/** The package root of this module and whether it runs from the sources. */
export function packageSource(): PackageSource {
  if (known !== null) return known;
  const self = fileURLToPath(import.meta.url);
  let dir = dirname(self);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) break;
    const parent = dirname(dir);
    if (parent === dir)
      throw new AgentscmError('INTERNAL', 'the agentscm package root was not found beside the hub module');
    dir = parent;
  }
  known = { root: dir, fromSources: self.endsWith('.ts') };
  return known;
}
