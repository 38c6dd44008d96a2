/**
 * Stored revision trees (docs/native-store.md "Revisions"; encoding in contracts/tree.ts): one
 * `trees` row per distinct directory tree, its entries in `tree_entries`, shared by every
 * revision that holds it. Writers store only the trees not stored yet; readers walk from the
 * root tree along one path (one indexed lookup per component) or one directory at a time,
 * never loading a whole revision to answer for one path.
 */
import { AgentscmError } from '../contracts/errors.js';
import { compareTreeEntries, type BuiltTree, type TreeEntry, type TreeEntryKind } from '../contracts/tree.js';
import { u64FromSql } from './sqlite.js';
import { prepared, type Authority } from './store.js';

/** One entry of a stored tree, with what readers need of its object. */
export interface StoredTreeEntry extends TreeEntry {
  /** trees.rowid (directory) or blobs.rowid (the others). */
  readonly object: number;
  /** Content size (null for a directory). */
  readonly size: bigint | null;
}

/** Rowid of a stored tree, or null. */
export function storedTreeKey(auth: Authority, digest: string): number | null {
  const row = prepared(auth, 'SELECT rowid FROM trees WHERE digest = ?').get(digest) as { rowid: number } | undefined;
  return row === undefined ? null : row.rowid;
}

/**
 * Store the trees that are not stored yet (inside the caller's write transaction). `trees`
 * lists children before parents (buildTrees order). Every blob an entry names must be stored
 * (INTERNAL otherwise). Returns the root's rowid (the last tree) and how many trees were new.
 */
export function storeTrees(auth: Authority, trees: readonly BuiltTree[]): { root: number; created: number } {
  const keys = new Map<string, number>();
  const insertTree = prepared(auth, 'INSERT INTO trees (digest, entry_count) VALUES (?, ?)');
  const insertBlobEntry = prepared(
    auth,
    'INSERT INTO tree_entries (tree, name, kind, object) SELECT ?, ?, ?, rowid FROM blobs WHERE digest = ?',
  );
  const insertTreeEntry = prepared(auth, 'INSERT INTO tree_entries (tree, name, kind, object) VALUES (?, ?, ?, ?)');
  let created = 0;
  let root = 0;
  for (const tree of trees) {
    let key = keys.get(tree.digest) ?? storedTreeKey(auth, tree.digest);
    if (key === null) {
      key = Number(insertTree.run(tree.digest, tree.entries.length).lastInsertRowid);
      for (const entry of tree.entries) {
        if (entry.kind === 'directory') {
          const child = keys.get(entry.digest) ?? storedTreeKey(auth, entry.digest);
          if (child === null)
            throw new AgentscmError('INTERNAL', `tree ${tree.digest} names tree ${entry.digest}, which is not stored`);
          insertTreeEntry.run(key, entry.name, entry.kind, child);
        } else if (insertBlobEntry.run(key, entry.name, entry.kind, entry.digest).changes !== 1) {
          const path = tree.path === '' ? entry.name : `${tree.path}/${entry.name}`;
          throw new AgentscmError('INTERNAL', `revision entry ${path} references a blob that is not stored`);
        }
      }
      created += 1;
    }
    keys.set(tree.digest, key);
    root = key;
  }
  return { root, created };
}

type EntryRow = [string, TreeEntryKind, number, string | null, string | null, string | null];

const ENTRIES_SQL = `SELECT e.name, e.kind, e.object, b.digest, b.size, t.digest FROM tree_entries e
  LEFT JOIN blobs b ON e.kind <> 'directory' AND b.rowid = e.object
  LEFT JOIN trees t ON e.kind = 'directory' AND t.rowid = e.object
  WHERE e.tree = ?`;

function toStored(row: EntryRow, tree: number): StoredTreeEntry {
  const [name, kind, object, blobDigest, size, treeDigest] = row;
  const digest = kind === 'directory' ? treeDigest : blobDigest;
  if (digest === null)
    throw new AgentscmError(
      'STORE_CORRUPT',
      `tree ${tree} has an entry ${JSON.stringify(name)} whose ${kind === 'directory' ? 'tree' : 'blob'} is not stored`,
    );
  return { name, kind, digest, object, size: kind === 'directory' || size === null ? null : u64FromSql(size) };
}

/** The entries of one stored tree, in tree order (git's rule). */
export function readTreeEntries(auth: Authority, tree: number): StoredTreeEntry[] {
  const rows = prepared(auth, ENTRIES_SQL).raw(true).all(tree) as EntryRow[];
  return rows.map((row) => toStored(row, tree)).sort(compareTreeEntries);
}

/**
 * The directory entries of one stored tree (name and tree digest), in no particular order: no file's blob is looked up.
 */
