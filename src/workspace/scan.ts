/**
 * Workspace scan (issue 2 §4): a sorted list of the files of a workspace with their stat
 * snapshots, complete or explicitly incomplete. It never follows a symlink (a symlink is an
 * entry of its own), keeps the executable bit, never walks `.agentscm/` or `.git`, and honours
 * `.gitignore` files at every level with git's precedence (the `ignore` package does the
 * pattern matching) and, beneath them, the workspace's local exclude list `.agentscm/exclude`
 * (exclude.ts) with git's own `.git/info/exclude` in a git work tree. Names are read as bytes: a valid
 * UTF-8 name is recorded byte-exact (no normalization, docs/wire.md "Workspace paths"); a name
 * that is not UTF-8 makes the scan incomplete with its own code (WORKSPACE_PATH_NOT_UTF8).
 * Bounds (docs/workspace.md) are checked while walking, before any file content is read. A path
 * that cannot be recorded (an invalid name, a file that is not regular, a file over the size
 * bound, a collector signing key file) does not stop the walk: every such path is reported, the
 * first MAX_REPORTED_PROBLEMS of them by name, so that one run tells the user all there is to
 * fix. A bound of the whole tree (files, total bytes) stops it.
 */
import { isUtf8 } from 'node:buffer';
import { lstatSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';

import type { ErrorCode } from '../contracts/errors.js';
import { isKeyFileName } from '../contracts/key-file-name.js';
import { compareUtf8, MAX_WORKSPACE_PATH_BYTES, workspaceNameProblem } from '../contracts/paths.js';
import type { EntryMode } from '../native/revisions.js';
import { readExcludeRules, readGitInfoExclude } from './exclude.js';
import { fileType, lstatFields, type LstatFields } from './lstat-fields.js';
import type { StatSnapshot } from './stat-cache.js';
import { WORKSPACE_STATE_DIR } from './state-dir.js';

export interface ScanBounds {
  /** Most files (regular files and symlinks) one scan accepts. */
  readonly maxFiles: number;
  /** Largest single file, in bytes. */
  readonly maxFileBytes: number;
  /** Largest sum of file sizes, in bytes. */
  readonly maxTotalBytes: number;
  /** Longest relative path, in bytes (the canonical path bound; docs/workspace.md "Bounds"). */
  readonly maxPathBytes: number;
  /** Largest `.gitignore` file that is read. */
  readonly maxIgnoreFileBytes: number;
}

/** The documented bounds (docs/workspace.md "Bounds"). */
export const DEFAULT_SCAN_BOUNDS: ScanBounds = {
  maxFiles: 200_000,
  maxFileBytes: 2 ** 30,
  maxTotalBytes: 16 * 2 ** 30,
  maxPathBytes: MAX_WORKSPACE_PATH_BYTES,
  maxIgnoreFileBytes: 1 << 20,
};

/**
 * Bounds from the environment: AGENTSCM_SCAN_MAX_FILES, AGENTSCM_SCAN_MAX_FILE_BYTES and
 * AGENTSCM_SCAN_MAX_TOTAL_BYTES may only tighten the defaults (tests use them to reach a
 * bound with a small tree); a larger or malformed value is ignored.
 */
export function scanBoundsFromEnv(env: NodeJS.ProcessEnv = process.env): ScanBounds {
  const tighter = (name: string, current: number): number => {
    const text = env[name];
    if (text === undefined || !/^[0-9]{1,15}$/.test(text)) return current;
    const value = Number(text);
    return value < current ? value : current;
  };
  return {
    ...DEFAULT_SCAN_BOUNDS,
    maxFiles: tighter('AGENTSCM_SCAN_MAX_FILES', DEFAULT_SCAN_BOUNDS.maxFiles),
    maxFileBytes: tighter('AGENTSCM_SCAN_MAX_FILE_BYTES', DEFAULT_SCAN_BOUNDS.maxFileBytes),
    maxTotalBytes: tighter('AGENTSCM_SCAN_MAX_TOTAL_BYTES', DEFAULT_SCAN_BOUNDS.maxTotalBytes),
  };
}

export interface ScannedFile {
  /** Workspace path (docs/wire.md "Workspace paths"). */
  readonly path: string;
  readonly abs: string;
  readonly mode: EntryMode;
  readonly stat: StatSnapshot;
}

/** How many offending paths a scan names; the rest are counted. */
export const MAX_REPORTED_PROBLEMS = 20;

export interface ScanResult {
  readonly complete: boolean;
  /** Why the scan is incomplete (every offending path, bounded, or the bound met), or null. */
  readonly problem: string | null;
  /** The offending paths' problems, at most MAX_REPORTED_PROBLEMS of them. */
  readonly problems: readonly string[];
  /** How many problems there were in all (more than problems.length when some were left out). */
  readonly problemCount: number;
  /**
   * The code an operation refused for this scan reports: WORKSPACE_PATH_NOT_UTF8 when a name
   * is not UTF-8, WORKSPACE_SCAN_INCOMPLETE for every other problem, null when complete.
   */
  readonly problemCode: ErrorCode | null;
  /** Files found, sorted by path bytes (all of them only when complete); built from `table` when first read. */
  readonly files: ScannedFile[];
  /** The same files without an object per file (what a checkpoint compares in one pass). */
  readonly table: ScanTable;
  readonly totalBytes: bigint;
}

/** Modes by their index in ScanTable.modes (the stat cache's mode codes). */
export const SCAN_MODES: readonly EntryMode[] = ['file', 'executable', 'symlink'];

/**
 * The files of a scan as columns, sorted by path bytes: one string per file and typed arrays
 * for the rest, so that a large tree costs the garbage collector a few objects, not several per
 * file.
 */
export interface ScanTable {
  readonly count: number;
  readonly paths: readonly string[];
  /** Index into SCAN_MODES per file. */
  readonly modes: Uint8Array;
  /** Four numbers per file: size, mtime ms, ctime ms, inode (a StatSnapshot). */
  readonly stats: Float64Array;
  /** File i as a ScannedFile (built on each call). */
  file(i: number): ScannedFile;
}

export interface ScanOptions {
  readonly bounds?: ScanBounds;
  /** Absolute directories inside the workspace that are never scanned (e.g. a data dir placed there). */
  readonly excludeDirs?: readonly string[];
}

interface IgnoreLevel {
  /** Relative directory with a trailing slash ("" for the root). */
  readonly prefix: string;
  readonly rules: Ignore;
}

class ScanStop extends Error {}

function makeTable(rootPrefix: string, paths: readonly string[], modes: Uint8Array, stats: Float64Array): ScanTable {
  return {
    count: paths.length,
    paths,
    modes,
    stats,
    file(i) {
      const path = paths[i] as string;
      const stat: StatSnapshot = {
        size: stats[4 * i] as number,
        mtimeMs: stats[4 * i + 1] as number,
        ctimeMs: stats[4 * i + 2] as number,
        ino: stats[4 * i + 3] as number,
      };
      return {
        path,
        abs: `${rootPrefix}${sep === '/' ? path : path.replaceAll('/', sep)}`,
        mode: SCAN_MODES[modes[i] as number] as EntryMode,
        stat,
      };
    },
  };
}

/** Git's rule: a deeper .gitignore overrides a shallower one; within one file the last match wins. */
function isIgnored(levels: readonly IgnoreLevel[], relPath: string, isDir: boolean): boolean {
  let ignored = false;
  const candidate = isDir ? `${relPath}/` : relPath;
  for (const level of levels) {
    if (!candidate.startsWith(level.prefix)) continue;
    const result = level.rules.test(candidate.slice(level.prefix.length));
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/** Walk the workspace (module comment). Throws only IO_ERROR, or for an exclude file before walking. */
export function scanWorkspace(root: string, options: ScanOptions = {}): ScanResult {
  const bounds = options.bounds ?? DEFAULT_SCAN_BOUNDS;
  const excluded = new Set(options.excludeDirs ?? []);
  // Columns, in walk order until sorted below.
  const paths: string[] = [];
  const modeList: number[] = [];
  const statList: number[] = [];
  let totalBytes = 0;
  let bound: string | null = null;
  const problems: string[] = [];
  let problemCount = 0;
  let notUtf8 = false;

  const stop = (why: string): never => {
    bound = why;
    throw new ScanStop(why);
  };
  /** A path that cannot be recorded: reported, and the walk goes on. */
  const refuse = (why: string): void => {
    problemCount += 1;
    if (problems.length < MAX_REPORTED_PROBLEMS) problems.push(why);
  };

  const walk = (absDir: string, relDir: string, parentLevels: readonly IgnoreLevel[]): void => {
    // Names are read as text, the cheap way; a directory where decoding replaced some bytes
    // (U+FFFD: a name that is not UTF-8, or one that holds U+FFFD itself) is read again as
    // bytes, so that every name is still recorded or refused by its exact bytes.
    let dirents: (Dirent | Dirent<Buffer>)[];
    try {
      const named: Dirent[] = readdirSync(absDir, { withFileTypes: true });
      dirents = named.some((d) => d.name.includes(REPLACEMENT))
        ? readdirSync(absDir, { withFileTypes: true, encoding: 'buffer' })
        : named;
    } catch (error) {
      refuse(
        `cannot read directory ${relDir === '' ? '.' : relDir}: ` +
          `${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
      return;
    }
    const dirPrefix = absDir.endsWith(sep) ? absDir : `${absDir}${sep}`;
    let levels = parentLevels;
    const ignoreFile = dirents.find(
      (d) => d.isFile() && (typeof d.name === 'string' ? d.name === '.gitignore' : d.name.equals(GITIGNORE)),
    );
    if (ignoreFile !== undefined) {
      const abs = join(absDir, '.gitignore');
      let text: string;
      try {
        const size = lstatSync(abs).size;
        if (size > bounds.maxIgnoreFileBytes)
          stop(`${relDir}.gitignore has ${size} bytes, more than ${bounds.maxIgnoreFileBytes}`);
        text = readFileSync(abs, 'utf8');
      } catch (error) {
        if (error instanceof ScanStop) throw error;
        return stop(
          `cannot read ${relDir}.gitignore: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
      levels = [...parentLevels, { prefix: relDir, rules: ignore().add(text) }];
    }
    // The names first (a name that is not UTF-8 is refused here), then visited in path order: a
    // directory's name sorts as the name and "/", so the walk meets the paths already sorted by
    // bytes (git's index order) and the whole list needs no sort of its own.
    const names: string[] = [];
    const dirFlags: boolean[] = [];
    for (const dirent of dirents) {
      const raw = dirent.name;
      let name: string;
      if (typeof raw === 'string') name = raw;
      else if (!isUtf8(raw)) {
        // Not ignorable by pattern: the pattern matcher works on text, and this name has none.
        notUtf8 = true;
        refuse(
          `the name ${showBytes(raw)} in ` +
            `${relDir === '' ? 'the workspace root' : JSON.stringify(relDir.slice(0, -1))} is not valid UTF-8`,
        );
        continue;
      } else name = raw.toString('utf8');
      if (name === '.git') continue;
      if (relDir === '' && name === WORKSPACE_STATE_DIR) continue;
      names.push(name);
      dirFlags.push(dirent.isDirectory());
    }
    for (const k of pathOrder(names, dirFlags)) {
      const name = names[k] as string;
      const isDir = dirFlags[k] as boolean;
      const relPath = `${relDir}${name}`;
      // absDir is normalized (the resolved root, then names checked below): plain concatenation
      // gives what path.join would, without normalizing every path again.
      const abs = `${dirPrefix}${name}`;
      if (isIgnored(levels, relPath, isDir)) continue;
      if (isDir && excluded.has(abs)) continue;
      if (
        relPath.length > bounds.maxPathBytes ||
        (relPath.length * 3 > bounds.maxPathBytes && Buffer.byteLength(relPath, 'utf8') > bounds.maxPathBytes)
      ) {
        refuse(`path ${JSON.stringify(relPath.slice(0, 80))}… is longer than ${bounds.maxPathBytes} bytes`);
        continue;
      }
      // The directory part was checked on the way down: checking the name is enough.
      const pathProblem = workspaceNameProblem(name);
      if (pathProblem !== undefined) {
        refuse(`path ${JSON.stringify(relPath)} cannot be recorded: ${pathProblem}`);
        continue;
      }
      if (isDir) {
        walk(abs, `${relPath}/`, levels);
        continue;
      }
      let stat: LstatFields;
      try {
        stat = lstatFields(abs);
      } catch (error) {
        refuse(`cannot stat ${relPath}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
        continue;
      }
      let mode: EntryMode;
      const type = fileType(stat.mode);
      if (type === 'symlink') mode = 'symlink';
      else if (type === 'file') mode = (stat.mode & 0o100) !== 0 ? 'executable' : 'file';
      else if (type === 'directory') {
        // The directory entry type said otherwise: it was replaced while walking.
        refuse(`${relPath} changed type during the scan`);
        continue;
      } else {
        refuse(`${relPath} is neither a regular file, a directory nor a symlink`);
        continue;
      }
      // A private signing key is never recorded, whatever else the tree holds (docs/workspace.md).
      if (isKeyFileName(name)) {
        refuse(
          `${relPath} is a collector signing key file (private); keep the collector --state-dir outside the workspace`,
        );
        continue;
      }
      if (paths.length >= bounds.maxFiles) stop(`more than ${bounds.maxFiles} files`);
      if (mode !== 'symlink' && stat.size > bounds.maxFileBytes) {
        refuse(`${relPath} has ${stat.size} bytes, more than ${bounds.maxFileBytes}`);
        continue;
      }
      totalBytes += stat.size;
      if (totalBytes > bounds.maxTotalBytes) stop(`the files add up to more than ${bounds.maxTotalBytes} bytes`);
      paths.push(relPath);
      modeList.push(mode === 'file' ? 0 : mode === 'executable' ? 1 : 2);
      statList.push(stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino);
    }
  };

  const absRoot = resolve(root);
  const rules = [readGitInfoExclude(absRoot, bounds.maxIgnoreFileBytes), readExcludeRules(absRoot)];
  const rootLevels = rules.flatMap((r) => (r === null ? [] : [{ prefix: '', rules: r }]));
  try {
    walk(absRoot, '', rootLevels);
  } catch (error) {
    if (!(error instanceof ScanStop)) throw error;
  }
  // The walk met the paths in byte order (pathOrder).
  const count = paths.length;
  const modes = Uint8Array.from(modeList);
  const stats = Float64Array.from(statList);
  const table = makeTable(absRoot.endsWith(sep) ? absRoot : `${absRoot}${sep}`, paths, modes, stats);
  const problem = describeProblems(bound, problems, problemCount);
  const problemCode: ErrorCode | null =
    problem === null ? null : notUtf8 ? 'WORKSPACE_PATH_NOT_UTF8' : 'WORKSPACE_SCAN_INCOMPLETE';
  let files: ScannedFile[] | null = null;
  return {
    complete: problem === null,
    problem,
    problems,
    problemCount,
    problemCode,
    get files(): ScannedFile[] {
      if (files === null) {
        files = new Array<ScannedFile>(count);
        for (let i = 0; i < count; i++) files[i] = table.file(i);
      }
      return files;
    },
    table,
    totalBytes: BigInt(totalBytes),
  };
}

/**
 * The order in which to visit the names of one directory so that the paths come out sorted by
 * their UTF-8 bytes: a directory sorts as its name followed by "/" (every path below it starts
 * so), a file, symlink or other entry as its name.
 */
function pathOrder(names: readonly string[], isDir: readonly boolean[]): number[] {
  const keys = names.map((name, i) => (isDir[i] === true ? `${name}/` : name));
  const order = Array.from(keys.keys());
  order.sort((a, b) => compareUtf8(keys[a] as string, keys[b] as string));
  return order;
}

const GITIGNORE = Buffer.from('.gitignore');
const REPLACEMENT = '\ufffd';

/** A name that is not UTF-8, shown with its printable ASCII bytes as they are and every other byte as \xHH. */
function showBytes(raw: Buffer): string {
  let text = '';
  for (const byte of raw.subarray(0, 120))
    text +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x5c && byte !== 0x22
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, '0')}`;
  return `"${text}${raw.length > 120 ? '…' : ''}"`;
}

/** One line: the bound met, or the offending paths (the first MAX_REPORTED_PROBLEMS, the rest counted). */
function describeProblems(bound: string | null, problems: readonly string[], count: number): string | null {
  if (bound === null && count === 0) return null;
  const parts: string[] = [];
  if (count > 0) {
    const more = count - problems.length;
    parts.push(
      `${count} ${count === 1 ? 'path' : 'paths'} cannot be recorded: ${problems.join('; ')}` +
        (more > 0 ? `; and ${more} more` : ''),
    );
  }
  if (bound !== null) parts.push(bound);
  return parts.join('; ');
}
