/** Grants for tests: a live grant created through the native library, and its token file. */
import { join } from 'node:path';

import type { GrantScope } from '../../src/contracts/grant.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { createGrant, type GrantWithTokenFile } from '../../src/native/grants.js';
import { openAuthority } from '../../src/native/store.js';

let counter = 0;

/** Create a grant for `actor` in the store of `dataDir`; its token file goes into `dir` (owner-private). */
export function makeGrant(
  dataDir: string,
  dir: string,
  actor: AgentRef,
  options: { readonly scope?: GrantScope; readonly repository?: string } = {},
): GrantWithTokenFile {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    counter += 1;
    return createGrant(auth, {
      repository: options.repository,
      actor,
      scope: options.scope ?? 'agent',
      tokenFile: join(dir, `${actor.owner_id}-${actor.agent_id}-${process.pid}-${counter}.token`),
      nowMs: Date.now(),
    });
  } finally {
    auth.close();
  }
}

/** The token file of a new agent grant for `actor`. */
export function tokenFileFor(dataDir: string, dir: string, actor: AgentRef): string {
  return makeGrant(dataDir, dir, actor).token_file;
}
