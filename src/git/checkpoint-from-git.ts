/**
 * `checkpoint --from-git REV` (docs/git.md "Checkpointing a git commit"): the tree of a git commit recorded as
 * a Change's next version, without touching the work tree or the workspace's own state. The workspace is read
 * (never written) for its repository and its base revision; the revision's parent is that base revision, so its
 * ID is determined by exactly (the workspace's base revision, the git tree): the same git tree checkpointed from
 * the same workspace state always gives the same revision ID, whichever commit carries it; a git tree equal to
 * the base revision's tree is the base revision itself, as an unchanged workspace checkpoint is. Like a checkpoint, a
 * Change already at that revision gets no new version. The revision and the Change version are one authority
 * transaction; blobs are stored before it (unreferenced blobs are harmless).
 */
import { realpathSync, statSync } from 'node:fs';

import { unsafeNames } from '../contracts/display-text.js';
import { AgentscmError } from '../contracts/errors.js';
import { revisionIdOf } from '../contracts/tree.js';
import { appendChangeVersion, findChange } from '../native/changes.js';
import { checkGenericId } from '../native/checks.js';
import { getRepository } from '../native/repositories.js';
import { getRevision, listRevisionEntries, prepareRevision, recordRevision } from '../native/revisions.js';
import type { Store } from '../native/store-handle.js';
import { writeTransaction } from '../native/store.js';
import { MAX_UNSAFE_NAMES_SHOWN, type CheckpointResult } from '../workspace/checkpoint.js';
import { boundDataDir, locateWorkspace } from '../workspace/locate.js';
import { scanBoundsFromEnv, type ScanBounds } from '../workspace/scan.js';
import { openWorkspaceReadOnly, peekBoundDataDir, readWorkspaceRecord } from '../workspace/state.js';
import { readGitCommitTree } from './read-commit-tree.js';

export interface GitCheckpointInput {
  readonly change: string;
  /** Anything git resolves to a commit. */
  readonly rev: string;
  /** The git repository's top level (default: the workspace root, which must then be a git work tree). */
  readonly gitRepo?: string;
  readonly workspace?: string;
  readonly cwd?: string;
  readonly bounds?: ScanBounds;
  readonly onProgress?: (message: string) => void;
}

export interface GitCheckpointResult extends CheckpointResult {
  readonly git: { readonly repository: string; readonly commit: string; readonly tree: string };
}

function gitTopLevel(path: string): string {
  let real: string;
  try {
    real = realpathSync(path);
    statSync(`${real}/.git`);
  } catch {
    throw new AgentscmError('GIT_NOT_A_WORK_TREE', `${path} is not the top level of a git work tree`, {
      hint: 'pass --git-repo with the directory that holds .git',
    });
  }
  return real;
}

/** Record the tree of `input.rev` as the Change's next version (module comment). */
export async function checkpointFromGit(store: Store, input: GitCheckpointInput): Promise<GitCheckpointResult> {
  checkGenericId(input.change, 'Change ID');
  const root = locateWorkspace(input.workspace, input.cwd);
  const dataDir = boundDataDir(peekBoundDataDir(root), store);
  const auth = store.authority();
  const ws = openWorkspaceReadOnly(root);
  let record;
  try {
    record = readWorkspaceRecord(ws);
  } finally {
    ws.close();
  }
  if (record === null || record.data_dir !== dataDir)
    throw new AgentscmError('WORKSPACE_NOT_FOUND', `${root} was never bound to a repository`, {
      hint: 'run `agentscm init-repo` again for it',
    });
  const base = record.base_revision;
  if (record.state !== 'ready' || base === null)
    throw new AgentscmError('WORKSPACE_NOT_FOUND', `init-repo did not finish for ${root}`, {
      hint: 'run the same `agentscm init-repo` again',
    });
  const repository = getRepository(auth, record.repository).id;
  const repo = gitTopLevel(input.gitRepo ?? root);
  const progress = input.onProgress ?? ((): void => undefined);
  const read = await readGitCommitTree(repo, input.rev, auth, input.bounds ?? scanBoundsFromEnv(), progress);
  const before = new Set(listRevisionEntries(auth, repository, base).map((e) => e.path));
  // A git tree equal to the base revision's tree is the base revision itself (as an unchanged checkpoint); the
  // trees are built once, the ID with either parent following from the root tree's digest.
  const prepared = prepareRevision(base, read.entries);
  const sameAsBase = revisionIdOf(getRevision(auth, repository, base).parent, prepared.tree) === base;
  const encoded = sameAsBase ? null : prepared;
  const revision = encoded?.id ?? base;
  const recorded = writeTransaction(auth, () => {
    const change = findChange(auth, repository, input.change);
    if (change !== null && change.current_revision === revision) {
      const current = change.versions.find((v) => v.version === change.current_version);
      return {
        version: change.current_version,
        previous: current?.previous_revision ?? null,
        created: false,
        newRevision: false,
      };
    }
    const made = encoded === null ? { created: false } : recordRevision(auth, repository, base, read.entries, encoded);
    const version = appendChangeVersion(auth, repository, input.change, {
      expectedCurrent: change?.current_version ?? null,
      revision,
      baseRevision: base,
    });
    return { version: version.version, previous: version.previous_revision, created: true, newRevision: made.created };
  });
  return {
    repository,
    change: input.change,
    version: recorded.version,
    revision,
    previous_revision: recorded.previous,
    created: recorded.created,
    new_revision: recorded.newRevision,
    generation: record.generation,
    workspace: root,
    files: read.entries.length,
    hashed_files: read.entries.length,
    reconciled: null,
    unsafe_names: unsafeNames(
      read.entries.filter((e) => !before.has(e.path)).map((e) => e.path),
      MAX_UNSAFE_NAMES_SHOWN,
    ),
    git: { repository: repo, commit: read.commit, tree: read.tree },
  };
}
