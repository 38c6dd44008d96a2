/**
 * The git-directory guard of an observed run (docs/agent-state.md "The git directory"). An
 * observed command that writes `.git/config`, a hook or `.git/info/*` plants what git — and
 * agentscm's own git calls — would run or read later. The guard records, before and after the
 * command, every entry of `.git` except what git itself writes for ordinary work, and any
 * difference is a scope violation named `.git/<path>` whatever the declared scopes.
 *
 * Written by git and not watched (relative to a git directory): `index`, `objects/` (except
 * `objects/info/alternates` and `objects/info/http-alternates`, which are watched), `refs/`,
 * `logs/`, `packed-refs`, `HEAD` and the other `*_HEAD` / `*_MSG` / `*_EDITMSG` state files,
 * `BISECT_*`, `MERGE_MODE`, `MERGE_RR`, `shallow`, `rebase-merge/`, `rebase-apply/`,
 * `sequencer/`, `rr-cache/`, `gc.pid`, `gc.log`, `fsmonitor--daemon*`, `info/refs` (written by
 * `git gc` for dumb HTTP), and a `NAME.lock` of any of them. The same rule applies inside each submodule git directory
 * under `modules/` and each
 * linked-worktree directory under `worktrees/`. Everything else — `config`, `config.worktree`,
 * `hooks/`, `info/`, `description`, `commondir`, `gitdir`, `branches/`, `remotes/`, tool
 * directories such as `lfs/`, any unknown name — is watched: type, mode, size, inode, times, a
 * symlink's target and, for files up to 1 MiB, a SHA-256 of the content. Symlinks are never
 * followed. At most 20,000 watched entries; beyond, or on an I/O error or a race, the guard is
 * incomplete and the run is not verified.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';

import type { FsSnapshot } from './fs-snapshot.js';

export const GIT_DIR_GUARD_LIMIT = 20_000;
const HASH_MAX_BYTES = 1024 * 1024;

/** Files git writes at the top of a git directory during ordinary work. */
const GIT_OWNED_FILES = new Set([
  'index',
  'HEAD',
  'ORIG_HEAD',
  'FETCH_HEAD',
  'MERGE_HEAD',
  'MERGE_MODE',
  'MERGE_MSG',
  'MERGE_RR',
  'AUTO_MERGE',
  'CHERRY_PICK_HEAD',
  'REVERT_HEAD',
  'REBASE_HEAD',
  'COMMIT_EDITMSG',
  'SQUASH_MSG',
  'TAG_EDITMSG',
  'NOTES_EDITMSG',
  'packed-refs',
  'shallow',
  'gc.pid',
  'gc.log',
]);
/** Directories git owns entirely at the top of a git directory. */
const GIT_OWNED_DIRS = new Set(['refs', 'logs', 'rebase-merge', 'rebase-apply', 'sequencer', 'rr-cache']);
/** Written by git in info/: the ref list `git gc` (update-server-info) writes for dumb HTTP. */
const GIT_OWNED_INFO = new Set(['refs', 'refs.lock']);
/** Files of objects/info that redirect where objects come from: watched. */
const WATCHED_OBJECT_INFO = ['alternates', 'http-alternates'];

function gitOwnedTop(name: string): boolean {
  const base = name.endsWith('.lock') ? name.slice(0, -'.lock'.length) : name;
  return (
    GIT_OWNED_FILES.has(base) ||
    GIT_OWNED_DIRS.has(base) ||
    base.startsWith('BISECT_') ||
    base.startsWith('fsmonitor--daemon')
  );
}

class Incomplete extends Error {
  constructor(
    readonly problem: 'bound' | 'race' | 'io_error',
    readonly detail: string,
  ) {
    super(detail);
  }
}

function failure(error: unknown, what: string): Incomplete {
  const code = (error as NodeJS.ErrnoException).code;
  return new Incomplete(code === 'ENOENT' ? 'race' : 'io_error', `${what}: ${(error as Error).message}`);
}

