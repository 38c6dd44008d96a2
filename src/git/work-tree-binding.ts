/**
 * Binding a native workspace to a git work tree (docs/git.md "Binding a git work tree"). The workspace root must
 * be the top level of the work tree (its `.git` a directory owned by the caller, src/agent-state/safe-git.ts). The
 * scan already skips `.git` and honours `.gitignore` and `.git/info/exclude`; this module refuses what would make
 * the native revision differ from what git records, before anything is recorded:
 *
 * - submodules and nested repositories (GIT_SUBMODULE_UNSUPPORTED): a `.gitmodules` among the scanned files, a
 *   gitlink in HEAD's tree, a directory holding scanned files that has a `.git` of its own;
 * - byte-changing conversion (GIT_ATTRIBUTES_UNSUPPORTED): `core.autocrlf` true or input, or any scanned file for
 *   which `git check-attr` reports `text`, `eol`, `crlf`, `filter`, `working-tree-encoding` or `ident` set or
 *   given a value (only `unspecified` and `unset` pass). git itself answers for the attributes, so every source
 *   git reads (`.gitattributes` at every level, `.git/info/attributes`, the user's attributes file; the system
 *   one is off for every call agentscm makes) and every macro counts exactly as git counts it.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

import { checkGitDir, runGitSync } from '../agent-state/safe-git.js';
import { AgentscmError } from '../contracts/errors.js';
import type { ScanResult } from '../workspace/scan.js';

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

function checkAttributes(root: string, paths: readonly string[]): void {
  const autocrlf = runGitSync(root, ['config', '--get', 'core.autocrlf']);
  const value = autocrlf.stdout.toString('utf8').trim().toLowerCase();
  if (autocrlf.ok && value !== 'false' && value !== '') throw attributes([`core.autocrlf is ${value}`], 0);
  const found: string[] = [];
  let count = 0;
  for (let start = 0; start < paths.length; start += CHECK_ATTR_BATCH) {
    const batch = paths.slice(start, start + CHECK_ATTR_BATCH);
    const out = runGitSync(root, ['check-attr', '-z', ...BYTE_CHANGING_ATTRIBUTES, '--', ...batch]);
    if (!out.ok) throw failed('check-attr', out.stderr);
    const fields = out.stdout.toString('utf8').split('\0');
    for (let i = 0; i + 2 < fields.length; i += 3) {
      const info = fields[i + 2] as string;
      if (info === 'unspecified' || info === 'unset') continue;
      count += 1;
      if (found.length < SHOWN)
        found.push(`${JSON.stringify(fields[i])} has ${fields[i + 1] ?? '?'}${info === 'set' ? '' : `=${info}`}`);
    }
  }
  if (count > 0) throw attributes(found, count - found.length);
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
  checkAttributes(real, paths);
  return real;
}
