/**
 * The one way agentscm runs git (docs/agent-state.md "How agentscm runs git"). A repository's
 * configuration can name programs that git runs on its own — `core.fsmonitor`, hooks, a pager,
 * `diff.external`, textconv and filter drivers — and an observed command can write that
 * configuration. Every git call here runs with those programs disabled:
 *
 * - `--no-pager --no-optional-locks --no-replace-objects`, `-c core.fsmonitor=false
 *   -c core.hooksPath=/dev/null -c core.pager=cat -c diff.external= -c log.showSignature=false`;
 * - `diff`, `log` and `show` also get `--no-ext-diff --no-textconv` (and `--no-show-signature`);
 * - commands that may read work-tree files through a clean filter (`status`) first list every
 *   `filter.<driver>.*` the configuration defines and empty each driver's `clean`, `smudge` and
 *   `process` (and `required=false`), so that no filter program runs;
 * - the environment has no inherited `GIT_*` variable, plus `GIT_CONFIG_NOSYSTEM=1`,
 *   `GIT_ATTR_NOSYSTEM=1`, `GIT_PAGER=cat`, `GIT_OPTIONAL_LOCKS=0`, `GIT_TERMINAL_PROMPT=0`,
 *   `GIT_NO_REPLACE_OBJECTS=1` and `LC_ALL=C`.
 *
 * `-c` settings reach git's own child processes (submodule status) through the environment git
 * builds for them. Before a repository is trusted, its `.git` must be a plain directory (not a
 * symlink, not a `gitdir:` file) owned by the caller, with a `config` that is a regular file owned
 * by the caller (`GIT_DIR_UNTRUSTED` otherwise).
 */
import { execFile, execFileSync } from 'node:child_process';
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';

const DEFAULT_MAX_OUTPUT = 256 * 1024 * 1024;

/** Options given to every git call, before the subcommand. */
export const SAFE_GIT_OPTIONS: readonly string[] = [
  '--no-pager',
  '--no-optional-locks',
  '--no-replace-objects',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.pager=cat',
  '-c',
  'diff.external=',
  '-c',
  'log.showSignature=false',
];

/** Subcommands that can show content differences: no external diff, no textconv, no signature check. */
const DIFF_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  diff: ['--no-ext-diff', '--no-textconv'],
  log: ['--no-ext-diff', '--no-textconv', '--no-show-signature'],
  show: ['--no-ext-diff', '--no-textconv', '--no-show-signature'],
};

/** Subcommands that may read work-tree files through a clean filter. */
const FILTERING = new Set(['status', 'diff', 'add', 'stash', 'ls-files']);

/** The environment of every git call: nothing inherited from GIT_*, system configuration off, no pager. */
export function safeGitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.toUpperCase().startsWith('GIT_')) env[key] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_TERMINAL_PROMPT: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    LC_ALL: 'C',
  };
}

/** The full argument list of one call: the safe options, the filter overrides, the subcommand with its diff options. */
export function safeGitArgs(args: readonly string[], filterDrivers: readonly string[] = []): string[] {
  const [sub, ...rest] = args;
  if (sub === undefined) throw new Error('git called without a subcommand');
  const overrides = filterDrivers.flatMap((driver) =>
    ['clean=', 'smudge=', 'process=', 'required=false'].flatMap((setting) => ['-c', `filter.${driver}.${setting}`]),
  );
  return [...SAFE_GIT_OPTIONS, ...overrides, sub, ...(DIFF_OPTIONS[sub] ?? []), ...rest];
}

export interface GitResult {
  readonly ok: boolean;
  readonly stdout: Buffer;
  readonly stderr: string;
}

function execGit(cwd: string, argv: readonly string[], maxBuffer: number): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      'git',
      argv,
      { cwd, env: safeGitEnv(), encoding: 'buffer', maxBuffer, windowsHide: true },
      (error, stdout, stderr) => {
        resolve({ ok: error === null, stdout, stderr: stderr.toString('utf8') });
      },
    );
  });
}

/**
 * A filter driver name that can be overridden on the command line (`-c filter.NAME.clean=`): no `=`, no control
 * character.
 */
function overridableDriver(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 256 &&
    ![...name].some((ch) => ch === '=' || ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)
  );
}

/** The filter drivers the configuration of the repository at `cwd` defines (all scopes, includes resolved). */
async function filterDrivers(cwd: string): Promise<{ drivers: string[]; error: string | null }> {
  const out = await execGit(
    cwd,
    [...SAFE_GIT_OPTIONS, 'config', '-z', '--name-only', '--get-regexp', '^filter\\.'],
    16 * 1024 * 1024,
  );
  // Exit 1: no such key. Anything else that fails: the configuration cannot be read.
  if (!out.ok)
    return out.stdout.length === 0 && out.stderr === ''
      ? { drivers: [], error: null }
      : { drivers: [], error: `git config could not be read: ${out.stderr.trim().slice(0, 200)}` };
  const drivers = new Set<string>();
  for (const name of out.stdout.toString('utf8').split('\0')) {
    if (name === '') continue;
    const last = name.lastIndexOf('.');
    const driver = name.slice('filter.'.length, last);
    if (last <= 'filter.'.length || !overridableDriver(driver))
      return { drivers: [], error: `the filter driver of ${JSON.stringify(name.slice(0, 200))} cannot be disabled` };
    drivers.add(driver);
  }
  return { drivers: [...drivers].sort(), error: null };
}

