/**
 * Immutable revisions (issue 2 §3). A revision ID is the domain digest (DOMAINS.revision) of
 * the canonical encoding of its manifest
 *   {"version":1,"parent":<revision or null>,"entries":[{"path","mode","size","blob"},...]}
 * with entries sorted by path bytes, `size` a u64 integer and `blob` the plain SHA-256 of
 * the content. The same tree with the same parent has the same ID in any store.
 */
import { AgentscmError } from '../contracts/errors.js';
import { compareUtf8, validateWorkspacePath } from '../contracts/paths.js';
import { quoteJsonString } from '../contracts/canonical-json.js';
import { domainDigest, DOMAINS } from '../contracts/digest.js';
import type { JsonObject } from '../contracts/json-value.js';
import { readBlob, streamBlob } from './blobs.js';
import { checkDigest, checkRepositoryId } from './checks.js';
import { prefixRange, resolveHexPrefix } from './prefixes.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { nextSeq, prepared, readTransaction, writeTransaction } from './store.js';
import type { Authority } from './store.js';

export type EntryMode = 'file' | 'executable' | 'symlink';

export const ENTRY_MODES: readonly EntryMode[] = ['file', 'executable', 'symlink'];

/** One file of a revision. A symlink's blob holds the link target bytes. */
export interface RevisionEntry {
  readonly path: string;
  readonly mode: EntryMode;
  readonly size: bigint;
  readonly blob: string;
}

export interface Revision {
  readonly id: string;
  readonly repository: string;
  readonly parent: string | null;
  readonly entry_count: number;
  readonly total_bytes: bigint;
}

const MAX_SAFE_TOTAL = BigInt(Number.MAX_SAFE_INTEGER);

/** UTF-8 byte order of workspace paths (localeCompare would not be byte order). */
export const comparePaths = compareUtf8;

/** The canonical manifest that a revision ID covers (issue 2 §3; docs/native-store.md). */
export function revisionManifest(parent: string | null, entries: readonly RevisionEntry[]): JsonObject {
  return {
    version: 1,
    parent,
    entries: entries.map((entry) => ({ path: entry.path, mode: entry.mode, size: entry.size, blob: entry.blob })),
  };
}

/**
 * The canonical manifest text, written directly: byte for byte what encodeCanonical gives for
 * revisionManifest() (a test holds them equal), without building a JSON value of every entry.
 */
export function encodeRevisionManifest(parent: string | null, entries: readonly RevisionEntry[]): string {
  const parts: string[] = [`{"version":1,"parent":${parent === null ? 'null' : quoteJsonString(parent)},"entries":[`];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as RevisionEntry;
    parts.push(`${i === 0 ? '' : ','}{"path":${quoteJsonString(entry.path)},"mode":"${entry.mode}","size":${entry.size.toString(10)},"blob":"${entry.blob}"}`);
  }
  parts.push(']}');
  return parts.join('');
}

/** Revision ID of a tree and parent: domain digest of the canonical manifest. Entries must be sorted. */
export function computeRevisionId(parent: string | null, entries: readonly RevisionEntry[]): string {
  return prepareRevision(parent, entries).id;
}

/** A manifest encoded once, with its ID, for a caller that needs the ID before recording. */
export interface PreparedRevision {
  readonly id: string;
  readonly manifest: string;
}

export function prepareRevision(parent: string | null, entries: readonly RevisionEntry[]): PreparedRevision {
  const manifest = encodeRevisionManifest(parent, entries);
  return { id: domainDigest(DOMAINS.revision, Buffer.from(manifest, 'utf8')), manifest };
}

interface RevisionRow {
  id: string;
  parent: string | null;
  entry_count: number;
  total_bytes: string;
}

interface EntryRow {
  path: string;
  mode: EntryMode;
  size: string;
  blob: string;
}

function toEntry(row: EntryRow): RevisionEntry {
  return { path: row.path, mode: row.mode, size: u64FromSql(row.size), blob: row.blob };
}

function revisionNotFound(repository: string, revision: string): AgentscmError {
  return new AgentscmError('REVISION_NOT_FOUND', `repository ${repository} has no revision ${revision}`, {
    hint: 'check the revision ID (64 hex) and --repository',
  });
}

/**
 * The revision of the repository a full ID or unique prefix of at least 8 hex digits names
 * (docs/cli.md "Prefixes"); REVISION_NOT_FOUND, ID_PREFIX_AMBIGUOUS or ID_INVALID otherwise.
 */
