/**
 * Any revision, or a Change's candidate version, written as a git commit (docs/git.md "Exporting revisions and
 * candidate versions"). An export commit has no parent, the identity `agentscm <agentscm@localhost>` (or --author)
 * and the time 0, so the same revision always gives the same commit ID in every repository.
 */
import { AgentscmError } from '../contracts/errors.js';
import { getChange, getChangeVersion } from '../native/changes.js';
import { resolveRepository } from '../native/repositories.js';
import { resolveRevisionRef } from '../native/revisions.js';
import type { Authority } from '../native/store.js';
import { gitWorkTree } from './land-mirror.js';
import { git, refValue, tryGit } from './run.js';
import { commitTree, parseIdentity, writeRevisionTree } from './write-revision.js';

/** Author and committer of an export unless --author names another. */
export const EXPORT_IDENTITY = 'agentscm <agentscm@localhost>';

export interface ExportAnswer {
  readonly repository: string;
  readonly revision: string;
  readonly git_repo: string;
  readonly ref: string;
  readonly commit: string;
  readonly tree: string;
  /** Objects written (0: the repository had them all). */
  readonly written: number;
}

function usage(message: string, hint: string): AgentscmError {
  return new AgentscmError('USAGE', message, { hint });
}

/** The ref of a candidate version: `refs/agentscm/changes/CHANGE/vN`. */
export function candidateRef(change: string, version: bigint): string {
  return `refs/agentscm/changes/${change}/v${version.toString()}`;
}

function writeExport(
  auth: Authority,
  input: { repository: string; revision: string; gitRepo: string; ref: string; author?: string | undefined },
  message: string,
): ExportAnswer {
  const gitRepo = gitWorkTree(input.gitRepo);
  if (!input.ref.startsWith('refs/') || !tryGit(gitRepo, ['check-ref-format', input.ref]).ok)
    throw usage(`${JSON.stringify(input.ref)} is not a full ref name`, 'name a ref under refs/, e.g. refs/heads/x');
  const identity = input.author ?? EXPORT_IDENTITY;
  if (parseIdentity(identity) === null)
    throw usage(`--author ${JSON.stringify(identity)} is not "Name <email>"`, 'give --author "Name <email>"');
  const { tree, written } = writeRevisionTree(auth, input.repository, input.revision, gitRepo);
  const commit = commitTree(gitRepo, { tree, parent: null, message, identity, timeMs: 0, sign: false });
  git(gitRepo, ['update-ref', '-m', 'agentscm export', input.ref, commit]);
  return {
    repository: input.repository,
    revision: input.revision,
    git_repo: gitRepo,
    ref: input.ref,
    commit,
    tree,
    written,
  };
}

/** `revision export REV --git-repo PATH --ref REF`. */
export function exportRevision(
  auth: Authority,
  input: { repository?: string | undefined; revision: string; gitRepo: string; ref: string; author?: string },
): ExportAnswer {
  const repository = resolveRepository(auth, input.repository).id;
  const revision = resolveRevisionRef(auth, repository, input.revision);
  return writeExport(
    auth,
    { ...input, repository, revision },
    `Revision ${revision}\n\nAgentscm-Revision: ${revision}\n`,
  );
}

/** `change export --change C [--version N] --git-repo PATH`: the version as `refs/agentscm/changes/C/vN`. */
export function exportCandidate(
  auth: Authority,
  input: { repository?: string | undefined; change: string; version?: bigint; gitRepo: string; author?: string },
): ExportAnswer & { change_id: string; change_version: bigint } {
  const repository = resolveRepository(auth, input.repository).id;
  const change = getChange(auth, repository, input.change);
  const version = input.version ?? change.current_version;
  const { revision } = getChangeVersion(auth, repository, change.id, version);
  const answer = writeExport(
    auth,
    { repository, revision, gitRepo: input.gitRepo, ref: candidateRef(change.id, version), author: input.author },
    `Change ${change.id} version ${version.toString()}\n\nAgentscm-Change: ${change.id}\n` +
      `Agentscm-Version: ${version.toString()}\nAgentscm-Revision: ${revision}\n`,
  );
  return { ...answer, change_id: change.id, change_version: version };
}

/** The commit a Change's current candidate version was exported as in `gitRepo` (`change link` without --sha). */
export function exportedCandidate(
  auth: Authority,
  repository: string | undefined,
  change: string,
  gitRepo: string,
): string {
  const repo = resolveRepository(auth, repository).id;
  const current = getChange(auth, repo, change);
  const ref = candidateRef(current.id, current.current_version);
  const sha = refValue(gitWorkTree(gitRepo), ref);
  if (sha === null)
    throw new AgentscmError('GIT_REVISION_UNKNOWN', `${gitRepo} has no ${ref}`, {
      hint: `export it first: \`agentscm change export --change ${current.id} --git-repo ${gitRepo}\`, or pass --sha`,
    });
  return sha;
}
