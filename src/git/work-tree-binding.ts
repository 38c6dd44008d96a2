/**
 * Binding a native workspace to a git work tree (docs/git.md "Binding a git work tree"). The workspace root must
 * be the top level of the work tree (its `.git` a directory owned by the caller, src/agent-state/safe-git.ts). The
 * scan already skips `.git` and honours `.gitignore` and `.git/info/exclude`; this module refuses what would make
 * the native revision differ from what git records, before anything is recorded:
 *
 * - submodules and nested repositories (GIT_SUBMODULE_UNSUPPORTED): a `.gitmodules` among the scanned files, a
 *   gitlink in HEAD's tree, a directory holding scanned files that has a `.git` of its own;
 * - byte-changing conversion (GIT_ATTRIBUTES_UNSUPPORTED): a scanned file whose bytes git would change on the
 *   way into its object store. git itself answers which files it converts: `git check-attr` reports `text`,
 *   `eol`, `crlf`, `working-tree-encoding` or `ident` set or given a value (only `unspecified` and `unset` pass),
 *   or `core.autocrlf` is true or input (every file). For those files, one `git hash-object --stdin-paths` call
 *   gives the id with the conversion applied, compared with the id of the raw bytes computed here; a file whose
 *   ids differ is refused, the rest (e.g. LF files under `* text=auto eol=lf`) pass. `filter` (LFS and the like)
 *   and a `working-tree-encoding` other than UTF-8 are refused whatever the bytes: agentscm runs no filter
 *   program, and git re-encodes (or fails on) every such file. Every source git reads (`.gitattributes` at
 *   every level, `.git/info/attributes`, the user's attributes file; the system one is off for every call
 *   agentscm makes) and every macro counts exactly as git counts it.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

import { checkGitDir, runGitSync } from '../agent-state/safe-git.js';
import { AgentscmError } from '../contracts/errors.js';
import { SCAN_MODES, type ScanResult } from '../workspace/scan.js';
import { tryGit } from './run.js';

/** The attributes that make git convert bytes between the work tree and the object store. */
export const BYTE_CHANGING_ATTRIBUTES = ['text', 'eol', 'crlf', 'filter', 'working-tree-encoding', 'ident'] as const;

/** Paths per `git check-attr` call (keeps the argument list far below the system's limit). */
const CHECK_ATTR_BATCH = 2000;
/** At most this many offending paths are named. */
const SHOWN = 10;

function failed(what: string, stderr: string): AgentscmError {
  return new AgentscmError('GIT_FAILED', `git ${what} failed: ${stderr.trim().slice(0, 400) || 'no message'}`, {
    hint: 'check that git is installed and that `git fsck` finds the repository sound, then run again',
  });
}

/** True when `root` holds a `.git` entry (a git work tree's top level, or a linked checkout). */
export function isGitWorkTree(root: string): boolean {
  try {
    lstatSync(join(root, '.git'));
    return true;
  } catch {
    return false;
  }
}

function submodules(found: readonly string[]): AgentscmError {
  return new AgentscmError(
    'GIT_SUBMODULE_UNSUPPORTED',
    `the git work tree holds submodules or nested repositories (${found.slice(0, SHOWN).join('; ')}), which the ` +
      'native store cannot carry; nothing was recorded',
    {
      hint:
        'vendor the files instead of a submodule (`git rm` the submodule, copy its files), or add the nested ' +
        'repository to .git/info/exclude, then run again',
    },
  );
}

function checkSubmodules(root: string, paths: readonly string[]): void {
  const found: string[] = [];
  if (paths.includes('.gitmodules')) found.push('.gitmodules');
  const head = runGitSync(root, ['ls-tree', '-r', '-z', '--full-tree', 'HEAD']);
  // An unborn HEAD (a repository without commits) has no tree: nothing to find there.
  if (head.ok) {
    for (const line of head.stdout.toString('utf8').split('\0'))
      if (line.startsWith('160000 ')) found.push(`gitlink ${line.slice(line.indexOf('\t') + 1)}`);
  }
  const dirs = new Set<string>();
  for (const path of paths) {
    for (let at = path.indexOf('/'); at !== -1; at = path.indexOf('/', at + 1)) dirs.add(path.slice(0, at));
  }
  for (const dir of [...dirs].sort()) {
    try {
      lstatSync(join(root, dir, '.git'));
      found.push(`nested repository ${dir}`);
    } catch {
      // no .git there
    }
  }
  if (found.length > 0) throw submodules(found);
}

function attributes(found: readonly string[], more: number): AgentscmError {
  return new AgentscmError(
    'GIT_ATTRIBUTES_UNSUPPORTED',
    `git would change the bytes of files between the work tree and its commits: ${found.join('; ')}` +
      `${more > 0 ? `; and ${more} more` : ''}; nothing was recorded`,
    {
      hint:
        'remove those attributes from .gitattributes or .git/info/attributes (or set them off, e.g. `* -text`), ' +
        'set core.autocrlf false, then run again (docs/git.md "Binding a git work tree")',
    },
  );
}

