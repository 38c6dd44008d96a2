/**
 * Targets mirrored to a git branch (docs/git.md "Landing to git"; schema step 013): the link of a target, the
 * landings already written to git, the pending ones, and the cache of git object IDs of native blobs and trees.
 * The git side (objects, commits, the branch) is src/git/; this module only reads and writes the authority.
 */
import { AgentscmError } from '../contracts/errors.js';
import { checkGenericId, checkRepositoryId } from './checks.js';
import { getRevision } from './revisions.js';
import { prepared, readTransaction, writeTransaction, type Authority } from './store.js';

export interface GitLink {
  readonly repository: string;
  readonly target: string;
  /** Absolute path of the git work tree. */
  readonly git_repo: string;
  readonly branch: string;
  readonly remote: string | null;
  /** `Name <email>` of author and committer. */
  readonly author: string;
  readonly sign: boolean;
  readonly push: boolean;
  /** The branch's commit when linked (the parent of the first mirrored landing), or null when it did not exist. */
  readonly base_commit: string | null;
  /** The newest landing of the target when linked (0: none); later landings are mirrored. */
  readonly after_landing_id: number;
  readonly linked_at_ms: number;
}

interface GitLinkRow extends Omit<GitLink, 'sign' | 'push'> {
  sign: number;
  push: number;
}

export interface GitMirror {
  readonly landing_id: number;
  readonly git_repo: string;
  readonly branch: string;
  readonly commit_sha: string;
  readonly parent_sha: string | null;
  readonly tree_sha: string;
  readonly author: string;
  readonly written_at_ms: number;
}

const LINK_COLUMNS =
  'repository, target, git_repo, branch, remote, author, sign, push, base_commit, after_landing_id, linked_at_ms';
const MIRROR_COLUMNS = 'landing_id, git_repo, branch, commit_sha, parent_sha, tree_sha, author, written_at_ms';

function linkOf(row: GitLinkRow): GitLink {
  return { ...row, sign: row.sign === 1, push: row.push === 1 };
}

