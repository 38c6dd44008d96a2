/**
 * Landings mirrored to a git branch (docs/git.md "Landing to git", "Repair after a crash"): `target link` records
 * where a target's landings go; after a landing commits natively, `mirrorTarget` writes one commit per landing not
 * yet written, oldest first, each parented on the previous one, and moves the branch with `git update-ref` against
 * the expected old value, recording the mirror under the authority's writer lock. A commit is a function of what the
 * authority recorded (revision, parent, message, identity, landing time), so a mirror interrupted by a crash is
 * written again with the same ID by the next `land` or by `doctor --fix`. The one mirror that CLI, HTTP and MCP call.
 */
import { realpathSync } from 'node:fs';

import { checkGitDir } from '../agent-state/safe-git.js';
import { AgentscmError } from '../contracts/errors.js';
import {
  findGitLink,
  pendingMirrors,
  recordGitMirror,
  saveGitLink,
  type GitLink,
  type PendingMirror,
} from '../native/git-targets.js';
import { resolveRepository } from '../native/repositories.js';
import { writeTransaction, type Authority } from '../native/store.js';
import { getTarget } from '../native/targets.js';
import { git, refValue, tryGit } from './run.js';
import { commitTree, parseIdentity, writeRevisionTree } from './write-revision.js';

const ZERO = '0'.repeat(40);

export interface LinkInput {
  readonly repository?: string | undefined;
  readonly target: string;
  readonly gitRepo: string;
  readonly branch: string;
  readonly remote?: string | undefined;
  readonly author?: string | undefined;
  readonly sign: boolean;
  readonly push: boolean;
  readonly nowMs: number;
}

function usage(message: string, hint: string): AgentscmError {
  return new AgentscmError('USAGE', message, { hint });
}

/** The real path of a git work tree that agentscm may run git in (GIT_DIR_UNTRUSTED, USAGE otherwise). */
export function gitWorkTree(path: string): string {
  let root: string;
  try {
    root = realpathSync(path);
  } catch {
    throw usage(`${path} does not exist`, 'name the directory of a git work tree (`git init PATH` makes one)');
  }
  checkGitDir(root);
  return root;
}

/** `Name <email>` of git's own author identity in the repository (`git var GIT_AUTHOR_IDENT`). */
export function gitIdentity(gitRepo: string): string {
  const out = tryGit(gitRepo, ['var', 'GIT_AUTHOR_IDENT']);
  const ident = out.stdout
    .toString('utf8')
    .trim()
    .replace(/ \d+ [+-]\d{4}$/, '');
  if (!out.ok || parseIdentity(ident) === null)
    throw usage(
      `git has no author identity in ${gitRepo}`,
      'give `--author "Name <email>"`, or set `git config user.name` and `user.email`',
    );
  return ident;
}

/** `target link`: record where a target's landings are mirrored (a relink replaces the link). */
export function linkTarget(auth: Authority, input: LinkInput): GitLink {
  const repository = resolveRepository(auth, input.repository).id;
  getTarget(auth, repository, input.target);
  const gitRepo = gitWorkTree(input.gitRepo);
  if (!tryGit(gitRepo, ['check-ref-format', `refs/heads/${input.branch}`]).ok)
    throw usage(`${JSON.stringify(input.branch)} is not a valid branch name`, 'name a branch as `git branch` would');
  if (input.author !== undefined && parseIdentity(input.author) === null)
    throw usage(`--author ${JSON.stringify(input.author)} is not "Name <email>"`, 'give --author "Name <email>"');
  if (input.push && input.remote === undefined)
    throw usage('--push needs --remote', 'name the remote to push to, e.g. `--remote origin`');
  if (input.remote !== undefined && !tryGit(gitRepo, ['remote', 'get-url', input.remote]).ok)
    throw usage(`git has no remote ${JSON.stringify(input.remote)} in ${gitRepo}`, 'add it with `git remote add`');
  return saveGitLink(auth, {
    repository,
    target: input.target,
    git_repo: gitRepo,
    branch: input.branch,
    remote: input.remote ?? null,
    author: input.author ?? gitIdentity(gitRepo),
    sign: input.sign,
    push: input.push,
    base_commit: refValue(gitRepo, `refs/heads/${input.branch}`),
    linked_at_ms: input.nowMs,
  });
}

/** The message of a landing's commit: the Change, then the trailers that tie it to the authority's records. */
export function landingMessage(target: string, pending: PendingMirror): string {
  return (
    `Land Change ${pending.change_id} version ${pending.change_version.toString()} on ${target}\n\n` +
    `Agentscm-Change: ${pending.change_id}\n` +
    `Agentscm-Revision: ${pending.revision}\n` +
    `Agentscm-Receipt: ${pending.receipt_kind} ${pending.receipt_digest}\n` +
    `Agentscm-Landing: ${String(pending.landing_id)}\n`
  );
}

export interface MirroredCommit {
  readonly landing_id: number;
  readonly commit: string;
  readonly tree: string;
}

export interface MirrorReport {
  readonly git_repo: string;
  readonly branch: string;
  /** Commits this call recorded, oldest first. */
  readonly written: MirroredCommit[];
  /** The branch's commit after the mirror. */
  readonly head: string | null;
  readonly pushed: boolean;
}

