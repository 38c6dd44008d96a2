/**
 * Immutable revisions as content-addressed trees (docs/native-store.md "Revisions"). A revision
 * is its root tree plus its parent; its ID is the domain digest (DOMAINS.revision) of
 *   {"version":2,"parent":<revision or null>,"tree":<root tree digest>}
 * and each directory is a tree (contracts/tree.ts) shared by every revision that holds it. The
 * same tree with the same parent has the same ID in any store.
 */
import { AgentscmError } from '../contracts/errors.js';
import { compareUtf8, validateWorkspacePath } from '../contracts/paths.js';
import { buildTrees, revisionIdOf, type BuiltTree, type FlatEntry } from '../contracts/tree.js';
import { readBlob, streamBlob } from './blobs.js';
import { checkDigest, checkRepositoryId } from './checks.js';
import { prefixRange, resolveHexPrefix } from './prefixes.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { nextSeq, prepared, readTransaction, writeTransaction, type Authority } from './store.js';
import { diffTrees, lookupTreePath, readSubtrees, storeTrees, walkTree, type TreeChange } from './trees.js';

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

/** UTF-8 byte order of workspace paths (localeCompare would not be byte order). */
export const comparePaths = compareUtf8;

/** A revision computed from a flat listing, with its trees, for a caller that needs the ID before recording. */
export interface PreparedRevision {
  readonly id: string;
  /** Root tree digest. */
  readonly tree: string;
  /** Every tree of the revision not stored already (see prepareRevision), children before parents. */
  readonly trees: readonly BuiltTree[];
  readonly entryCount: number;
  readonly totalBytes: bigint;
}

/**
 * Trees and ID of a flat listing sorted by path bytes (INTERNAL when not sorted and unique).
 * `known` gives the digests of directories already stored whose files are unchanged
 * (unchangedDirectories); they are not rebuilt.
 */
export function prepareRevision(
  parent: string | null,
  entries: readonly RevisionEntry[],
  known?: ReadonlyMap<string, string>,
): PreparedRevision {
  const built = buildTrees(entries, known === undefined ? undefined : (dir) => known.get(dir));
  let total = 0n;
  for (const entry of entries) total += entry.size;
  return {
    id: revisionIdOf(parent, built.root),
    tree: built.root,
    trees: built.trees,
    entryCount: entries.length,
    totalBytes: total,
  };
}

/**
 * A revision from only the files of the directories on a changed path (plus one file of each
 * directory `known` names; see the checkpoint's revisionInput), `known` as for prepareRevision,
 * with the whole tree's file count and content bytes given by the caller. Same ID as
 * prepareRevision of the full listing.
 */
export function prepareRevisionFromChanged(
  parent: string | null,
  files: readonly FlatEntry[],
  known: ReadonlyMap<string, string>,
  totals: { readonly entryCount: number; readonly totalBytes: bigint },
): PreparedRevision {
  const built = buildTrees(files, (dir) => known.get(dir));
  return {
    id: revisionIdOf(parent, built.root),
    tree: built.root,
    trees: built.trees,
    entryCount: totals.entryCount,
    totalBytes: totals.totalBytes,
  };
}

/**
 * The stored tree digests of the directories of a recorded revision that hold none of
 * `changedPaths` (sorted or not; files added, modified or deleted since it) but whose parent
 * directory does: with them prepareRevision hashes only the directories on a changed path.
 * Directories below such a directory are not listed (their parent's digest covers them).
 */
export function unchangedDirectories(
  auth: Authority,
  repository: string,
  revision: string,
  changedPaths: readonly string[],
): Map<string, string> {
  checkRepositoryId(repository);
  const onChangedPath = new Set<string>(['']);
  for (const path of changedPaths) {
    for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1))
      onChangedPath.add(path.slice(0, slash));
  }
  const known = new Map<string, string>();
  readTransaction(auth, () => {
    const root = rootTree(auth, repository, revision);
    for (const dir of onChangedPath) {
      let tree: number;
      if (dir === '') tree = root;
      else {
        const entry = lookupTreePath(auth, root, dir);
        if (entry === null || entry.kind !== 'directory') continue;
        tree = entry.object;
      }
      for (const entry of readSubtrees(auth, tree)) {
        const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (!onChangedPath.has(path)) known.set(path, entry.digest);
      }
    }
  });
  return known;
}

