/**
 * `agentscm git verify SHA` (docs/git.md "Verifying a commit"): which landing, Change, revision and receipt produced
 * a commit, from its trailers checked against the authority's records, and that its tree is the revision's git
 * tree, recomputed from the authority alone (nothing cached trusted). GIT_COMMIT_UNPROVEN otherwise.
 */
import { AgentscmError } from '../contracts/errors.js';
import { findGitMirrorOfLanding, findLandingById, hasGitTables } from '../native/git-targets.js';
import { resolveRepository } from '../native/repositories.js';
import { hasRevision } from '../native/revisions.js';
import { readTransaction, type Authority } from '../native/store.js';
import { gitWorkTree } from './land-mirror.js';
import { git, refValue } from './run.js';
import { revisionGitTree } from './write-revision.js';

export interface VerifyAnswer {
  readonly commit: string;
  readonly tree: string;
  readonly revision: string;
  readonly repository: string;
  /** 'landing': a mirrored landing; 'export': a revision or candidate export. */
  readonly kind: 'landing' | 'export';
  readonly change_id: string | null;
  readonly change_version: string | null;
  readonly landing_id: number | null;
  readonly target: string | null;
  readonly receipt: string | null;
  /** The commit the authority recorded for the landing (equal to `commit` unless signed again). */
  readonly recorded_commit: string | null;
  readonly tree_matches: true;
}

function unproven(commit: string, why: string): AgentscmError {
  return new AgentscmError('GIT_COMMIT_UNPROVEN', `commit ${commit}: ${why}`, {
    hint:
      'this commit was not written by this authority as it is; compare it with `git log` and the landings ' +
      '(`agentscm target list`, `agentscm change show`)',
  });
}

/** The trailers `Agentscm-NAME: value` of a commit message (the last occurrence of each). */
export function agentscmTrailers(message: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of message.matchAll(/^Agentscm-([A-Za-z]+): (.+)$/gm))
    found.set(match[1] as string, match[2] as string);
  return found;
}

export function verifyCommit(
  auth: Authority,
  input: { repository?: string | undefined; gitRepo: string; commit: string },
): VerifyAnswer {
  const gitRepo = gitWorkTree(input.gitRepo);
  const commit = refValue(gitRepo, input.commit);
  if (commit === null)
    throw new AgentscmError('GIT_REVISION_UNKNOWN', `${input.commit} names no commit in ${gitRepo}`, {
      hint: 'name a commit of that repository (`git log` lists them)',
    });
  const body = git(gitRepo, ['cat-file', 'commit', commit]).toString('utf8');
  const split = body.indexOf('\n\n');
  const tree = /^tree ([0-9a-f]+)$/m.exec(body.slice(0, split))?.[1] ?? '';
  const trailers = agentscmTrailers(split < 0 ? '' : body.slice(split + 2));
  const revision = trailers.get('Revision');
  if (revision === undefined) throw unproven(commit, 'it carries no Agentscm-Revision trailer');
  return readTransaction(auth, () => {
    const landingText = trailers.get('Landing');
    let answer: Omit<VerifyAnswer, 'tree_matches'>;
    if (landingText !== undefined) {
      const landing = /^[1-9][0-9]{0,15}$/.test(landingText) ? findLandingById(auth, Number(landingText)) : null;
      if (landing === null) throw unproven(commit, `no landing ${landingText} is recorded`);
      const receipt = `${landing.receipt_kind} ${landing.receipt_digest}`;
      if (
        landing.revision !== revision ||
        trailers.get('Change') !== landing.change_id ||
        trailers.get('Receipt') !== receipt
      )
        throw unproven(commit, `its trailers do not match landing ${landingText} as recorded`);
      const mirror = hasGitTables(auth) ? findGitMirrorOfLanding(auth, landing.landing_id) : null;
      answer = {
        commit,
        tree,
        revision,
        repository: landing.repository,
        kind: 'landing',
        change_id: landing.change_id,
        change_version: BigInt(landing.change_version).toString(),
        landing_id: landing.landing_id,
        target: landing.target,
        receipt,
        recorded_commit: mirror?.commit_sha ?? null,
      };
    } else {
      const repository = resolveRepository(auth, input.repository).id;
      if (!/^[0-9a-f]{64}$/.test(revision) || !hasRevision(auth, repository, revision))
        throw unproven(commit, `repository ${repository} has no revision ${revision}`);
      answer = {
        commit,
        tree,
        revision,
        repository,
        kind: 'export',
        change_id: trailers.get('Change') ?? null,
        change_version: trailers.get('Version') ?? null,
        landing_id: null,
        target: null,
        receipt: null,
        recorded_commit: null,
      };
    }
    const expected = revisionGitTree(auth, answer.repository, revision);
    if (expected !== tree)
      throw unproven(commit, `its tree ${tree} is not revision ${revision}'s git tree ${expected}`);
    return { ...answer, tree_matches: true };
  });
}
