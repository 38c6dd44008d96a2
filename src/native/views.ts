/**
 * The native commands' core: each opens the authority (read-only for reads), resolves the
 * repository, does one thing and closes. CLI commands call exactly one of these.
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
import { openAuthority, readTransaction, type Authority, type AuthorityMode } from './store.js';
import { listTargets, type Target } from './targets.js';
import type { TreeChange } from './trees.js';

/** Largest file `revision cat --json` returns inline (base64 in one JSON document). */
export const CAT_JSON_MAX_BYTES = 16 * 1024 * 1024;

export interface RepositoryQuery {
  readonly dataDir: string;
  /** 32-hex ID or name; omitted when the store holds exactly one repository. */
  readonly repository?: string;
}

function withAuthority<T>(dataDir: string, mode: AuthorityMode, fn: (auth: Authority) => T): T {
  const auth = openAuthority(dataDir, { mode });
  try {
    return fn(auth);
  } finally {
    auth.close();
  }
}

export interface RevisionView extends Revision {
  readonly entries: RevisionEntry[];
}

/** `revision show`: the revision and its entries, from one read snapshot. */
export function showRevision(query: RepositoryQuery & { revision: string }): RevisionView {
  return withAuthority(query.dataDir, 'read', (auth) =>
    readTransaction(auth, () => {
      const repository = resolveRepository(auth, query.repository);
      const id = resolveRevisionRef(auth, repository.id, query.revision);
      const revision = getRevision(auth, repository.id, id);
      return { ...revision, entries: listRevisionEntries(auth, repository.id, id) };
    }),
  );
}

export interface RevisionDiffView {
  readonly repository: string;
  readonly from: string;
  readonly to: string;
  /** Files added, deleted or modified (content or kind), in path byte order. */
  readonly changes: TreeChange[];
}

/** `revision diff A B`: the files that differ between two revisions (prefixes resolved), from one read snapshot. */
export function diffRevisionView(query: RepositoryQuery & { from: string; to: string }): RevisionDiffView {
  return withAuthority(query.dataDir, 'read', (auth) =>
    readTransaction(auth, () => {
      const repository = resolveRepository(auth, query.repository);
      const from = resolveRevisionRef(auth, repository.id, query.from);
      const to = resolveRevisionRef(auth, repository.id, query.to);
      return { repository: repository.id, from, to, changes: diffRevisions(auth, repository.id, from, to) };
    }),
  );
}

export interface CatQuery extends RepositoryQuery {
  readonly revision: string;
  readonly path: string;
}

/** `revision cat`: stream the exact bytes of one file to `write`, chunk by chunk; returns its entry. */
export function catRevisionFile(query: CatQuery, write: (chunk: Buffer) => void): RevisionEntry {
  return withAuthority(query.dataDir, 'read', (auth) =>
    readTransaction(auth, () => {
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
    }),
  );
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
export function catRevisionFileJson(query: CatQuery): CatJsonView {
  return withAuthority(query.dataDir, 'read', (auth) =>
    readTransaction(auth, () => {
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
    }),
  );
}

/** `change show`. */
export function showChange(query: RepositoryQuery & { change: string }): Change {
  return withAuthority(query.dataDir, 'read', (auth) =>
    readTransaction(auth, () => {
      const repository = resolveRepository(auth, query.repository);
      return getChange(auth, repository.id, query.change);
    }),
  );
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
export function showPolicy(query: RepositoryQuery): PolicyView {
  return withAuthority(query.dataDir, 'read', (auth) =>
    readTransaction(auth, () => {
      const repository = resolveRepository(auth, query.repository);
      return {
        authority_id: authorityId(auth),
        repository: repository.id,
        name: repository.name,
        policy_epoch: currentPolicyEpoch(auth, repository.id),
        targets: listTargets(auth, repository.id),
      };
    }),
  );
}

/** `policy bump`: increment the epoch by one in a writer transaction. */
export function bumpPolicy(query: RepositoryQuery): PolicyBump {
  return withAuthority(query.dataDir, 'write', (auth) => {
    const repository = resolveRepository(auth, query.repository);
    return bumpPolicyEpoch(auth, repository.id);
  });
}