/** Record the git directory `gitDir` (normally `<root>/.git`); paths are reported as `.git/<path>`. */
export function takeGitDirGuard(gitDir: string, limit = GIT_DIR_GUARD_LIMIT): FsSnapshot {
  const entries = new Map<string, string>();
  let bytes = 0;
  const record = (rel: string, st: BigIntStats): void => {
    if (entries.size >= limit) throw new Incomplete('bound', `more than ${limit} entries in the git directory`);
    const path = rel === '' ? '.git' : `.git/${rel}`;
    const abs = rel === '' ? gitDir : join(gitDir, rel);
    const meta = `${st.mode}:${st.uid}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.ino}`;
    if (st.isSymbolicLink()) {
      let target: string;
      try {
        target = readlinkSync(abs);
      } catch (error) {
        throw failure(error, `cannot read the link ${path}`);
      }
      entries.set(path, `l:${meta}:${target}`);
    } else if (st.isFile() && st.size <= BigInt(HASH_MAX_BYTES)) {
      let content: Buffer;
      try {
        content = readFileSync(abs);
      } catch (error) {
        throw failure(error, `cannot read ${path}`);
      }
      bytes += content.length;
      entries.set(path, `f:${meta}:${createHash('sha256').update(content).digest('hex')}`);
    } else if (st.isDirectory()) {
      // A directory by type, mode, owner and inode: git creating a file in it changes its times,
      // and the entries appearing or leaving show as paths.
      entries.set(path, `d:${st.mode}:${st.uid}:${st.ino}`);
    } else {
      entries.set(path, `${st.isFile() ? 'f' : 'o'}:${meta}`);
    }
  };
  const stat = (rel: string): BigIntStats | null => {
    try {
      return lstatSync(rel === '' ? gitDir : join(gitDir, rel), { bigint: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw failure(error, `cannot examine .git/${rel}`);
    }
  };
  const list = (rel: string): string[] => {
    try {
      return readdirSync(rel === '' ? gitDir : join(gitDir, rel)).sort();
    } catch (error) {
      throw failure(error, `cannot list .git/${rel}`);
    }
  };
  const child = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);
  /** Every entry below `rel`, watched. */
  const watchTree = (rel: string, owned?: ReadonlySet<string>): void => {
    for (const name of list(rel)) {
      if (owned?.has(name) === true) continue;
      const path = child(rel, name);
      const st = stat(path);
      if (st === null) throw new Incomplete('race', `.git/${path} vanished while the guard was taken`);
      record(path, st);
      if (st.isDirectory()) watchTree(path);
    }
  };
  /** Directories under modules/ or worktrees/: a git directory (it has HEAD) or a name component. */
  const nested = (rel: string): void => {
    for (const name of list(rel)) {
      const path = child(rel, name);
      const st = stat(path);
      if (st === null) throw new Incomplete('race', `.git/${path} vanished while the guard was taken`);
      if (st.isDirectory() && stat(child(path, 'HEAD')) !== null) {
        record(path, st);
        gitDirectory(path);
      } else {
        record(path, st);
        if (st.isDirectory()) nested(path);
      }
    }
  };
  /** A git directory: what git owns is skipped, the rest is watched. */
  const gitDirectory = (rel: string): void => {
    for (const name of list(rel)) {
      const path = child(rel, name);
      if (gitOwnedTop(name)) continue;
      const st = stat(path);
      if (st === null) throw new Incomplete('race', `.git/${path} vanished while the guard was taken`);
      if (name === 'objects' && st.isDirectory()) {
        record(path, st);
        for (const watched of WATCHED_OBJECT_INFO) {
          const info = `${path}/info/${watched}`;
          const ist = stat(info);
          if (ist !== null) record(info, ist);
        }
        continue;
      }
      record(path, st);
      if (!st.isDirectory()) continue;
      if (name === 'modules' || name === 'worktrees') nested(path);
      else watchTree(path, name === 'info' ? GIT_OWNED_INFO : undefined);
    }
  };
  try {
    const top = stat('');
    if (top === null) throw new Incomplete('race', 'the git directory vanished');
    record('', top);
    if (top.isDirectory()) gitDirectory('');
  } catch (error) {
    if (error instanceof Incomplete)
      return { complete: false, problem: error.problem, detail: error.detail, entries, files: entries.size, bytes };
    throw error;
  }
  return { complete: true, problem: null, detail: null, entries, files: entries.size, bytes };
}