/** A path as one line of `git hash-object --stdin-paths` (C-quoted when it holds a newline or starts with `"`). */
function stdinPath(path: string): string {
  if (!path.includes('\n') && !path.startsWith('"')) return path;
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** git's object id of `bytes` stored as they are (`git hash-object --no-filters`), in the id's own format. */
function rawBlobId(bytes: Buffer, idLength: number): string {
  const hash = createHash(idLength === 64 ? 'sha256' : 'sha1');
  hash.update(`blob ${bytes.length}\0`);
  hash.update(bytes);
  return hash.digest('hex');
}

/**
 * The candidates whose bytes git's conversion changes: one `git hash-object --stdin-paths` call (the conversion
 * applied; no filter driver runs, files with `filter` never get here) against the id of the raw bytes computed
 * here. When git cannot convert a file (an encoding it cannot decode), every candidate counts as changed.
 */
function changedByConversion(root: string, candidates: readonly string[]): string[] | null {
  if (candidates.length === 0) return [];
  const out = tryGit(root, ['hash-object', '--stdin-paths'], {
    input: `${candidates.map(stdinPath).join('\n')}\n`,
  });
  const ids = out.stdout.toString('utf8').split('\n');
  if (!out.ok || ids.length < candidates.length) return null;
  const changed: string[] = [];
  for (let i = 0; i < candidates.length; i += 1) {
    const id = ids[i] as string;
    const path = candidates[i] as string;
    if (rawBlobId(readFileSync(join(root, path)), id.length) !== id) changed.push(path);
  }
  return changed;
}

/**
 * A filter driver (LFS and the like) is a program agentscm never runs; a working-tree encoding other than UTF-8
 * either changes the bytes or makes git fail on them (and `git hash-object` then reports the raw id): both are
 * refused whatever the bytes.
 */
function alwaysRefused(attribute: string, info: string): boolean {
  return attribute === 'filter' || (attribute === 'working-tree-encoding' && !/^utf-?8$/i.test(info));
}

function checkAttributes(root: string, scan: ScanResult): void {
  const { paths, modes } = scan.table;
  const autocrlf = runGitSync(root, ['config', '--get', 'core.autocrlf']);
  const value = autocrlf.stdout.toString('utf8').trim().toLowerCase();
  const converting = autocrlf.ok && value !== 'false' && value !== '';
  const filtered: string[] = [];
  let filteredCount = 0;
  const candidates: string[] = [];
  const why = new Map<string, string>();
  for (let start = 0; start < paths.length; start += CHECK_ATTR_BATCH) {
    const batch = paths.slice(start, start + CHECK_ATTR_BATCH);
    const out = runGitSync(root, ['check-attr', '-z', ...BYTE_CHANGING_ATTRIBUTES, '--', ...batch]);
    if (!out.ok) throw failed('check-attr', out.stderr);
    const fields = out.stdout.toString('utf8').split('\0');
    const set = new Map<string, string[]>();
    const filter = new Set<string>();
    for (let i = 0; i + 2 < fields.length; i += 3) {
      const info = fields[i + 2] as string;
      if (info === 'unspecified' || info === 'unset') continue;
      const path = fields[i] as string;
      const shown = `${fields[i + 1] ?? '?'}${info === 'set' ? '' : `=${info}`}`;
      if (alwaysRefused(fields[i + 1] ?? '', info)) {
        filter.add(path);
        filteredCount += 1;
        if (filtered.length < SHOWN) filtered.push(`${JSON.stringify(path)} has ${shown}`);
      } else set.set(path, [...(set.get(path) ?? []), shown]);
    }
    for (let i = 0; i < batch.length; i += 1) {
      const path = batch[i] as string;
      // git never converts a symlink's target, and a filtered file is refused whatever its bytes.
      if (filter.has(path) || SCAN_MODES[modes[start + i] as number] === 'symlink') continue;
      const attrs = set.get(path);
      if (attrs === undefined && !converting) continue;
      candidates.push(path);
      why.set(path, [...(converting ? [`core.autocrlf=${value}`] : []), ...(attrs ?? [])].join(' '));
    }
  }
  if (filteredCount > 0) throw attributes(filtered, filteredCount - filtered.length);
  const changed = changedByConversion(root, candidates) ?? candidates;
  if (changed.length > 0)
    throw attributes(
      changed.slice(0, SHOWN).map((path) => `${JSON.stringify(path)} (${why.get(path) ?? '?'})`),
      changed.length - Math.min(changed.length, SHOWN),
    );
}

/**
 * Check that `root` can be bound as a git work tree (module comment); `scan` is its complete scan. Returns the
 * work tree's real path, or null when `root` is no git work tree and `required` is false (GIT_NOT_A_WORK_TREE when
 * it is true).
 */
export function bindGitWorkTree(root: string, scan: ScanResult, required: boolean): string | null {
  if (!isGitWorkTree(root)) {
    if (!required) return null;
    throw new AgentscmError('GIT_NOT_A_WORK_TREE', `${root} is not the top level of a git work tree`, {
      hint: 'run `git init` there first, or pass the directory that holds .git (or leave out --git)',
    });
  }
  checkGitDir(root);
  const top = runGitSync(root, ['rev-parse', '--show-toplevel']);
  if (!top.ok) throw failed('rev-parse', top.stderr);
  const real = realpathSync(root);
  if (realpathSync(top.stdout.toString('utf8').replace(/\n$/, '')) !== real)
    throw new AgentscmError('GIT_NOT_A_WORK_TREE', `${root} is not the top level of its git work tree`, {
      hint: 'bind the directory that holds .git',
    });
  const paths = scan.table.paths;
  checkSubmodules(real, paths);
  checkAttributes(real, scan);
  return real;
}
