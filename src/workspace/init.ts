/**
 * init-repo (issue 2 §5): create the store if absent, register the repository, bind the
 * directory as its workspace and make the first checkpoint onto target `main`. Like a
 * checkpoint it records a pending operation in the workspace before the one authority
 * transaction (repository + policy epoch 0 + revision + target), so a crash leaves either
 * nothing or a finished repository that the next run adopts. It works on the command's Store
 * (opened in 'write' mode); the store's files are created here, the one place that creates
 * them (createAuthority), and from then on the authority is the Store's.
 */
import { realpathSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { counted } from '../contracts/json/counted.js';
import { checkGenericId } from '../native/checks.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { createRepository, findRepositoryByName, getRepository, newRepositoryId } from '../native/repositories.js';
import { prepareRevision, recordRevision } from '../native/revisions.js';
import type { Store } from '../native/store-handle.js';
import {
  createAuthority,
  isStoreInitialized,
  withBulkBlobWrites,
  writeTransaction,
  type Authority,
} from '../native/store.js';
import { setTarget } from '../native/targets.js';
import { dataDirExclusions } from './exclusions.js';
import { writeInstructionBlocks, type InstructionFileOutcome } from './instruction-block.js';
import { acquireWorkspaceLock, lockedWorkspaceWrite } from './lock.js';
import { reconcilePending } from './reconcile.js';
import { scanBoundsFromEnv, scanWorkspace, type ScanBounds, type ScanResult } from './scan.js';
import { snapshotTree } from './snapshot.js';
import { ensureStateDir, removeStateDir, workspaceExists } from './state-dir.js';
import {
  abandonPending,
  commitPending,
  createWorkspaceDb,
  openWorkspaceReadOnly,
  readWorkspaceRecord,
  writeBindingRecord,
  writeLastScan,
  writePending,
  type WorkspaceDb,
} from './state.js';
import { pausePoint } from './test-hooks.js';

export const INITIAL_TARGET = 'main';

export interface InitRepoInput {
  /** The directory to bind (default: the current directory). */
  readonly path: string;
  readonly name: string;
  readonly bounds?: ScanBounds;
  /** Write the managed instruction block before the first revision (default true; docs/stop-hooks.md). */
  readonly instructions?: boolean;
  /** Progress lines for a person watching (the command prints them on stderr). */
  readonly onProgress?: (message: string) => void;
  /**
   * Checks the complete first scan before anything is written and names the git work tree the workspace is bound
   * to, or null (src/git/work-tree-binding.ts; docs/git.md "Binding a git work tree").
   */
  readonly bindGit?: (root: string, scan: ScanResult) => string | null;
}

export interface InitRepoResult {
  readonly repository: string;
  readonly name: string;
  readonly revision: string;
  readonly target: string;
  readonly workspace: string;
  readonly policy_epoch: bigint;
  readonly data_dir: string;
  readonly generation: bigint;
  readonly files: number;
  readonly total_bytes: bigint;
  /** True when an interrupted init-repo of the same name was found finished and adopted. */
  readonly resumed: boolean;
  /** The instruction files and what was done to each (empty with --no-instructions). */
  readonly instruction_files: InstructionFileOutcome[];
  /** The git work tree the workspace is bound to (its top level), or null. */
  readonly git_work_tree: string | null;
}

/** What the binding records; initRepo adds the instruction files it wrote before. */
type RecordedInit = Omit<InitRepoResult, 'instruction_files' | 'git_work_tree'>;

function directoryOf(path: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw new AgentscmError('WORKSPACE_NOT_FOUND', `${path} does not exist`, {
      hint: 'create the directory first, or pass an existing PATH',
    });
  }
  if (!statSync(real).isDirectory())
    throw new AgentscmError('WORKSPACE_NOT_FOUND', `${real} is not a directory`, { hint: 'pass a directory as PATH' });
  return real;
}

function alreadyBound(root: string, repository: string): AgentscmError {
  return new AgentscmError('WORKSPACE_EXISTS', `${root} is already bound to repository ${repository}`, {
    hint: 'use `agentscm checkpoint` in it, or init-repo another directory',
  });
}

