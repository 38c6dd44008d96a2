/**
 * Checkpoint (issue 2 §4): a new immutable revision from the workspace, Change version + 1,
 * generation + 1. It spans two databases, so it runs as: workspace lock → reconcile any
 * leftover pending operation → scan and store blobs → record the pending operation in the
 * workspace → one authority transaction (revision + Change version) → apply it to the
 * workspace. A kill at any point leaves the old or the new state (docs/workspace.md).
 */
import { unsafeNames } from '../contracts/display-text.js';
import { AgentscmError } from '../contracts/errors.js';
import { counted } from '../contracts/json/counted.js';
import { appendChangeVersion, findChange } from '../native/changes.js';
import { checkGenericId } from '../native/checks.js';
import { getRepository } from '../native/repositories.js';
import {
  prepareRevisionFromChanged,
  recordRevision,
  unchangedDirectories,
  type PreparedRevision,
} from '../native/revisions.js';
import type { Store } from '../native/store-handle.js';
import { withBulkBlobWrites, writeTransaction } from '../native/store.js';
import { dataDirExclusions } from './exclusions.js';
import { boundDataDir, locateWorkspace } from './locate.js';
import { acquireWorkspaceLock, lockedWorkspaceWrite } from './lock.js';
import { phaseTimer } from './phase-timing.js';
import { reconcilePending, type ReconcileOutcome } from './reconcile.js';
import { scanBoundsFromEnv, scanWorkspace, type ScanBounds, type ScanResult } from './scan.js';
import { revisionInput, snapshotAgainstCache } from './snapshot.js';
import {
  abandonPending,
  commitPending,
  loadBaseCache,
  openWorkspaceWritable,
  peekBoundDataDir,
  readWorkspaceRecord,
  withoutCommitSync,
  writeLastScan,
  writePending,
} from './state.js';
import { pausePoint } from './test-hooks.js';

/** At most this many unsafe names are listed in a checkpoint's result (all are counted). */
export const MAX_UNSAFE_NAMES_SHOWN = 32;

export interface CheckpointInput {
  readonly change: string;
  readonly workspace?: string;
  readonly cwd?: string;
  /** Rehash every file instead of trusting the stat cache. */
  readonly full?: boolean;
  readonly bounds?: ScanBounds;
  /** Progress lines for a person watching (the command prints them on stderr). */
  readonly onProgress?: (message: string) => void;
  /** Refuses a complete scan before anything is stored (a git work tree's checks, docs/git.md). */
  readonly checkScan?: (root: string, scan: ScanResult) => void;
}

export interface CheckpointResult {
  readonly repository: string;
  readonly change: string;
  readonly version: bigint;
  readonly revision: string;
  readonly previous_revision: string | null;
  /** False when the Change already was at this tree: no new version was made. */
  readonly created: boolean;
  /** True when this checkpoint recorded a revision that the repository did not have. */
  readonly new_revision: boolean;
  readonly generation: bigint;
  readonly workspace: string;
  readonly files: number;
  readonly hashed_files: number;
  /** What happened to an unfinished earlier operation found on the way in, if any. */
  readonly reconciled: ReconcileOutcome | null;
  /**
   * Names this checkpoint adds to the workspace's base revision that hold a control or
   * bidirectional formatting character (src/contracts/display-text.ts): how many, and the first
   * 32 in path order, exact. Recorded as they are; `agentscm checkpoint` warns about them.
   */
  readonly unsafe_names: { readonly count: number; readonly paths: string[] };
}

/**
 * Checkpoint the workspace onto a Change (created at version 1 on first use). The Store, opened
 * in 'write' mode, must be of the data directory the workspace is bound to
 * (WORKSPACE_DATA_DIR_MISMATCH otherwise); its authority is first used under the workspace lock.
 */