/** Whether the store has the git tables (schema step 013): a store opened read-only may be older. */
export function hasGitTables(auth: Authority): boolean {
  return (
    prepared(auth, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'git_targets'").get() !== undefined
  );
}

/** The git link of a target, or null. */
export function findGitLink(auth: Authority, repository: string, target: string): GitLink | null {
  checkRepositoryId(repository);
  checkGenericId(target, 'target name');
  const row = prepared(auth, `SELECT ${LINK_COLUMNS} FROM git_targets WHERE repository = ? AND target = ?`).get(
    repository,
    target,
  ) as GitLinkRow | undefined;
  return row === undefined ? null : linkOf(row);
}

/** Every git link of the store (doctor). */
export function listGitLinks(auth: Authority): GitLink[] {
  if (!hasGitTables(auth)) return [];
  return (
    prepared(auth, `SELECT ${LINK_COLUMNS} FROM git_targets ORDER BY repository, target`).all() as GitLinkRow[]
  ).map(linkOf);
}

/** The newest landing ID of a target (0: none). */
export function newestLandingId(auth: Authority, repository: string, target: string): number {
  const row = prepared(auth, 'SELECT max(landing_id) AS id FROM landings WHERE repository = ? AND target = ?').get(
    repository,
    target,
  ) as { id: number | null };
  return row.id ?? 0;
}

/** Link (or relink) a target: a relink replaces the row and starts mirroring after the newest landing. */
export function saveGitLink(auth: Authority, link: Omit<GitLink, 'after_landing_id'>): GitLink {
  return writeTransaction(auth, () => {
    const after = newestLandingId(auth, link.repository, link.target);
    prepared(
      auth,
      `INSERT INTO git_targets (${LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (repository, target) DO UPDATE SET git_repo = excluded.git_repo, branch = excluded.branch,
         remote = excluded.remote, author = excluded.author, sign = excluded.sign, push = excluded.push,
         base_commit = excluded.base_commit, after_landing_id = excluded.after_landing_id,
         linked_at_ms = excluded.linked_at_ms`,
    ).run(
      link.repository,
      link.target,
      link.git_repo,
      link.branch,
      link.remote,
      link.author,
      link.sign ? 1 : 0,
      link.push ? 1 : 0,
      link.base_commit,
      after,
      link.linked_at_ms,
    );
    return { ...link, after_landing_id: after };
  });
}

/** What the next mirror of a link writes: the oldest pending landing and its parent commit. */
export interface PendingMirror {
  readonly landing_id: number;
  readonly revision: string;
  readonly change_id: string;
  readonly change_version: bigint;
  readonly receipt_kind: string;
  readonly receipt_digest: string;
  readonly landed_at_ms: number;
  /** The commit the branch must be at: the previous mirror's, or the link's base. */
  readonly parent: string | null;
}

/** The landings of a link not yet written to git, oldest first, with the parent of the first one. */
export function pendingMirrors(auth: Authority, link: GitLink): PendingMirror[] {
  return readTransaction(auth, () => {
    const last = prepared(
      auth,
      `SELECT m.commit_sha FROM git_mirrors m JOIN landings l ON l.landing_id = m.landing_id
       WHERE l.repository = ? AND l.target = ? AND m.landing_id > ? ORDER BY m.landing_id DESC LIMIT 1`,
    ).get(link.repository, link.target, link.after_landing_id) as { commit_sha: string } | undefined;
    const rows = prepared(
      auth,
      `SELECT l.landing_id, l.revision, l.change_id, l.change_version, l.receipt_kind, l.receipt_digest,
         l.landed_at_ms FROM landings l LEFT JOIN git_mirrors m ON m.landing_id = l.landing_id
       WHERE l.repository = ? AND l.target = ? AND l.landing_id > ? AND m.landing_id IS NULL
       ORDER BY l.landing_id`,
    ).all(link.repository, link.target, link.after_landing_id) as (Omit<PendingMirror, 'parent' | 'change_version'> & {
      change_version: string;
    })[];
    return rows.map((row, i) => ({
      ...row,
      change_version: BigInt(row.change_version),
      parent: i === 0 ? (last?.commit_sha ?? link.base_commit) : null,
    }));
  });
}

/** Record a landing as written to git (in the caller's writer transaction); false when it already was. */
export function recordGitMirror(auth: Authority, mirror: GitMirror): boolean {
  return (
    prepared(
      auth,
      `INSERT INTO git_mirrors (${MIRROR_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (landing_id) DO NOTHING`,
    ).run(
      mirror.landing_id,
      mirror.git_repo,
      mirror.branch,
      mirror.commit_sha,
      mirror.parent_sha,
      mirror.tree_sha,
      mirror.author,
      mirror.written_at_ms,
    ).changes === 1
  );
}

/** The mirror of a landing, or null. */
export function findGitMirrorOfLanding(auth: Authority, landingId: number): GitMirror | null {
  const row = prepared(auth, `SELECT ${MIRROR_COLUMNS} FROM git_mirrors WHERE landing_id = ?`).get(landingId) as
    GitMirror | undefined;
  return row ?? null;
}

/** The git object IDs of native digests already converted (absent digests are left out). */
export function gitObjectsOf(auth: Authority, natives: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  const get = prepared(auth, 'SELECT git FROM git_objects WHERE native = ?');
  for (const native of natives) {
    const row = get.get(native) as { git: string } | undefined;
    if (row !== undefined) found.set(native, row.git);
  }
  return found;
}

/** The git object ID of one native digest, or null. */
export function gitObjectOf(auth: Authority, native: string): string | null {
  const row = prepared(auth, 'SELECT git FROM git_objects WHERE native = ?').get(native) as { git: string } | undefined;
  return row?.git ?? null;
}

/**
 * The native digests of git object IDs already converted (IDs not found are left out). The table is keyed by
 * native digest only, so this is one pass over it (a few milliseconds per 10,000 rows), not one look-up per ID.
 */
export function nativeObjectsOfGit(auth: Authority, gits: ReadonlySet<string>): Map<string, string> {
  const found = new Map<string, string>();
  if (gits.size === 0 || !hasGitTables(auth)) return found;
  const rows = prepared(auth, 'SELECT native, git FROM git_objects').raw().iterate() as Iterable<[string, string]>;
  for (const [native, git] of rows) if (gits.has(git)) found.set(git, native);
  return found;
}

/** Remember converted objects (a write transaction of its own; read-only stores skip it). */
export function rememberGitObjects(auth: Authority, pairs: ReadonlyMap<string, string>): void {
  if (pairs.size === 0 || auth.mode !== 'write') return;
  writeTransaction(auth, () => {
    const put = prepared(auth, 'INSERT INTO git_objects (native, git) VALUES (?, ?) ON CONFLICT (native) DO NOTHING');
    for (const [native, git] of pairs) put.run(native, git);
  });
}

/** The root tree (rowid and digest) of a revision of the repository (REVISION_NOT_FOUND otherwise). */
export function revisionRoot(auth: Authority, repository: string, revision: string): { tree: number; digest: string } {
  getRevision(auth, repository, revision);
  const row = prepared(
    auth,
    'SELECT r.tree AS tree, t.digest AS digest FROM revisions r JOIN trees t ON t.rowid = r.tree WHERE r.id = ?',
  ).get(revision) as { tree: number; digest: string } | undefined;
  if (row === undefined)
    throw new AgentscmError('STORE_CORRUPT', `revision ${revision} is recorded for a repository but has no tree`);
  return row;
}

/** A landing by ID (the columns `git verify` reports), or null. */
export function findLandingById(
  auth: Authority,
  landingId: number,
): {
  landing_id: number;
  repository: string;
  target: string;
  revision: string;
  change_id: string;
  change_version: string;
  receipt_kind: string;
  receipt_digest: string;
  landed_at_ms: number;
} | null {
  const row = prepared(
    auth,
    'SELECT landing_id, repository, target, revision, change_id, change_version, receipt_kind, receipt_digest, ' +
      'landed_at_ms FROM landings WHERE landing_id = ?',
  ).get(landingId) as ReturnType<typeof findLandingById> | undefined;
  return row ?? null;
}
