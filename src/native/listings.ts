/**
 * What is in the store (docs/cli.md "Listing what is in the store"): `change list`, `revision list`,
 * `target list` and `agent-task registration list`, each from one read snapshot, each row
 * carrying the repository's name beside its ID. Without --repository every repository is listed.
 */
import { getChange, listChanges } from './changes.js';
import { listRegistrations, type RegistrationState } from './executor-registry.js';
import { listRepositories, resolveRepository, type Repository } from './repositories.js';
import { findTargetRequirement } from './requirements.js';
import { listRevisions } from './revisions.js';
import { readTransaction, type Authority } from './store.js';
import { listTargets } from './targets.js';

export interface ListQuery {
  /** 32-hex ID or name; omitted: every repository of the store. */
  readonly repository?: string | undefined;
}

function repositoriesOf(auth: Authority, reference: string | undefined): Repository[] {
  return reference === undefined ? listRepositories(auth) : [resolveRepository(auth, reference)];
}

export interface ChangeListItem {
  readonly repository: string;
  readonly repository_name: string;
  readonly id: string;
  readonly current_version: bigint;
  readonly current_revision: string;
}

/** Every Change, by repository then creation order. */
export function listChangesInStore(auth: Authority, query: ListQuery): { changes: ChangeListItem[] } {
  return readTransaction(auth, () => ({
    changes: repositoriesOf(auth, query.repository).flatMap((repository) =>
      listChanges(auth, repository.id).map((change) => ({
        repository: repository.id,
        repository_name: repository.name,
        id: change.id,
        current_version: change.current_version,
        current_revision: getChange(auth, repository.id, change.id).current_revision,
      })),
    ),
  }));
}

export interface RevisionListRow {
  readonly repository: string;
  readonly repository_name: string;
  readonly id: string;
  readonly parent: string | null;
  readonly entry_count: number;
  readonly total_bytes: bigint;
  /** With --change: the Change version this revision is (null otherwise). */
  readonly change: string | null;
  readonly version: bigint | null;
}

/** Every revision a repository recorded, oldest first; with a Change, that Change's versions in order. */
export function listRevisionsInStore(
  auth: Authority,
  query: ListQuery & { readonly change?: string | undefined },
): {
  revisions: RevisionListRow[];
} {
  return readTransaction(auth, () => {
    if (query.change !== undefined) {
      const repository = resolveRepository(auth, query.repository);
      const change = getChange(auth, repository.id, query.change);
      const all = new Map(listRevisions(auth, repository.id).map((revision) => [revision.id, revision]));
      return {
        revisions: change.versions.map((version) => {
          const revision = all.get(version.revision);
          return {
            repository: repository.id,
            repository_name: repository.name,
            id: version.revision,
            parent: revision?.parent ?? version.previous_revision,
            entry_count: revision?.entry_count ?? 0,
            total_bytes: revision?.total_bytes ?? 0n,
            change: change.id,
            version: version.version,
          };
        }),
      };
    }
    return {
      revisions: repositoriesOf(auth, query.repository).flatMap((repository) =>
        listRevisions(auth, repository.id).map((revision) => ({
          repository: repository.id,
          repository_name: repository.name,
          ...revision,
          change: null,
          version: null,
        })),
      ),
    };
  });
}

export interface TargetListItem {
  readonly repository: string;
  readonly repository_name: string;
  readonly name: string;
  readonly revision: string;
  /** The installed workflow requirement of the target, or null. */
  readonly requirement_digest: string | null;
}

/** Every target with its revision and installed requirement. */
export function listTargetsInStore(auth: Authority, query: ListQuery): { targets: TargetListItem[] } {
  return readTransaction(auth, () => ({
    targets: repositoriesOf(auth, query.repository).flatMap((repository) =>
      listTargets(auth, repository.id).map((target) => ({
        repository: repository.id,
        repository_name: repository.name,
        name: target.name,
        revision: target.revision,
        requirement_digest: findTargetRequirement(auth, repository.id, target.name)?.requirement_digest ?? null,
      })),
    ),
  }));
}

export type RegistrationListItem = RegistrationState & { readonly repository_name: string };

/** Every executor registration, current, superseded or revoked. */
export function listRegistrationsInStore(auth: Authority, query: ListQuery): { registrations: RegistrationListItem[] } {
  return readTransaction(auth, () => ({
    registrations: repositoriesOf(auth, query.repository).flatMap((repository) =>
      listRegistrations(auth, repository.id).map((registration) => ({
        ...registration,
        repository_name: repository.name,
      })),
    ),
  }));
}