export function resolveRevisionRef(auth: Authority, repository: string, reference: string): string {
  checkRepositoryId(repository);
  return resolveHexPrefix(reference, {
    what: 'revision',
    notFound: 'REVISION_NOT_FOUND',
    listHint: '`agentscm revision list` shows the revisions',
    candidates: (prefix) => {
      const [low, high] = prefixRange(prefix);
      const row = prepared(auth, 'SELECT count(*) AS n, min(revision) AS first FROM repository_revisions WHERE repository = ? AND revision >= ? AND revision < ?').get(repository, low, high) as {
        n: number;
        first: string | null;
      };
      return { count: row.n, first: row.first };
    },
  });
}

export interface RevisionListItem {
  readonly id: string;
  readonly parent: string | null;
  readonly entry_count: number;
  readonly total_bytes: bigint;
}

/** Every revision the repository recorded, oldest first (`revision list`). */
export function listRevisions(auth: Authority, repository: string): RevisionListItem[] {
  checkRepositoryId(repository);
  const rows = prepared(
    auth,
    `SELECT r.id, r.parent, r.entry_count, r.total_bytes FROM repository_revisions rr JOIN revisions r ON r.id = rr.revision
     WHERE rr.repository = ? ORDER BY rr.seq`,
  ).all(repository) as RevisionRow[];
  return rows.map((row) => ({ id: row.id, parent: row.parent, entry_count: row.entry_count, total_bytes: u64FromSql(row.total_bytes) }));
}

/** True when the repository has recorded this revision. */
export function hasRevision(auth: Authority, repository: string, revision: string): boolean {
  return prepared(auth, 'SELECT 1 FROM repository_revisions WHERE repository = ? AND revision = ?').get(repository, revision) !== undefined;
}

/** A revision of the repository (REVISION_NOT_FOUND otherwise). */
export function getRevision(auth: Authority, repository: string, revision: string): Revision {
  checkRepositoryId(repository);
  checkDigest(revision, 'revision');
  const row = prepared(
    auth,
    `SELECT r.id, r.parent, r.entry_count, r.total_bytes FROM repository_revisions rr JOIN revisions r ON r.id = rr.revision
     WHERE rr.repository = ? AND rr.revision = ?`,
  ).get(repository, revision) as RevisionRow | undefined;
  if (row === undefined) throw revisionNotFound(repository, revision);
  return { id: row.id, repository, parent: row.parent, entry_count: row.entry_count, total_bytes: u64FromSql(row.total_bytes) };
}

function treeKey(auth: Authority, revision: string): number {
  const row = prepared(auth, 'SELECT rowid FROM revisions WHERE id = ?').get(revision) as { rowid: number } | undefined;
  if (row === undefined) throw new AgentscmError('STORE_CORRUPT', `revision ${revision} is recorded for a repository but has no tree`);
  return row.rowid;
}

/** Every entry of a revision, sorted by path bytes. */
export function listRevisionEntries(auth: Authority, repository: string, revision: string): RevisionEntry[] {
  return readTransaction(auth, () => {
    getRevision(auth, repository, revision);
    return (prepared(auth, 'SELECT path, mode, size, blob FROM revision_entries WHERE revision = ? ORDER BY path').all(treeKey(auth, revision)) as EntryRow[]).map(toEntry);
  });
}

/** Visit every entry of a revision in path order without materializing the list (inside the caller's read transaction). */
export function* iterateRevisionEntries(auth: Authority, repository: string, revision: string): Generator<RevisionEntry, void, undefined> {
  getRevision(auth, repository, revision);
  for (const row of prepared(auth, 'SELECT path, mode, size, blob FROM revision_entries WHERE revision = ? ORDER BY path').iterate(treeKey(auth, revision))) {
    yield toEntry(row as EntryRow);
  }
}

/** The entry at `path`, or null when the revision has no file there. */
export function statRevisionPath(auth: Authority, repository: string, revision: string, path: string): RevisionEntry | null {
  validateWorkspacePath(path);
  return readTransaction(auth, () => {
    getRevision(auth, repository, revision);
    const row = prepared(auth, 'SELECT path, mode, size, blob FROM revision_entries WHERE revision = ? AND path = ?').get(treeKey(auth, revision), path) as EntryRow | undefined;
    return row === undefined ? null : toEntry(row);
  });
}

