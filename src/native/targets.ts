/** Targets: a per-repository name → revision pointer; init-repo sets `main` (issue 2 §3). */
import { AgentscmError } from '../contracts/errors.js';
import { checkDigest, checkGenericId, checkRepositoryId } from './checks.js';
import { prepared, writeTransaction, type Authority } from './store.js';

export interface Target {
  readonly name: string;
  readonly revision: string;
}

/** The target's current revision (TARGET_NOT_FOUND otherwise). */
export function getTarget(auth: Authority, repository: string, name: string): Target {
  checkRepositoryId(repository);
  checkGenericId(name, 'target name');
  const row = prepared(auth, 'SELECT name, revision FROM targets WHERE repository = ? AND name = ?').get(
    repository,
    name,
  ) as Target | undefined;
  if (row === undefined) throw new AgentscmError('TARGET_NOT_FOUND', `repository ${repository} has no target ${name}`);
  return { name: row.name, revision: row.revision };
}

/** Every target of the repository, by name. */
export function listTargets(auth: Authority, repository: string): Target[] {
  checkRepositoryId(repository);
  return (
    prepared(auth, 'SELECT name, revision FROM targets WHERE repository = ? ORDER BY name').all(repository) as Target[]
  ).map((row) => ({
    name: row.name,
    revision: row.revision,
  }));
}

/** Point a target at a revision of the same repository (REVISION_NOT_FOUND otherwise). */
export function setTarget(auth: Authority, repository: string, name: string, revision: string): Target {
  checkRepositoryId(repository);
  checkGenericId(name, 'target name');
  checkDigest(revision, 'revision');
  return writeTransaction(auth, () => {
    const known = prepared(auth, 'SELECT 1 FROM repository_revisions WHERE repository = ? AND revision = ?').get(
      repository,
      revision,
    );
    if (known === undefined)
      throw new AgentscmError('REVISION_NOT_FOUND', `repository ${repository} has no revision ${revision}`);
    prepared(
      auth,
      'INSERT INTO targets (repository, name, revision) VALUES (?, ?, ?) ON CONFLICT (repository, name) DO UPDATE ' +
        'SET revision = excluded.revision',
    ).run(repository, name, revision);
    return { name, revision };
  });
}

/**
 * Move a target from `from` to `to` in the caller's writer transaction (landing,
 * docs/admission.md): a compare-and-set, so a target that is no longer at `from` is not moved and
 * false is returned. `to` must be a revision of the repository (REVISION_NOT_FOUND otherwise).
 */
export function moveTarget(auth: Authority, repository: string, name: string, from: string, to: string): boolean {
  checkRepositoryId(repository);
  checkGenericId(name, 'target name');
  checkDigest(from, 'revision');
  checkDigest(to, 'revision');
  const known = prepared(auth, 'SELECT 1 FROM repository_revisions WHERE repository = ? AND revision = ?').get(
    repository,
    to,
  );
  if (known === undefined)
    throw new AgentscmError('REVISION_NOT_FOUND', `repository ${repository} has no revision ${to}`);
  return (
    prepared(auth, 'UPDATE targets SET revision = ? WHERE repository = ? AND name = ? AND revision = ?').run(
      to,
      repository,
      name,
      from,
    ).changes === 1
  );
}
