/**
 * Workspace status (issue 2 §4), strictly read-only: the workspace database is opened
 * read-only with no migration, nothing is created or written, and the caller's Store (opened
 * in 'read' mode) is used only to name the repository. A read-only caller such as the Stop hook
 * can call readWorkspaceStatus directly.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { Store } from '../native/store-handle.js';
import { dataDirExclusions } from './exclusions.js';
import { boundDataDir, locateWorkspace } from './locate.js';
import { readRepositoryName } from './repository-name.js';
import { scanBoundsFromEnv, scanWorkspace, type ScanBounds } from './scan.js';
import { snapshotTree, type PathChange } from './snapshot.js';
import {
  loadBaseEntries,
  openWorkspaceReadOnly,
  readWorkspaceRecord,
  workspaceRead,
  type WorkspaceLifecycle,
} from './state.js';

export interface PendingOperationView {
  readonly kind: 'init' | 'checkpoint';
  readonly change: string | null;
  readonly expected_version: bigint | null;
  readonly revision: string;
  readonly parent: string | null;
}

export interface WorkspaceStatus {
  readonly workspace: string;
  readonly repository: string;
  /** The repository's name in the bound store, or null when that store cannot be read. */
  readonly repository_name: string | null;
  readonly data_dir: string;
  /** 'ready' once init-repo finished; 'binding' while (or if) it did not. */
  readonly state: WorkspaceLifecycle;
  readonly base_revision: string | null;
  readonly generation: bigint;
  readonly pending_operation: PendingOperationView | null;
  /** The scan saw every file within its bounds. */
  readonly complete: boolean;
  /** Why the scan is incomplete, or null. */
  readonly incomplete_reason: string | null;
  /**
   * The code a checkpoint of this scan would be refused with (WORKSPACE_PATH_NOT_UTF8 or
   * WORKSPACE_SCAN_INCOMPLETE), or null.
   */
  readonly incomplete_code: string | null;
  /** The scan is complete and the files equal the base tree (content and mode). */
  readonly clean: boolean;
  readonly changes: PathChange[];
  /** ready state, no pending operation, complete scan, clean: what the Stop hook requires. */
  readonly ready: boolean;
  readonly files: number;
  readonly hashed_files: number;
}

export interface StatusInput {
  readonly workspace?: string;
  readonly cwd?: string;
  readonly bounds?: ScanBounds;
}

/**
 * Read the workspace state and compare a fresh scan with the base tree, writing nothing. The
 * Store must be of the data directory the workspace is bound to (WORKSPACE_DATA_DIR_MISMATCH).
 */
export function readWorkspaceStatus(store: Store, input: StatusInput = {}): WorkspaceStatus {
  const root = locateWorkspace(input.workspace, input.cwd);
  const ws = openWorkspaceReadOnly(root);
  try {
    const { record, base } = workspaceRead(ws, () => ({ record: readWorkspaceRecord(ws), base: loadBaseEntries(ws) }));
    if (record === null) {
      throw new AgentscmError('WORKSPACE_NOT_FOUND', `${root} was never bound to a repository`, {
        hint: 'run `agentscm init-repo` again for it',
      });
    }
    const dataDir = boundDataDir(record.data_dir, store);
    const scan = scanWorkspace(root, {
      bounds: input.bounds ?? scanBoundsFromEnv(),
      excludeDirs: dataDirExclusions(root, { dataDir }),
    });
    const tree = snapshotTree(scan, base, { auth: null, full: false });
    const pending = record.pending;
    const clean = scan.complete && tree.changes.length === 0;
    return {
      workspace: root,
      repository: record.repository,
      repository_name: readRepositoryName(store, record.repository),
      data_dir: dataDir,
      state: record.state,
      base_revision: record.base_revision,
      generation: record.generation,
      pending_operation:
        pending === null
          ? null
          : {
              kind: pending.kind,
              change: pending.change,
              expected_version: pending.expected_version,
              revision: pending.revision,
              parent: pending.parent,
            },
      complete: scan.complete,
      incomplete_reason: scan.problem,
      incomplete_code: scan.problemCode,
      clean,
      changes: tree.changes,
      ready: record.state === 'ready' && pending === null && clean,
      files: scan.files.length,
      hashed_files: tree.hashedFiles,
    };
  } finally {
    ws.close();
  }
}
