/**
 * The native commands' core: each takes the authority of the command's Store (read-only for
 * reads), resolves the repository and does one thing. CLI commands call exactly one of these.
 */
import { AgentscmError } from '../contracts/errors.js';
import { authorityId } from './authority-identity.js';
import { BLOB_CHUNK_BYTES, streamBlob } from './blobs.js';
import { getChange, type Change } from './changes.js';
import { bumpPolicyEpoch, currentPolicyEpoch, type PolicyBump } from './policy.js';
import { resolveRepository } from './repositories.js';
import {
  diffRevisions,
  getRevision,
  listRevisionEntries,
  openRevisionFile,
  readRevisionFile,
  resolveRevisionRef,
  statRevisionPath,
  type Revision,
  type RevisionEntry,
} from './revisions.js';
import { readTransaction, type Authority } from './store.js';
import { listTargets, type Target } from './targets.js';
import type { TreeChange } from './trees.js';

/** Largest file `revision cat --json` returns inline (base64 in one JSON document). */
export const CAT_JSON_MAX_BYTES = 16 * 1024 * 1024;

export interface RepositoryQuery {
  /** 32-hex ID or name; omitted when the store holds exactly one repository. */
  readonly repository?: string;
}

export interface RevisionView extends Revision {
  readonly entries: RevisionEntry[];
}

/** `revision show`: the revision and its entries, from one read snapshot. */
export function showRevision(auth: Authority, query: RepositoryQuery & { revision: string }): RevisionView {
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, query.repository);
    const id = resolveRevisionRef(auth, repository.id, query.revision);
    const revision = getRevision(auth, repository.id, id);
    return { ...revision, entries: listRevisionEntries(auth, repository.id, id) };
  });
}

export interface RevisionDiffView {
  readonly repository: string;
  readonly from: string;
  readonly to: string;
  /** Files added, deleted or modified (content or kind), in path byte order. */
  readonly changes: TreeChange[];
}

/** `revision diff A B`: the files that differ between two revisions (prefixes resolved), from one read snapshot. */
export function diffRevisionView(
  auth: Authority,
  query: RepositoryQuery & { from: string; to: string },
): RevisionDiffView {
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, query.repository);
    const from = resolveRevisionRef(auth, repository.id, query.from);
    const to = resolveRevisionRef(auth, repository.id, query.to);
    return { repository: repository.id, from, to, changes: diffRevisions(auth, repository.id, from, to) };
  });
}

export interface CatQuery extends RepositoryQuery {
  readonly revision: string;
  readonly path: string;
}

/** `revision cat`: stream the exact bytes of one file to `write`, chunk by chunk; returns its entry. */
export function catRevisionFile(auth: Authority, query: CatQuery, write: (chunk: Buffer) => void): RevisionEntry {
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, query.repository);
    const revision = resolveRevisionRef(auth, repository.id, query.revision);
    const opened = openRevisionFile(auth, repository.id, revision, query.path);
    if (opened.entry.size > BigInt(BLOB_CHUNK_BYTES)) {
      // A chunked blob is verified to the end before its first byte goes out, so a corrupt
      // blob yields STORE_CORRUPT and no output rather than a truncated file.
      for (const chunk of streamBlob(auth, opened.entry.blob)) void chunk;
    }
    for (const chunk of opened.chunks) write(chunk);
    return opened.entry;
  });
}

export interface CatJsonView {
  readonly repository: string;
  readonly revision: string;
  readonly path: string;
  readonly mode: RevisionEntry['mode'];
  readonly size: bigint;
  readonly blob: string;
  readonly content_base64: string;
}

/** `revision cat --json`: the file inline as base64, refused above CAT_JSON_MAX_BYTES before reading. */
export function catRevisionFileJson(auth: Authority, query: CatQuery): CatJsonView {
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, query.repository);
    const revision = resolveRevisionRef(auth, repository.id, query.revision);
    const bytes = readRevisionFile(auth, repository.id, revision, query.path, { maxBytes: CAT_JSON_MAX_BYTES });
    const entry = statRevisionPath(auth, repository.id, revision, query.path);
    if (entry === null)
      throw new AgentscmError('PATH_NOT_FOUND', `revision ${revision} has no file at ${JSON.stringify(query.path)}`);
    return {
      repository: repository.id,
      revision,
      path: entry.path,
      mode: entry.mode,
      size: entry.size,
      blob: entry.blob,
      content_base64: bytes.toString('base64'),
    };
  });
}

/** `change show`. */
export function showChange(auth: Authority, query: RepositoryQuery & { change: string }): Change {
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, query.repository);
    return getChange(auth, repository.id, query.change);
  });
}

export interface PolicyView {
  /** The store's authority identity (docs/wire.md "Authority identity and grants"). */
  readonly authority_id: string;
  readonly repository: string;
  readonly name: string;
  readonly policy_epoch: bigint;
  readonly targets: Target[];
}

/** `policy show`: the store's authority_id and the repository's current policy epoch (and its targets). */
export function showPolicy(auth: Authority, query: RepositoryQuery): PolicyView {
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, query.repository);
    return {
      authority_id: authorityId(auth),
      repository: repository.id,
      name: repository.name,
      policy_epoch: currentPolicyEpoch(auth, repository.id),
      targets: listTargets(auth, repository.id),
    };
  });
}

/** `policy bump`: increment the epoch by one in a writer transaction. */
export function bumpPolicy(auth: Authority, query: RepositoryQuery): PolicyBump {
  const repository = resolveRepository(auth, query.repository);
  return bumpPolicyEpoch(auth, repository.id);
}