function entryOrThrow(auth: Authority, repository: string, revision: string, path: string): RevisionEntry {
  const entry = statRevisionPath(auth, repository, revision, path);
  if (entry === null) throw new AgentscmError('PATH_NOT_FOUND', `revision ${revision} has no file at ${JSON.stringify(path)}`);
  return entry;
}

/**
 * The exact bytes of one file of a revision (a symlink gives its target). The stored size is
 * checked against maxBytes BEFORE reading (INPUT_TOO_LARGE); content is verified by digest.
 */
export function readRevisionFile(auth: Authority, repository: string, revision: string, path: string, options: { maxBytes: number }): Buffer {
  return readTransaction(auth, () => {
    const entry = entryOrThrow(auth, repository, revision, path);
    if (entry.size > BigInt(options.maxBytes)) {
      throw new AgentscmError('INPUT_TOO_LARGE', `${path} in revision ${revision} has ${entry.size} bytes, more than the limit of ${options.maxBytes}`);
    }
    return readBlob(auth, entry.blob, options.maxBytes);
  });
}

/** Stream one file of a revision chunk by chunk (see streamBlob); returns its entry first. */
export function openRevisionFile(auth: Authority, repository: string, revision: string, path: string): { entry: RevisionEntry; chunks: Iterable<Buffer> } {
  const entry = entryOrThrow(auth, repository, revision, path);
  return { entry, chunks: streamBlob(auth, entry.blob) };
}

/**
 * Record a revision for a repository inside the caller's write transaction (or its own).
 * Entries must be sorted by path bytes, unique, and reference stored blobs; the parent must
 * be a revision of the same repository. Recording an existing revision again is a no-op.
 */
export function recordRevision(
  auth: Authority,
  repository: string,
  parent: string | null,
  entries: readonly RevisionEntry[],
  encoded: PreparedRevision = prepareRevision(parent, entries),
): { id: string; created: boolean } {
  checkRepositoryId(repository);
  if (parent !== null) checkDigest(parent, 'parent revision');
  const { id, manifest } = encoded;
  return writeTransaction(auth, () => {
    if (parent !== null && !hasRevision(auth, repository, parent)) throw revisionNotFound(repository, parent);
    if (hasRevision(auth, repository, id)) return { id, created: false };
    const exists = prepared(auth, 'SELECT 1 FROM revisions WHERE id = ?').get(id) !== undefined;
    if (!exists) {
      let total = 0n;
      let previous: string | null = null;
      for (const entry of entries) {
        if (previous !== null && comparePaths(previous, entry.path) >= 0) throw new AgentscmError('INTERNAL', 'revision entries are not sorted and unique');
        total += entry.size;
        previous = entry.path;
      }
      const key = Number(
        prepared(auth, 'INSERT INTO revisions (id, parent, entry_count, total_bytes) VALUES (?, ?, ?, ?)').run(id, parent, entries.length, u64ToSql(total)).lastInsertRowid,
      );
      if (total <= MAX_SAFE_TOTAL) {
        // One statement over the manifest text just hashed: SQLite's JSON reader inserts every
        // entry without a JS round trip per row (sizes are below 2^53, so exact as integers).
        const inserted = prepared(
          auth,
          `INSERT INTO revision_entries (revision, path, mode, size, blob)
           SELECT ?, e.value ->> 'path', e.value ->> 'mode', printf('%020d', e.value ->> 'size'), e.value ->> 'blob' FROM json_each(?, '$.entries') e`,
        ).run(key, manifest);
        if (inserted.changes !== entries.length) throw new AgentscmError('INTERNAL', 'the manifest did not yield one row per entry');
      } else {
        const insertEntry = prepared(auth, 'INSERT INTO revision_entries (revision, path, mode, size, blob) VALUES (?, ?, ?, ?, ?)');
        for (const entry of entries) insertEntry.run(key, entry.path, entry.mode, u64ToSql(entry.size), entry.blob);
      }
      // One join instead of a lookup per entry: every entry must name a stored blob.
      const missing = prepared(auth, 'SELECT e.path FROM revision_entries e LEFT JOIN blobs b ON b.digest = e.blob WHERE e.revision = ? AND b.rowid IS NULL LIMIT 1').get(key) as
        | { path: string }
        | undefined;
      if (missing !== undefined) throw new AgentscmError('INTERNAL', `revision entry ${missing.path} references a blob that is not stored`);
    }
    prepared(auth, 'INSERT INTO repository_revisions (repository, revision, seq) VALUES (?, ?, ?)').run(repository, id, nextSeq(auth, 'repository_revisions'));
    return { id, created: true };
  });
}
