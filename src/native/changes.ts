/**
 * Changes (issue 2 §3): a named line of work in one repository with versions 1..n. Each
 * version records its revision, the revision it replaced (the previous version's, or for
 * version 1 the parent the work started from) and a store-local creation order.
 */
import { AgentscmError } from '../contracts/errors.js';
import { U64_MAX } from '../contracts/json/json-value.js';
import { checkDigest, checkGenericId, checkRepositoryId } from './checks.js';
import { hasRevision } from './revisions.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { nextSeq, prepared, readTransaction, writeTransaction, type Authority } from './store.js';

export interface ChangeVersion {
  readonly version: bigint;
  readonly revision: string;
  readonly previous_revision: string | null;
  /** Store-local creation order across every Change version. */
  readonly created_order: number;
}

export interface Change {
  readonly repository: string;
  readonly id: string;
  readonly current_version: bigint;
  /** The current version's revision. */
  readonly current_revision: string;
  readonly versions: ChangeVersion[];
}

interface VersionRow {
  version: string;
  revision: string;
  previous_revision: string | null;
  seq: number;
}

function changeNotFound(repository: string, id: string): AgentscmError {
  return new AgentscmError('CHANGE_NOT_FOUND', `repository ${repository} has no Change ${id}`, {
    hint: 'a Change is created by its first `agentscm checkpoint --change ID`',
  });
}

/** The Change with every version, or null when it does not exist. */
export function findChange(auth: Authority, repository: string, id: string): Change | null {
  checkRepositoryId(repository);
  checkGenericId(id, 'Change ID');
  return readTransaction(auth, () => {
    const head = prepared(auth, 'SELECT current_version FROM changes WHERE repository = ? AND id = ?').get(
      repository,
      id,
    ) as { current_version: string } | undefined;
    if (head === undefined) return null;
    const rows = prepared(
      auth,
      'SELECT version, revision, previous_revision, seq FROM change_versions WHERE repository = ? AND change = ? ' +
        'ORDER BY version',
    ).all(repository, id) as VersionRow[];
    const versions = rows.map((row) => ({
      version: u64FromSql(row.version),
      revision: row.revision,
      previous_revision: row.previous_revision,
      created_order: row.seq,
    }));
    const current = u64FromSql(head.current_version);
    const currentRow = versions.find((v) => v.version === current);
    if (currentRow === undefined)
      throw new AgentscmError('STORE_CORRUPT', `Change ${id} has no row for its current version ${current}`);
    return { repository, id, current_version: current, current_revision: currentRow.revision, versions };
  });
}

/** The Change with every version (CHANGE_NOT_FOUND otherwise). */
export function getChange(auth: Authority, repository: string, id: string): Change {
  const change = findChange(auth, repository, id);
  if (change === null) throw changeNotFound(repository, id);
  return change;
}

/** The Change's version `version` (CHANGE_NOT_FOUND when either is absent). */
export function getChangeVersion(auth: Authority, repository: string, id: string, version: bigint): ChangeVersion {
  checkRepositoryId(repository);
  checkGenericId(id, 'Change ID');
  if (version < 1n || version > U64_MAX) throw changeNotFound(repository, id);
  const row = prepared(
    auth,
    'SELECT version, revision, previous_revision, seq FROM change_versions WHERE repository = ? AND change = ? ' +
      'AND version = ?',
  ).get(repository, id, u64ToSql(version)) as VersionRow | undefined;
  if (row === undefined)
    throw new AgentscmError('CHANGE_NOT_FOUND', `Change ${id} of repository ${repository} has no version ${version}`);
  return {
    version: u64FromSql(row.version),
    revision: row.revision,
    previous_revision: row.previous_revision,
    created_order: row.seq,
  };
}

function currentRevisionOf(auth: Authority, repository: string, id: string, version: bigint): string {
  const row = prepared(
    auth,
    'SELECT revision FROM change_versions WHERE repository = ? AND change = ? AND version = ?',
  ).get(repository, id, u64ToSql(version)) as { revision: string } | undefined;
  if (row === undefined)
    throw new AgentscmError('STORE_CORRUPT', `Change ${id} has no row for its current version ${version}`);
  return row.revision;
}

export interface AppendVersionInput {
  /** The current version the caller based its work on; null when it expects no Change yet. */
  readonly expectedCurrent: bigint | null;
  readonly revision: string;
  /**
   * Recorded as version 1's previous_revision (where the work started); later versions record the version they replace.
   */
  readonly baseRevision: string | null;
}

/**
 * Append version current+1 (or create the Change at version 1) in a writer transaction. The
 * caller's expectation is checked in the same transaction: a Change that moved on (or
 * appeared) meanwhile is CHANGE_CONFLICT (exit 3), and nothing is written.
 */
export function appendChangeVersion(
  auth: Authority,
  repository: string,
  id: string,
  input: AppendVersionInput,
): ChangeVersion {
  checkRepositoryId(repository);
  checkGenericId(id, 'Change ID');
  checkDigest(input.revision, 'revision');
  if (input.baseRevision !== null) checkDigest(input.baseRevision, 'base revision');
  return writeTransaction(auth, () => {
    if (!hasRevision(auth, repository, input.revision))
      throw new AgentscmError('REVISION_NOT_FOUND', `repository ${repository} has no revision ${input.revision}`);
    const head = prepared(auth, 'SELECT current_version FROM changes WHERE repository = ? AND id = ?').get(
      repository,
      id,
    ) as { current_version: string } | undefined;
    const current = head === undefined ? null : u64FromSql(head.current_version);
    if (current !== input.expectedCurrent) {
      const seen = current === null ? 'does not exist' : `is at version ${current}`;
      const expected = input.expectedCurrent === null ? 'no Change' : `version ${input.expectedCurrent}`;
      throw new AgentscmError('CHANGE_CONFLICT', `Change ${id} ${seen}, but this operation expected ${expected}`, {
        hint: 'another checkpoint of this Change finished first; run the command again',
      });
    }
    if (current !== null && current >= U64_MAX)
      throw new AgentscmError('INTERNAL', `Change ${id} is at the u64 maximum version`);
    const version = current === null ? 1n : current + 1n;
    const previousRevision = current === null ? input.baseRevision : currentRevisionOf(auth, repository, id, current);
    const seq = nextSeq(auth, 'change_versions');
    if (current === null) {
      prepared(auth, 'INSERT INTO changes (repository, id, current_version, seq) VALUES (?, ?, ?, ?)').run(
        repository,
        id,
        u64ToSql(version),
        nextSeq(auth, 'changes'),
      );
    } else {
      prepared(auth, 'UPDATE changes SET current_version = ? WHERE repository = ? AND id = ?').run(
        u64ToSql(version),
        repository,
        id,
      );
    }
    prepared(
      auth,
      'INSERT INTO change_versions (repository, change, version, revision, previous_revision, seq) ' +
        'VALUES (?, ?, ?, ?, ?, ?)',
    ).run(repository, id, u64ToSql(version), input.revision, previousRevision, seq);
    return { version, revision: input.revision, previous_revision: previousRevision, created_order: seq };
  });
}

/** Every Change of the repository with its current version, in creation order. */
export function listChanges(auth: Authority, repository: string): { id: string; current_version: bigint }[] {
  checkRepositoryId(repository);
  return (
    prepared(auth, 'SELECT id, current_version FROM changes WHERE repository = ? ORDER BY seq').all(repository) as {
      id: string;
      current_version: string;
    }[]
  ).map((row) => ({ id: row.id, current_version: u64FromSql(row.current_version) }));
}