export function checkpointWorkspace(store: Store, input: CheckpointInput): CheckpointResult {
  const timer = phaseTimer('checkpoint');
  checkGenericId(input.change, 'Change ID');
  const root = locateWorkspace(input.workspace, input.cwd);
  timer.mark('locate');
  const lock = acquireWorkspaceLock(root);
  timer.mark('lock');
  try {
    // The authority is opened (and migrated) before the workspace database: a store this build
    // refuses (STORE_REVISIONS_OUTDATED) leaves the workspace as the build that wrote it left it.
    const dataDir = boundDataDir(peekBoundDataDir(root), store);
    timer.mark('peek data dir');
    const auth = store.authority();
    timer.mark('open authority');
    const ws = openWorkspaceWritable(root);
    timer.mark('open workspace');
    try {
      let record = readWorkspaceRecord(ws);
      if (record === null || record.data_dir !== dataDir)
        throw new AgentscmError('WORKSPACE_NOT_FOUND', `${root} was never bound to a repository`, {
          hint: 'run `agentscm init-repo` again for it',
        });
      const reconciled = reconcilePending(ws, auth, record, lock);
      record = reconciled.record;
      const baseRevision = record.base_revision;
      if (record.state !== 'ready' || baseRevision === null) {
        throw new AgentscmError('WORKSPACE_NOT_FOUND', `init-repo did not finish for ${root}`, {
          hint: 'run the same `agentscm init-repo` again',
        });
      }
      const repository = getRepository(auth, record.repository).id;
      const change = findChange(auth, repository, input.change);
      const expected = change?.current_version ?? null;
      timer.mark('record, reconcile, Change');

      const progress = input.onProgress ?? ((): void => undefined);
      progress(`scanning ${root}`);
      const scan = scanWorkspace(root, {
        bounds: input.bounds ?? scanBoundsFromEnv(),
        excludeDirs: dataDirExclusions(root, { dataDir }),
      });
      timer.mark('scan');
      progress(
        `scanned ${counted(scan.table.count, 'file')} (${counted(scan.totalBytes, 'byte')})` +
          (scan.complete ? '' : ', incomplete'),
      );
      if (!scan.complete) {
        lockedWorkspaceWrite(lock, ws, () =>
          writeLastScan(ws, {
            finished_ms: Date.now(),
            complete: false,
            file_count: scan.table.count,
            total_bytes: scan.totalBytes,
            hashed_files: 0,
            problem: scan.problem,
          }),
        );
        throw new AgentscmError(
          scan.problemCode ?? 'WORKSPACE_SCAN_INCOMPLETE',
          `the workspace scan is incomplete: ${scan.problem ?? 'unknown reason'}; nothing was checkpointed`,
          {
            hint: 'add the offending files to .gitignore or remove them, then checkpoint again',
          },
        );
      }
      input.checkScan?.(root, scan);
      pausePoint('checkpoint:after-scan');
      const base = loadBaseCache(ws);
      timer.mark('load stat cache');
      progress(input.full === true ? 'hashing every file' : 'hashing files whose size, mtime or inode changed');
      const tree = withBulkBlobWrites(auth, () =>
        snapshotAgainstCache(scan, base, { auth, full: input.full === true, onProgress: progress }),
      );
      const treeChanged = tree.changes.length > 0;
      timer.mark('compare, hash, blobs');
      progress(
        `hashed ${tree.hashedFiles} of ${counted(scan.table.count, 'file')}; ` +
          `${counted(tree.changes.length, 'changed path')}; recording`,
      );
      // Only the directories on a changed path are rebuilt and hashed; every other one keeps the
      // base revision's stored tree (the stat cache holds exactly the base revision's files).
      let encoded: PreparedRevision | null = null;
      if (treeChanged) {
        const known = unchangedDirectories(
          auth,
          repository,
          baseRevision,
          tree.changes.map((c) => c.path),
        );
        encoded = prepareRevisionFromChanged(
          baseRevision,
          revisionInput(scan.table.paths, tree.view ?? tree.cache, known),
          known,
          { entryCount: scan.table.count, totalBytes: tree.totalBytes },
        );
      }
      const revision = encoded === null ? baseRevision : encoded.id;
      timer.mark('prepare revision');
      const lastScan = {
        finished_ms: Date.now(),
        complete: true,
        file_count: scan.table.count,
        total_bytes: scan.totalBytes,
        hashed_files: tree.hashedFiles,
        problem: null,
      };
      const gained = unsafeNames(
        tree.changes.filter((c) => c.kind === 'added').map((c) => c.path),
        MAX_UNSAFE_NAMES_SHOWN,
      );
      const tail = {
        workspace: root,
        files: scan.table.count,
        hashed_files: tree.hashedFiles,
        reconciled: reconciled.outcome,
        unsafe_names: gained,
      };

      if (change !== null && change.current_revision === revision) {
        // The Change already holds this tree: no new version. The workspace still adopts
        // the revision (it may come from another workspace with the same base and edits).
        const current = change.versions.find((v) => v.version === change.current_version);
        const generation = revision === baseRevision ? record.generation : record.generation + 1n;
        lockedWorkspaceWrite(lock, ws, () => {
          writePending(
            ws,
            {
              kind: 'checkpoint',
              change: input.change,
              expected_version: null,
              revision,
              parent: baseRevision,
              started_ms: Date.now(),
            },
            tree.cache,
          );
          commitPending(ws, revision, generation);
          writeLastScan(ws, lastScan);
        });
        return {
          repository,
          change: input.change,
          version: change.current_version,
          revision,
          previous_revision: current?.previous_revision ?? null,
          created: false,
          new_revision: false,
          generation,
          ...tail,
        };
      }

      lockedWorkspaceWrite(lock, ws, () => {
        writePending(
          ws,
          {
            kind: 'checkpoint',
            change: input.change,
            expected_version: expected,
            revision,
            parent: baseRevision,
            started_ms: Date.now(),
          },
          tree.cache,
        );
      });
      timer.mark('pending (workspace)');
      pausePoint('checkpoint:after-pending');
      let recorded: { version: bigint; previous_revision: string | null; newRevision: boolean };
      try {
        recorded = writeTransaction(auth, () => {
          const made =
            encoded !== null
              ? recordRevision(auth, repository, baseRevision, [], encoded)
              : { id: revision, created: false };
          if (made.id !== revision)
            throw new AgentscmError('INTERNAL', 'revision ID changed between computing and recording');
          const version = appendChangeVersion(auth, repository, input.change, {
            expectedCurrent: expected,
            revision,
            baseRevision,
          });
          // Last, so that the commit follows the check: a holder whose lock file was replaced
          // records no version (the new writer may already have dropped this operation).
          lock.assertHeld();
          pausePoint('checkpoint:in-authority-transaction');
          return {
            version: version.version,
            previous_revision: version.previous_revision,
            newRevision: made.created,
          };
        });
      } catch (error) {
        // A lost lock means another writer owns the workspace state now: leave it alone.
        if (!(error instanceof AgentscmError && error.code === 'WORKSPACE_LOCK_LOST'))
          lockedWorkspaceWrite(lock, ws, () => abandonPending(ws));
        throw error;
      }
      timer.mark('authority transaction');
      pausePoint('checkpoint:after-authority');
      const generation = record.generation + 1n;
      // The authority holds the operation now: losing this commit to a power cut leaves the
      // pending operation, which the next writer adopts, so it needs no sync of its own.
      withoutCommitSync(ws, () =>
        lockedWorkspaceWrite(lock, ws, () => {
          commitPending(ws, revision, generation);
          writeLastScan(ws, lastScan);
        }),
      );
      timer.mark('adopt (workspace)');
      return {
        repository,
        change: input.change,
        version: recorded.version,
        revision,
        previous_revision: recorded.previous_revision,
        created: true,
        new_revision: recorded.newRevision,
        generation,
        ...tail,
      };
    } finally {
      ws.close();
      timer.mark('close workspace');
    }
  } finally {
    lock.release();
    timer.mark('release lock');
    timer.report();
  }
}