export function readSubtrees(auth: Authority, tree: number): { name: string; digest: string }[] {
  return prepared(
    auth,
    'SELECT e.name, t.digest FROM tree_entries e JOIN trees t ON t.rowid = e.object WHERE e.tree = ? AND ' +
      "e.kind = 'directory'",
  ).all(tree) as {
    name: string;
    digest: string;
  }[];
}

/** One entry of a stored tree by name, or null. */
export function readTreeEntry(auth: Authority, tree: number, name: string): StoredTreeEntry | null {
  const row = prepared(auth, `${ENTRIES_SQL} AND e.name = ?`).raw(true).get(tree, name) as EntryRow | undefined;
  return row === undefined ? null : toStored(row, tree);
}

/**
 * The entry at a workspace path below a root tree (a file, or a directory), or null: one
 * lookup per path component.
 */
export function lookupTreePath(auth: Authority, root: number, path: string): StoredTreeEntry | null {
  const components = path.split('/');
  let tree = root;
  for (let i = 0; i < components.length; i++) {
    const entry = readTreeEntry(auth, tree, components[i] as string);
    if (entry === null) return null;
    if (i === components.length - 1) return entry;
    if (entry.kind !== 'directory') return null;
    tree = entry.object;
  }
  return null;
}

/** One file of a walk: its workspace path, kind and content. */
export interface WalkedFile {
  readonly path: string;
  readonly kind: Exclude<TreeEntryKind, 'directory'>;
  readonly blob: string;
  readonly size: bigint;
}

/**
 * Every file below a tree in whole-path byte order, depth first: one directory's entries are
 * held at a time on each level of the walk, never the whole listing.
 */
export function* walkTree(auth: Authority, tree: number, prefix = ''): Generator<WalkedFile, void, undefined> {
  for (const entry of readTreeEntries(auth, tree)) {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.kind === 'directory') yield* walkTree(auth, entry.object, path);
    else yield { path, kind: entry.kind, blob: entry.digest, size: entry.size ?? 0n };
  }
}

export type TreeChangeKind = 'added' | 'deleted' | 'modified';

/** One changed path between two trees: a file added, deleted, or with other content or kind. */
export interface TreeChange {
  readonly path: string;
  readonly change: TreeChangeKind;
  /** Kind before (null when added) and after (null when deleted). */
  readonly before: Exclude<TreeEntryKind, 'directory'> | null;
  readonly after: Exclude<TreeEntryKind, 'directory'> | null;
}

/**
 * The files that differ between two trees, in whole-path byte order. Subtrees with the same
 * digest are skipped without being read, so the cost follows the change, not the tree.
 */
export function* diffTrees(
  auth: Authority,
  a: number | null,
  b: number | null,
  prefix = '',
): Generator<TreeChange, void, undefined> {
  if (a === b) return;
  const left = a === null ? [] : readTreeEntries(auth, a);
  const right = b === null ? [] : readTreeEntries(auth, b);
  const byName = new Map<string, { before?: StoredTreeEntry; after?: StoredTreeEntry }>();
  for (const entry of left) byName.set(entry.name, { before: entry });
  for (const entry of right) byName.set(entry.name, { ...byName.get(entry.name), after: entry });
  // Visit names in tree order; a name that is a directory on one side and a file on the other
  // is visited in both positions (its files, then the file, or the reverse) to keep path order.
  const visits: { entry: StoredTreeEntry; side: 'before' | 'after' | 'both' }[] = [];
  for (const [, pair] of byName) {
    const { before, after } = pair;
    if (before !== undefined && after !== undefined && (before.kind === 'directory') === (after.kind === 'directory'))
      visits.push({ entry: before, side: 'both' });
    else {
      if (before !== undefined) visits.push({ entry: before, side: 'before' });
      if (after !== undefined) visits.push({ entry: after, side: 'after' });
    }
  }
  visits.sort((x, y) => compareTreeEntries(x.entry, y.entry));
  for (const { entry, side } of visits) {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    const pair = byName.get(entry.name) ?? {};
    if (entry.kind === 'directory') {
      const before = side === 'after' ? null : (pair.before?.object ?? null);
      const after = side === 'before' ? null : (pair.after?.object ?? null);
      yield* diffTrees(auth, before, after, path);
      continue;
    }
    const before = side === 'after' ? undefined : pair.before;
    const after = side === 'before' ? undefined : pair.after;
    const kindOf = (e: StoredTreeEntry | undefined): Exclude<TreeEntryKind, 'directory'> | null =>
      e === undefined || e.kind === 'directory' ? null : e.kind;
    if (before === undefined || before.kind === 'directory')
      yield { path, change: 'added', before: null, after: kindOf(after) };
    else if (after === undefined || after.kind === 'directory')
      yield { path, change: 'deleted', before: kindOf(before), after: null };
    else if (before.digest !== after.digest || before.kind !== after.kind)
      yield { path, change: 'modified', before: before.kind, after: after.kind };
  }
}
