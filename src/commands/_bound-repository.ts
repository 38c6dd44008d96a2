/**
 * `--repository` on a command whose repository is fixed by what it acts on — the workspace a
 * `check` command edits, the collector descriptor `agent-task collect` runs (docs/cli.md
 * "Choosing the repository"): given, it must name that repository, by ID or name; any other is
 * REPOSITORY_MISMATCH (an unknown one REPOSITORY_NOT_FOUND) before anything is read, changed or
 * run. Read-only.
 */
import { Flags } from '@oclif/core';

import { AgentscmError } from '../contracts/errors.js';
import { listRepositories, resolveRepository } from '../native/repositories.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction } from '../native/store.js';
import { withStore } from '../tasks/store.js';
import { workspaceRepository } from './_data-dir.js';

/** `--repository` of a command that acts on one workspace (`check …`, `status`). */
export const workspaceRepositoryFlag = Flags.string({
  description:
    'Repository ID or name; it must be the one the workspace is bound to (default: that one). Any other is ' +
    'refused before anything is read or changed.',
  helpValue: 'ID_OR_NAME',
});

export interface BoundRepository {
  /** The repository ID the workspace or descriptor is bound to; null: none of this store's. */
  readonly id: string | null;
  /** What binds it, for the message: "the workspace", "the collector descriptor". */
  readonly what: string;
  /** What to do instead, for the hint. */
  readonly instead: string;
}

/** Refuse a `--repository` other than the bound repository (see module comment). */
export function requireBoundRepository(store: Store, reference: string, bound: BoundRepository): void {
  const auth = store.authority();
  readTransaction(auth, () => {
    const asked = resolveRepository(auth, reference);
    if (asked.id === bound.id) return;
    const boundName = bound.id === null ? null : (listRepositories(auth).find((r) => r.id === bound.id)?.name ?? null);
    throw new AgentscmError(
      'REPOSITORY_MISMATCH',
      bound.id === null
        ? `--repository ${reference}: ${bound.what} is bound to no repository of the store in ${store.dataDir}`
        : `--repository ${reference}: ${bound.what} is bound to repository ` +
            `${boundName === null ? bound.id : `${boundName} (${bound.id})`}, not ${asked.name} (${asked.id})`,
      { hint: `leave out --repository (the default is the bound repository), or ${bound.instead}` },
    );
  });
}

/**
 * --repository of a workspace command (docs/cli.md "Choosing the repository"): the workspace is bound
 * to one repository, and naming another is REPOSITORY_MISMATCH before anything is read or changed.
 */
export function requireWorkspaceRepository(
  dataDir: string,
  flags: { readonly repository?: string | undefined; readonly workspace?: string | undefined },
): void {
  const reference = flags.repository;
  if (reference === undefined) return;
  const bound = workspaceRepository(dataDir, flags.workspace);
  withStore(dataDir, 'read', (store) =>
    requireBoundRepository(store, reference, {
      id: bound,
      what: 'the workspace',
      instead: 'pass --workspace with a workspace of that repository',
    }),
  );
}