/**
 * Run git in `cwd` with repository-configured programs disabled (see the module comment). A
 * configuration whose filter drivers cannot be listed or disabled makes the call fail without
 * running the subcommand.
 */
export async function runGit(
  cwd: string,
  args: readonly string[],
  options: { readonly maxBuffer?: number } = {},
): Promise<GitResult> {
  let drivers: string[] = [];
  if (FILTERING.has(args[0] ?? '')) {
    const listed = await filterDrivers(cwd);
    if (listed.error !== null) return { ok: false, stdout: Buffer.alloc(0), stderr: listed.error };
    drivers = listed.drivers;
  }
  return execGit(cwd, safeGitArgs(args, drivers), options.maxBuffer ?? DEFAULT_MAX_OUTPUT);
}

/** Synchronous form for commands that read no work-tree content (`rev-parse`). */
export function runGitSync(cwd: string, args: readonly string[]): GitResult {
  if (FILTERING.has(args[0] ?? ''))
    throw new Error(`git ${args[0] ?? ''} needs the asynchronous runner (filter drivers)`);
  try {
    const stdout = execFileSync('git', safeGitArgs(args), {
      cwd,
      env: safeGitEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: DEFAULT_MAX_OUTPUT,
      windowsHide: true,
    });
    return { ok: true, stdout, stderr: '' };
  } catch (error) {
    const failure = error as { stdout?: Buffer; stderr?: Buffer };
    return { ok: false, stdout: failure.stdout ?? Buffer.alloc(0), stderr: failure.stderr?.toString('utf8') ?? '' };
  }
}

const UNTRUSTED_HINT =
  'agentscm runs git only where .git is a plain directory owned by you: run it from the main work tree of a ' +
  'repository you own (not a linked worktree or a submodule checkout); check `ls -ld .git .git/config`';

function untrusted(message: string, root: string): AgentscmError {
  return new AgentscmError('GIT_DIR_UNTRUSTED', message, { hint: UNTRUSTED_HINT, details: { root } });
}

function ownedByCaller(st: Stats): boolean {
  return typeof process.getuid !== 'function' || st.uid === process.getuid();
}

/** Refuse a work tree whose `.git` is not a plain directory owned by the caller (`GIT_DIR_UNTRUSTED`). */
export function checkGitDir(root: string): string {
  const dotGit = join(root, '.git');
  let st: Stats;
  try {
    st = lstatSync(dotGit);
  } catch (error) {
    throw untrusted(
      `${dotGit} cannot be examined (${(error as NodeJS.ErrnoException).code ?? 'error'}); git's repository there ` +
        'is not trusted',
      root,
    );
  }
  if (st.isSymbolicLink()) throw untrusted(`${dotGit} is a symlink; agentscm does not run git through it`, root);
  if (st.isFile())
    throw untrusted(
      `${dotGit} is a file (a linked worktree or a submodule checkout points elsewhere); agentscm does not run git ` +
        'through it',
      root,
    );
  if (!st.isDirectory()) throw untrusted(`${dotGit} is not a directory`, root);
  if (!ownedByCaller(st))
    throw untrusted(
      `${dotGit} is owned by uid ${st.uid}, not by this user (uid ${String(process.getuid?.())}); its ` +
        'configuration could run programs as you',
      root,
    );
  const config = join(dotGit, 'config');
  let cst: Stats | null = null;
  try {
    cst = lstatSync(config);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw untrusted(`${config} cannot be examined`, root);
  }
  if (cst !== null && (!cst.isFile() || !ownedByCaller(cst)))
    throw untrusted(`${config} is not a regular file owned by this user`, root);
  return dotGit;
}

/**
 * The nearest directory at or above `cwd` (real path) that has a `.git` entry of any kind, or
 * null. Found without running git, so that an untrusted `.git` is refused before git reads it.
 */
function findWorkTree(cwd: string): string | null {
  let dir = realpathSync(cwd);
  for (;;) {
    try {
      lstatSync(join(dir, '.git'));
      return dir;
    } catch {
      // no .git here: look in the parent
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function topLevelOf(out: GitResult, candidate: string): string | null {
  if (!out.ok) return null;
  const text = out.stdout.toString('utf8').replace(/\n$/, '');
  if (text === '') return null;
  const root = realpathSync(text);
  if (root !== candidate)
    throw untrusted(
      `git names ${root} as the work tree of ${join(candidate, '.git')} (core.worktree); agentscm observes only ` +
        'the directory that holds .git',
      candidate,
    );
  return root;
}

/**
 * The top level (real path) of the git work tree containing `cwd`: the nearest directory with
 * a `.git`, checked with checkGitDir before git runs there, and confirmed by `git rev-parse
 * --show-toplevel`. Null without git or outside a repository.
 */
export function discoverGitRootSync(cwd: string): string | null {
  const candidate = findWorkTree(cwd);
  if (candidate === null) return null;
  checkGitDir(candidate);
  return topLevelOf(runGitSync(candidate, ['rev-parse', '--show-toplevel']), candidate);
}

/** Asynchronous discoverGitRootSync, for the observer. */
export async function discoverGitRoot(cwd: string): Promise<string | null> {
  const candidate = findWorkTree(cwd);
  if (candidate === null) return null;
  checkGitDir(candidate);
  return topLevelOf(await execGit(candidate, safeGitArgs(['rev-parse', '--show-toplevel']), 1024 * 1024), candidate);
}
