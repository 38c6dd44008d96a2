/**
 * The git observer of an observed run (docs/agent-state.md "What is observed": stable before/after
 * revisions, Git-visible changed paths). One snapshot is one
 * `git status --porcelain=v2 -z --branch --untracked-files=all` (HEAD and every git-visible entry)
 * plus one `git rev-parse HEAD` that must name the same commit: otherwise HEAD moved while the
 * snapshot was taken and it is not stable. Entries already dirty keep their file metadata, so a
 * second edit of a modified file still counts as a change.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';

import { discoverGitRoot, runGit, type GitResult } from './safe-git.js';

/** Every git call goes through safe-git (repository-configured programs disabled, no optional locks). */
function git(cwd: string, args: readonly string[]): Promise<GitResult> {
  return runGit(cwd, args);
}

/**
 * The top level (real path) of the git work tree containing `cwd`, or null without git or
 * outside a repository; `GIT_DIR_UNTRUSTED` when its `.git` is not a plain directory owned by the
 * caller.
 */
export async function gitRoot(cwd: string): Promise<string | null> {
  return discoverGitRoot(cwd);
}

export interface GitSnapshot {
  /** HEAD's commit, or null before the first commit. */
  readonly head: string | null;
  /** False when HEAD moved while the snapshot was taken, or git failed. */
  readonly stable: boolean;
  /** Git-visible entries: path → its status record (and file metadata for dirty paths). */
  readonly entries: ReadonlyMap<string, string>;
  readonly error: string | null;
}

function metadataOf(root: string, path: string): string {
  try {
    const st = lstatSync(join(root, path), { bigint: true });
    return `${st.mode}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.ino}`;
  } catch {
    return 'absent';
  }
}

/** Parse porcelain v2 -z output: HEAD and path → record. */
function parseStatus(root: string, out: Buffer): { head: string | null; entries: Map<string, string> } {
  const fields = out.toString('utf8').split('\0');
  let head: string | null = null;
  const entries = new Map<string, string>();
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? '';
    if (field === '') continue;
    if (field.startsWith('# branch.oid ')) {
      const oid = field.slice('# branch.oid '.length);
      head = oid === '(initial)' ? null : oid;
      continue;
    }
    if (field.startsWith('#')) continue;
    const kind = field[0];
    let path: string;
    let record: string;
    if (kind === '1') {
      // 1 XY sub mH mI mW hH hI path
      const parts = field.split(' ');
      path = parts.slice(8).join(' ');
      record = parts.slice(0, 8).join(' ');
    } else if (kind === '2') {
      // 2 XY sub mH mI mW hH hI Xscore path \0 origPath
      const parts = field.split(' ');
      path = parts.slice(9).join(' ');
      const orig = fields[++i] ?? '';
      record = `${parts.slice(0, 9).join(' ')} from ${orig}`;
      entries.set(orig, `renamed-to ${path}`);
    } else if (kind === 'u') {
      // u XY sub m1 m2 m3 mW h1 h2 h3 path
      const parts = field.split(' ');
      path = parts.slice(10).join(' ');
      record = parts.slice(0, 10).join(' ');
    } else if (kind === '?' || kind === '!') {
      path = field.slice(2);
      record = kind;
    } else continue;
    entries.set(path, `${record} ${metadataOf(root, path)}`);
  }
  return { head, entries };
}

/** One git snapshot of the work tree at `root` (docs/agent-state.md "What is observed"). */
export async function takeGitSnapshot(root: string): Promise<GitSnapshot> {
  const [status, rev] = await Promise.all([
    git(root, ['status', '--porcelain=v2', '-z', '--branch', '--untracked-files=all', '--ignore-submodules=none']),
    git(root, ['rev-parse', '-q', '--verify', 'HEAD']),
  ]);
  if (!status.ok) return { head: null, stable: false, entries: new Map(), error: 'git status failed' };
  const { head, entries } = parseStatus(root, status.stdout);
  const revHead = rev.ok ? rev.stdout.toString('utf8').trim() : null;
  const stable = revHead === head;
  return {
    head,
    stable,
    entries,
    error: stable ? null : `HEAD moved while it was read (${String(revHead)} vs ${String(head)})`,
  };
}

/** Paths changed between two snapshots, plus those the commits between two HEADs touched. */
export async function gitChangedPaths(
  root: string,
  before: GitSnapshot,
  after: GitSnapshot,
): Promise<{ paths: string[]; error: string | null }> {
  const changed = new Set<string>();
  for (const [path, record] of before.entries) if (after.entries.get(path) !== record) changed.add(path);
  for (const [path, record] of after.entries) if (before.entries.get(path) !== record) changed.add(path);
  let error: string | null = null;
  if (before.head !== after.head) {
    // From no commit at all, every commit reachable from the new HEAD is new.
    const args =
      before.head === null
        ? ['log', '--name-only', '-z', '--format=', '--no-renames', after.head ?? 'HEAD']
        : ['diff', '--name-only', '-z', '--no-renames', before.head, after.head ?? 'HEAD'];
    const out = await git(root, args);
    if (out.ok) {
      for (const path of out.stdout.toString('utf8').split('\0')) if (path !== '') changed.add(path);
    } else {
      error = 'git could not list the paths changed between the two revisions';
    }
  }
  return { paths: [...changed].sort(), error };
}