function branchMoved(link: GitLink, current: string | null, expected: string | null): AgentscmError {
  return new AgentscmError(
    'GIT_BRANCH_MOVED',
    `git branch ${link.branch} in ${link.git_repo} is at ${current ?? '(no commit)'}, not at ${
      expected ?? '(no ' + 'commit)'
    } where agentscm last wrote it; nothing was written to git and the landing's mirror is pending`,
    {
      hint:
        `put the branch back (\`git update-ref refs/heads/${link.branch} ${expected ?? ZERO}\`) and run ` +
        `\`agentscm doctor --fix\`, or relink with \`agentscm target link ${link.target} --git-repo ` +
        `${link.git_repo} --branch ${link.branch}\` to mirror later landings on top of the branch as it is`,
    },
  );
}

/** A commit that the branch already holds for this landing: ours, or (signed) one with the same tree and parent. */
function alreadyThere(link: GitLink, current: string, commit: string, tree: string, parent: string | null): boolean {
  if (current === commit) return true;
  if (!link.sign) return false;
  const line = tryGit(link.git_repo, ['show', '-s', '--format=%T %P', current]).stdout.toString('utf8').trim();
  return line === `${tree} ${parent ?? ''}`.trim();
}

/** Whether `head` is a commit of this landing on its parent (its update-ref ran, its record did not). */
function mirrorOfLanding(link: GitLink, head: string | null, pending: PendingMirror): boolean {
  if (head === null) return false;
  const body = tryGit(link.git_repo, ['cat-file', 'commit', head]).stdout.toString('utf8');
  const parents = [...(body.split('\n\n')[0]?.matchAll(/^parent ([0-9a-f]+)$/gm) ?? [])].map((m) => m[1]);
  return (
    parents.join(' ') === (pending.parent ?? '') && body.includes(`\nAgentscm-Landing: ${String(pending.landing_id)}\n`)
  );
}

/** Write one pending landing; false when another process changed the pending state first (try again). */
function mirrorOne(auth: Authority, link: GitLink, pending: PendingMirror, nowMs: number): MirroredCommit | null {
  // Refuse before writing any object when the branch is neither where agentscm left it nor one commit on top of it
  // (a mirror whose update-ref ran before a crash).
  const before = refValue(link.git_repo, `refs/heads/${link.branch}`);
  if (before !== pending.parent && !mirrorOfLanding(link, before, pending))
    throw branchMoved(link, before, pending.parent);
  const { tree } = writeRevisionTree(auth, link.repository, pending.revision, link.git_repo);
  const commit = commitTree(link.git_repo, {
    tree,
    parent: pending.parent,
    message: landingMessage(link.target, pending),
    identity: link.author,
    timeMs: pending.landed_at_ms,
    sign: link.sign,
  });
  return writeTransaction(auth, () => {
    const again = pendingMirrors(auth, link)[0];
    if (again?.landing_id !== pending.landing_id || again.parent !== pending.parent) return null;
    const ref = `refs/heads/${link.branch}`;
    let head = refValue(link.git_repo, ref);
    if (head === null || !alreadyThere(link, head, commit, tree, pending.parent)) {
      if (head !== pending.parent) throw branchMoved(link, head, pending.parent);
      const moved = tryGit(link.git_repo, [
        'update-ref',
        '-m',
        `agentscm land ${pending.change_id}`,
        ref,
        commit,
        pending.parent ?? ZERO,
      ]);
      if (!moved.ok) throw branchMoved(link, refValue(link.git_repo, ref), pending.parent);
      head = commit;
    }
    recordGitMirror(auth, {
      landing_id: pending.landing_id,
      git_repo: link.git_repo,
      branch: link.branch,
      commit_sha: head,
      parent_sha: pending.parent,
      tree_sha: tree,
      author: link.author,
      written_at_ms: nowMs,
    });
    return { landing_id: pending.landing_id, commit: head, tree };
  });
}

/** Bound on the pending landings one call writes (each is one commit). */
const MAX_MIRRORS_PER_CALL = 10_000;

/**
 * Write every pending landing of a linked target to its git branch, then push when the link says so; null when the
 * target is not linked. GIT_BRANCH_MOVED when the branch is not where agentscm left it (nothing written).
 */
export function mirrorTarget(auth: Authority, repository: string, target: string, nowMs: number): MirrorReport | null {
  const link = findGitLink(auth, repository, target);
  if (link === null) return null;
  const written: MirroredCommit[] = [];
  for (let i = 0; i < MAX_MIRRORS_PER_CALL; i++) {
    const next = pendingMirrors(auth, link)[0];
    if (next === undefined) break;
    const one = mirrorOne(auth, link, next, nowMs);
    if (one !== null) written.push(one);
  }
  let pushed = false;
  if (link.push && link.remote !== null) {
    git(link.git_repo, ['push', '--quiet', link.remote, `refs/heads/${link.branch}:refs/heads/${link.branch}`]);
    pushed = true;
  }
  return {
    git_repo: link.git_repo,
    branch: link.branch,
    written,
    head: refValue(link.git_repo, `refs/heads/${link.branch}`),
    pushed,
  };
}