/** Revision ID of a tree and parent. Entries must be sorted. */
export function computeRevisionId(parent: string | null, entries: readonly RevisionEntry[]): string {
  return prepareRevision(parent, entries).id;
}

interface RevisionRow {
  id: string;
  parent: string | null;
  entry_count: number;
  total_bytes: string;
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
      const row = prepared(
        auth,
        'SELECT count(*) AS n, min(revision) AS first FROM repository_revisions WHERE repository = ? AND ' +
          'revision >= ? AND revision < ?',
      ).get(repository, low, high) as {
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
    `SELECT r.id, r.parent, r.entry_count, r.total_bytes
     FROM repository_revisions rr JOIN revisions r ON r.id = rr.revision
     WHERE rr.repository = ? ORDER BY rr.seq`,
  ).all(repository) as RevisionRow[];
  return rows.map((row) => ({
    id: row.id,
    parent: row.parent,
    entry_count: row.entry_count,
    total_bytes: u64FromSql(row.total_bytes),
  }));
}

/** True when the repository has recorded this revision. */
export function hasRevision(auth: Authority, repository: string, revision: string): boolean {
  return (
    prepared(auth, 'SELECT 1 FROM repository_revisions WHERE repository = ? AND revision = ?').get(
      repository,
      revision,
    ) !== undefined
  );
}

/** A revision of the repository (REVISION_NOT_FOUND otherwise). */
export function getRevision(auth: Authority, repository: string, revision: string): Revision {
  checkRepositoryId(repository);
  checkDigest(revision, 'revision');
  const row = prepared(
    auth,
    `SELECT r.id, r.parent, r.entry_count, r.total_bytes
     FROM repository_revisions rr JOIN revisions r ON r.id = rr.revision
     WHERE rr.repository = ? AND rr.revision = ?`,
  ).get(repository, revision) as RevisionRow | undefined;
  if (row === undefined) throw revisionNotFound(repository, revision);
  return {
    id: row.id,
    repository,
    parent: row.parent,
    entry_count: row.entry_count,
    total_bytes: u64FromSql(row.total_bytes),
  };
}

/** Rowid of the root tree of a revision recorded for the repository (REVISION_NOT_FOUND otherwise). */
function rootTree(auth: Authority, repository: string, revision: string): number {
  getRevision(auth, repository, revision);
  const row = prepared(auth, 'SELECT tree FROM revisions WHERE id = ?').get(revision) as { tree: number } | undefined;
  if (row === undefined)
    throw new AgentscmError('STORE_CORRUPT', `revision ${revision} is recorded for a repository but has no tree`);
  return row.tree;
}

function toEntry(file: { path: string; kind: EntryMode; blob: string; size: bigint }): RevisionEntry {
  return { path: file.path, mode: file.kind, size: file.size, blob: file.blob };
}

/** Every entry of a revision, sorted by path bytes (`revision show`: the whole listing is its answer). */
export function listRevisionEntries(auth: Authority, repository: string, revision: string): RevisionEntry[] {
  return readTransaction(auth, () => [...iterateRevisionEntries(auth, repository, revision)]);
}

/** Visit every entry of a revision in path order, one directory at a time (inside the caller's read transaction). */
export function* iterateRevisionEntries(
  auth: Authority,
  repository: string,
  revision: string,
): Generator<RevisionEntry, void, undefined> {
  for (const file of walkTree(auth, rootTree(auth, repository, revision))) yield toEntry(file);
}

/** The entry at `path`, or null when the revision has no file there (one lookup per path component). */
export function statRevisionPath(
  auth: Authority,
  repository: string,
  revision: string,
  path: string,
): RevisionEntry | null {
  validateWorkspacePath(path);
  return readTransaction(auth, () => {
    const entry = lookupTreePath(auth, rootTree(auth, repository, revision), path);
    if (entry === null || entry.kind === 'directory') return null;
    return { path, mode: entry.kind, size: entry.size ?? 0n, blob: entry.digest };
  });
}

