/**
 * Finishing or dropping a pending operation left by a process that died between the
 * workspace and the authority transactions (docs/workspace.md "Crash safety"). The authority
 * is the record: if it holds the operation's Change version (or, for init-repo, the
 * repository with target main) at the pending revision, the workspace adopts it; otherwise
 * the operation never happened and is dropped. Nothing external is replayed.
 */
import { AgentscmError } from '../contracts/errors.js';
import { getChangeVersion } from '../native/changes.js';
import { writeTransaction, type Authority } from '../native/store.js';
import { getTarget } from '../native/targets.js';
import { lockedWorkspaceWrite, type WorkspaceLock } from './lock.js';
import {
  abandonPending,
  commitPending,
  readWorkspaceRecord,
  type PendingOperation,
  type WorkspaceDb,
  type WorkspaceRecord,
} from './state.js';

export type ReconcileOutcome = 'committed' | 'abandoned';

function isMissing(error: unknown): boolean {
  return (
    error instanceof AgentscmError &&
    (error.code === 'CHANGE_NOT_FOUND' || error.code === 'TARGET_NOT_FOUND' || error.code === 'REPOSITORY_NOT_FOUND')
  );
}

function authorityHolds(auth: Authority, record: WorkspaceRecord, pending: PendingOperation): boolean {
  try {
    if (pending.kind === 'init') return getTarget(auth, record.repository, 'main').revision === pending.revision;
    if (pending.change === null) return false;
    const version = (pending.expected_version ?? 0n) + 1n;
    return getChangeVersion(auth, record.repository, pending.change, version).revision === pending.revision;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

/**
 * Reconcile the pending operation, if any; the caller holds the workspace lock. The authority
 * is read in a writer transaction: if the process that recorded the operation is still alive
 * (its lock file was removed under it), this waits for its authority transaction to commit or
 * roll back instead of reading the state before it, and that process checks its lock before
 * committing (WORKSPACE_LOCK_LOST), so the operation is either adopted here or never recorded.
 */
export function reconcilePending(
  ws: WorkspaceDb,
  auth: Authority,
  record: WorkspaceRecord,
  lock: WorkspaceLock,
): { record: WorkspaceRecord; outcome: ReconcileOutcome | null } {
  const pending = record.pending;
  if (pending === null) return { record, outcome: null };
  const committed = writeTransaction(auth, () => authorityHolds(auth, record, pending));
  lockedWorkspaceWrite(lock, ws, () => {
    if (committed) commitPending(ws, pending.revision, pending.kind === 'init' ? 1n : record.generation + 1n);
    else abandonPending(ws);
  });
  const after = readWorkspaceRecord(ws);
  if (after === null) throw new AgentscmError('INTERNAL', 'the workspace record vanished while reconciling');
  return { record: after, outcome: committed ? 'committed' : 'abandoned' };
}
