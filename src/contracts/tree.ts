/**
 * Revision trees (docs/native-store.md "Revisions"): one tree object per directory, as in git.
 *
 * A tree is the canonical encoding of
 *   {"version":1,"entries":[{"name","kind","digest"},...]}
 * with `kind` one of file, executable, symlink, directory; `digest` the plain SHA-256 of the
 * content (a symlink: of its target bytes) or, for a directory, its tree digest. Its digest is
 * the domain digest DOMAINS.tree of those bytes. Entries are sorted by the UTF-8 bytes of the
 * name, a directory's name compared as if it ended with "/" (git's rule): a depth-first walk of
 * the trees then visits paths in the byte order of the whole path. An empty directory has no
 * tree (it is not recorded), so every tree but the root of an empty workspace has entries.
 *
 * A revision is {"version":2,"parent":<revision or null>,"tree":<root tree digest>}, its ID the
 * domain digest DOMAINS.revision. Pure computation: no I/O.
 */
import { domainDigest, DOMAINS } from './digest.js';
import { AgentscmError } from './errors.js';
import { quoteJsonString } from './json/canonical-json.js';
import { compareUtf8 } from './paths.js';

export type TreeEntryKind = 'file' | 'executable' | 'symlink' | 'directory';

export const TREE_ENTRY_KINDS: readonly TreeEntryKind[] = ['file', 'executable', 'symlink', 'directory'];

export interface TreeEntry {
  readonly name: string;
  readonly kind: TreeEntryKind;
  /** Plain SHA-256 of the content (file, executable, symlink) or the tree digest (directory). */
  readonly digest: string;
}

/** One file of a flat listing (the input of buildTrees): workspace path, mode and content digest. */
export interface FlatEntry {
  readonly path: string;
  readonly mode: Exclude<TreeEntryKind, 'directory'>;
  readonly blob: string;
}

/** git's order: UTF-8 bytes of the name, a directory's name followed by "/". */
export function compareTreeEntries(a: TreeEntry, b: TreeEntry): number {
  const x = a.kind === 'directory' ? `${a.name}/` : a.name;
  const y = b.kind === 'directory' ? `${b.name}/` : b.name;
  return compareUtf8(x, y);
}

/** The canonical encoding of a tree (entries already in tree order). */
export function encodeTree(entries: readonly TreeEntry[]): string {
  const parts: string[] = ['{"version":1,"entries":['];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as TreeEntry;
    parts.push(
      `${i === 0 ? '' : ','}{"name":${quoteJsonString(entry.name)},"kind":"${entry.kind}","digest":"${entry.digest}"}`,
    );
  }
  parts.push(']}');
  return parts.join('');
}

export function treeDigest(entries: readonly TreeEntry[]): string {
  return domainDigest(DOMAINS.tree, Buffer.from(encodeTree(entries), 'utf8'));
}

/** The canonical encoding of a revision: its root tree and parent. */
export function encodeRevision(parent: string | null, tree: string): string {
  return `{"version":2,"parent":${parent === null ? 'null' : quoteJsonString(parent)},"tree":${quoteJsonString(tree)}}`;
}

export function revisionIdOf(parent: string | null, tree: string): string {
  return domainDigest(DOMAINS.revision, Buffer.from(encodeRevision(parent, tree), 'utf8'));
}

/** A tree built from a flat listing: its directory path ("" for the root), digest and entries. */
export interface BuiltTree {
  readonly path: string;
  readonly digest: string;
  readonly entries: readonly TreeEntry[];
}

export interface BuiltTrees {
  /** Digest of the root tree. */
  readonly root: string;
  /** Every tree but those buildTrees was given as known, children before their parent (the root last). */
  readonly trees: readonly BuiltTree[];
}

interface OpenDir {
  readonly path: string;
  readonly name: string;
  readonly entries: TreeEntry[];
  readonly names: Set<string>;
  /** The digest the caller knows for this directory: its entries are neither kept nor hashed. */
  readonly known: string | undefined;
  /** Inside a known directory: nothing of it is kept. */
  readonly skipped: boolean;
}

function notSorted(why: string): AgentscmError {
  return new AgentscmError('INTERNAL', `revision entries ${why}`);
}

/**
 * Every tree of a flat listing sorted by path bytes (unique paths, no path both a file and a
 * directory): one pass, a stack of open directories. Because the listing is in whole-path byte
 * order, entries reach each directory already in tree order.
 *
 * `known` may give the digest of a directory (never the root) whose files the caller knows
 * to be those of an already stored tree (a checkpoint: a directory with no changed path below
 * it has its base tree). Such a directory is neither encoded nor hashed nor returned in
 * `trees`, and nothing below it is looked at beyond the path order.
 */
export function buildTrees(files: readonly FlatEntry[], known?: (dirPath: string) => string | undefined): BuiltTrees {
  const trees: BuiltTree[] = [];
  const stack: OpenDir[] = [{ path: '', name: '', entries: [], names: new Set(), known: undefined, skipped: false }];
  const add = (dir: OpenDir, entry: TreeEntry): void => {
    if (dir.known !== undefined || dir.skipped) return;
    if (dir.names.has(entry.name))
      throw notSorted(
        `name ${JSON.stringify(dir.path === '' ? entry.name : `${dir.path}/${entry.name}`)} ` +
          'both as a file and a directory, or twice',
      );
    dir.names.add(entry.name);
    dir.entries.push(entry);
  };
  const close = (): void => {
    const dir = stack.pop() as OpenDir;
    if (dir.skipped) return;
    let digest = dir.known;
    if (digest === undefined) {
      digest = treeDigest(dir.entries);
      trees.push({ path: dir.path, digest, entries: dir.entries });
    }
    add(stack[stack.length - 1] as OpenDir, { name: dir.name, kind: 'directory', digest });
  };
  let previous: string | null = null;
  for (const file of files) {
    if (previous !== null && compareUtf8(previous, file.path) >= 0) throw notSorted('are not sorted and unique');
    previous = file.path;
    const slash = file.path.lastIndexOf('/');
    const dirPath = slash < 0 ? '' : file.path.slice(0, slash);
    // Close open directories that are not ancestors of this file's directory.
    for (;;) {
      const top = stack[stack.length - 1] as OpenDir;
      if (top.path === '' || dirPath === top.path || dirPath.startsWith(`${top.path}/`)) break;
      close();
    }
    // Open the directories between the innermost open one and the file.
    let top = stack[stack.length - 1] as OpenDir;
    while (top.path !== dirPath) {
      const start = top.path === '' ? 0 : top.path.length + 1;
      const end = dirPath.indexOf('/', start);
      const path = end < 0 ? dirPath : dirPath.slice(0, end);
      const skipped = top.skipped || top.known !== undefined;
      top = {
        path,
        name: path.slice(start),
        entries: [],
        names: new Set(),
        known: skipped || known === undefined ? undefined : known(path),
        skipped,
      };
      stack.push(top);
    }
    add(top, { name: file.path.slice(slash + 1), kind: file.mode, digest: file.blob });
  }
  while (stack.length > 1) close();
  const root = stack[0] as OpenDir;
  const digest = treeDigest(root.entries);
  trees.push({ path: '', digest, entries: root.entries });
  return { root: digest, trees };
}