/** True when `dir` is a directory of the revision (it holds at least one file); "" is the root. */
export function revisionHasDirectory(auth: Authority, repository: string, revision: string, dir: string): boolean {
  if (dir !== '') validateWorkspacePath(dir);
  return readTransaction(auth, () => {
    const root = rootTree(auth, repository, revision);
    if (dir === '') return true;
    return lookupTreePath(auth, root, dir)?.kind === 'directory';
  });
}

/** The files that differ between two revisions of the repository, in path order (`revision diff`). */
export function diffRevisions(auth: Authority, repository: string, from: string, to: string): TreeChange[] {
  return readTransaction(auth, () => [
    ...diffTrees(auth, rootTree(auth, repository, from), rootTree(auth, repository, to)),
  ]);
}

function entryOrThrow(auth: Authority, repository: string, revision: string, path: string): RevisionEntry {
  const entry = statRevisionPath(auth, repository, revision, path);
  if (entry === null)
    throw new AgentscmError('PATH_NOT_FOUND', `revision ${revision} has no file at ${JSON.stringify(path)}`);
  return entry;
}

/**
 * The exact bytes of one file of a revision (a symlink gives its target). The stored size is
 * checked against maxBytes BEFORE reading (INPUT_TOO_LARGE); content is verified by digest.
 */
export function readRevisionFile(
  auth: Authority,
  repository: string,
  revision: string,
  path: string,
  options: { maxBytes: number },
): Buffer {
  return readTransaction(auth, () => {
    const entry = entryOrThrow(auth, repository, revision, path);
    if (entry.size > BigInt(options.maxBytes)) {
      throw new AgentscmError(
        'INPUT_TOO_LARGE',
        `${path} in revision ${revision} has ${entry.size} bytes, more than the limit of ${options.maxBytes}`,
      );
    }
    return readBlob(auth, entry.blob, options.maxBytes);
  });
}

/** Stream one file of a revision chunk by chunk (see streamBlob); returns its entry first. */
export function openRevisionFile(
  auth: Authority,
  repository: string,
  revision: string,
  path: string,
): { entry: RevisionEntry; chunks: Iterable<Buffer> } {
  const entry = entryOrThrow(auth, repository, revision, path);
  return { entry, chunks: streamBlob(auth, entry.blob) };
}

/**
 * Record a revision for a repository inside the caller's write transaction (or its own).
 * Entries must be sorted by path bytes, unique, and reference stored blobs; the parent must
 * be a revision of the same repository. Only the trees not stored yet are written (a
 * checkpoint that changes one file writes the trees on that file's path). Recording an
 * existing revision again is a no-op.
 */
export function recordRevision(
  auth: Authority,
  repository: string,
  parent: string | null,
  entries: readonly RevisionEntry[],
  encoded: PreparedRevision = prepareRevision(parent, entries),
): { id: string; created: boolean; trees_created: number } {
  checkRepositoryId(repository);
  if (parent !== null) checkDigest(parent, 'parent revision');
  const { id } = encoded;
  return writeTransaction(auth, () => {
    if (parent !== null && !hasRevision(auth, repository, parent)) throw revisionNotFound(repository, parent);
    if (hasRevision(auth, repository, id)) return { id, created: false, trees_created: 0 };
    let treesCreated = 0;
    const exists = prepared(auth, 'SELECT 1 FROM revisions WHERE id = ?').get(id) !== undefined;
    if (!exists) {
      const stored = storeTrees(auth, encoded.trees);
      treesCreated = stored.created;
      prepared(auth, 'INSERT INTO revisions (id, parent, tree, entry_count, total_bytes) VALUES (?, ?, ?, ?, ?)').run(
        id,
        parent,
        stored.root,
        encoded.entryCount,
        u64ToSql(encoded.totalBytes),
      );
    }
    prepared(auth, 'INSERT INTO repository_revisions (repository, revision, seq) VALUES (?, ?, ?)').run(
      repository,
      id,
      nextSeq(auth, 'repository_revisions'),
    );
    return { id, created: true, trees_created: treesCreated };
  });
}