/**
 * Refuse before changing anything: an unsafe state directory (workspaceExists checks it), a
 * bound directory, a taken name, a damaged store.
 */
function precheck(store: Store, root: string, input: InitRepoInput): void {
  if (workspaceExists(root)) {
    const ws = openWorkspaceReadOnly(root);
    try {
      const record = readWorkspaceRecord(ws);
      if (record !== null && record.state === 'ready') throw alreadyBound(root, record.repository);
      // An interrupted init-repo may have registered the name already: the locked path below
      // reconciles it and adopts the repository when it is this one.
      if (record !== null && record.pending?.kind === 'init') return;
    } finally {
      ws.close();
    }
  }
  if (isStoreInitialized(store.dataDir)) {
    // The Store's authority is opened for writing: a store of an older schema is migrated here
    // (or refused, STORE_REVISIONS_OUTDATED) before anything is created, since init-repo writes
    // to it anyway.
    if (findRepositoryByName(store.authority(), input.name) !== null) {
      throw new AgentscmError('REPOSITORY_EXISTS', `a repository named ${input.name} already exists in this store`, {
        hint: 'choose another --name',
      });
    }
  }
}

function finished(
  auth: Authority,
  ws: WorkspaceDb,
  root: string,
  resumed: boolean,
  counts: { files: number; total_bytes: bigint },
): RecordedInit {
  const record = readWorkspaceRecord(ws);
  if (record === null || record.base_revision === null)
    throw new AgentscmError('INTERNAL', 'init-repo finished without a base revision');
  const repository = getRepository(auth, record.repository);
  return {
    repository: repository.id,
    name: repository.name,
    revision: record.base_revision,
    target: INITIAL_TARGET,
    workspace: root,
    policy_epoch: currentPolicyEpoch(auth, repository.id),
    data_dir: record.data_dir,
    generation: record.generation,
    files: counts.files,
    total_bytes: counts.total_bytes,
    resumed,
  };
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function incompleteScan(scan: ScanResult): AgentscmError {
  return new AgentscmError(
    scan.problemCode ?? 'WORKSPACE_SCAN_INCOMPLETE',
    `the workspace scan is incomplete: ${scan.problem ?? 'unknown reason'}; nothing was registered`,
    {
      hint: 'add the offending files to .gitignore or remove them, then run init-repo again',
    },
  );
}

/** What a failed init-repo must undo: the state directory, when this run created it and bound nothing. */
interface InitProgress {
  createdStateDir: boolean;
  committed: boolean;
}

/**
 * Create the store if absent, register and bind, first checkpoint onto `main` (issue 2 §5).
 * The tree is scanned before anything is created, so a tree that cannot be recorded leaves no
 * store, no `.agentscm/` and no repository; any later failure removes the `.agentscm/` this run
 * created, unless the repository was registered (docs/workspace.md).
 */
export function initRepo(store: Store, input: InitRepoInput): InitRepoResult {
  checkGenericId(input.name, 'repository name');
  const root = directoryOf(input.path);
  precheck(store, root, input);
  const planned = realOrResolved(store.dataDir);
  if (relative(root, planned) === '') {
    throw new AgentscmError('USAGE', 'the data directory cannot be the workspace itself', {
      hint: 'pass another --data-dir',
    });
  }
  const bounds = input.bounds ?? scanBoundsFromEnv();
  const first = scanWorkspace(root, { bounds, excludeDirs: dataDirExclusions(root, { dataDir: planned }) });
  if (!first.complete) throw incompleteScan(first);
  const gitWorkTree = input.bindGit?.(root, first) ?? null;
  // The managed instruction block is part of the first revision (docs/stop-hooks.md).
  const instructionFiles = input.instructions === false ? [] : writeInstructionBlocks(root);
  const state: InitProgress = { createdStateDir: false, committed: false };
  try {
    return {
      ...initRepoUnlocked(store, root, input, bounds, state),
      instruction_files: instructionFiles,
      git_work_tree: gitWorkTree,
    };
  } catch (error) {
    const lost = error instanceof AgentscmError && error.code === 'WORKSPACE_LOCK_LOST';
    if (state.createdStateDir && !state.committed && !lost) removeStateDir(root);
    throw error;
  }
}

function initRepoUnlocked(
  store: Store,
  root: string,
  input: InitRepoInput,
  bounds: ScanBounds,
  state: InitProgress,
): RecordedInit {
  // The store's files, created if absent (its lock file last); the connection is the Store's.
  if (!isStoreInitialized(store.dataDir)) createAuthority(store.dataDir).close();
  const auth = store.authority();
  const dataDir = realpathSync(store.dataDir);
  if (relative(root, dataDir) === '') {
    throw new AgentscmError('USAGE', 'the data directory cannot be the workspace itself', {
      hint: 'pass another --data-dir',
    });
  }
  const excludeDirs = dataDirExclusions(root, { dataDir });
  state.createdStateDir = ensureStateDir(root);
  const lock = acquireWorkspaceLock(root);
  try {
    const ws = createWorkspaceDb(root);
    try {
      let record = readWorkspaceRecord(ws);
      if (record !== null && record.pending !== null) record = reconcilePending(ws, auth, record, lock).record;
      if (record !== null && record.state === 'ready') {
        const repository = getRepository(auth, record.repository);
        // An interrupted init-repo of this very name finished in the authority: adopt it.
        if (repository.name === input.name && record.data_dir === dataDir) {
          return finished(auth, ws, root, true, { files: 0, total_bytes: 0n });
        }
        throw alreadyBound(root, record.repository);
      }
      if (findRepositoryByName(auth, input.name) !== null) {
        throw new AgentscmError('REPOSITORY_EXISTS', `a repository named ${input.name} already exists in this store`, {
          hint: 'choose another --name',
        });
      }

      const progress = input.onProgress ?? ((): void => undefined);
      progress(`scanning ${root}`);
      const scan = scanWorkspace(root, { bounds, excludeDirs });
      progress(
        `scanned ${counted(scan.files.length, 'file')} (${counted(scan.totalBytes, 'byte')})` +
          (scan.complete ? '' : ', incomplete'),
      );
      if (!scan.complete) throw incompleteScan(scan);
      progress('hashing and storing every file');
      const tree = withBulkBlobWrites(auth, () =>
        snapshotTree(scan, new Map(), { auth, full: true, onProgress: progress }),
      );
      progress(`stored ${counted(tree.hashedFiles, 'file')}; recording the first revision`);
      const repositoryId = newRepositoryId();
      const encoded = prepareRevision(null, tree.entries);
      const revision = encoded.id;
      lockedWorkspaceWrite(lock, ws, () => {
        writeBindingRecord(ws, { repository: repositoryId, data_dir: dataDir });
        writePending(
          ws,
          { kind: 'init', change: null, expected_version: null, revision, parent: null, started_ms: Date.now() },
          tree.entries,
        );
      });
      pausePoint('init:after-pending');
      try {
        writeTransaction(auth, () => {
          createRepository(auth, input.name, repositoryId);
          recordRevision(auth, repositoryId, null, tree.entries, encoded);
          setTarget(auth, repositoryId, INITIAL_TARGET, revision);
          lock.assertHeld();
        });
        state.committed = true;
      } catch (error) {
        if (!(error instanceof AgentscmError && error.code === 'WORKSPACE_LOCK_LOST'))
          lockedWorkspaceWrite(lock, ws, () => abandonPending(ws));
        throw error;
      }
      pausePoint('init:after-authority');
      lockedWorkspaceWrite(lock, ws, () => {
        commitPending(ws, revision, 1n);
        writeLastScan(ws, {
          finished_ms: Date.now(),
          complete: true,
          file_count: scan.files.length,
          total_bytes: scan.totalBytes,
          hashed_files: tree.hashedFiles,
          problem: null,
        });
      });
      return finished(auth, ws, root, false, { files: scan.files.length, total_bytes: scan.totalBytes });
    } finally {
      ws.close();
    }
  } finally {
    lock.release();
  }
}
