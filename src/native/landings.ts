/**
 * Landings (docs/admission.md "What is rechecked, and why", `agentscm land`): the target
 * moves to the Change's revision and one immutable row records what landed, from which revision,
 * when, on which approval and receipt. Both writes run in the caller's writer transaction, after
 * admission's rechecks in the same transaction (src/tasks/admission/admission.ts), so a crash leaves the
 * target at its old revision without a row, or at the new one with its row.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { Approval, ReceiptKind } from './approvals.js';
import { checkDigest, checkGenericId, checkRepositoryId } from './checks.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { prepared, type Authority } from './store.js';
import { moveTarget } from './targets.js';

export interface Landing {
  readonly landing_id: number;
  readonly repository: string;
  readonly target: string;
  readonly previous_revision: string;
  readonly revision: string;
  readonly change_id: string;
  readonly change_version: bigint;
  readonly approval_id: number;
  readonly receipt_kind: ReceiptKind;
  readonly receipt_digest: string;
  readonly landed_by: string;
  readonly landed_at_ms: number;
}

interface LandingRow extends Omit<Landing, 'change_version'> {
  change_version: string;
}

const COLUMNS =
  'landing_id, repository, target, previous_revision, revision, change_id, change_version, approval_id, ' +
  'receipt_kind, receipt_digest, landed_by, landed_at_ms';

function landingOf(row: LandingRow): Landing {
  return { ...row, change_version: u64FromSql(row.change_version) };
}

/** Bound on the parent links followed when looking for the base (a revision chain is never longer in practice). */
const MAX_ANCESTRY = 100_000;

/**
 * Whether `ancestor` is a proper ancestor of `revision` (following parent links, at most
 * MAX_ANCESTRY of them): the condition for landing `revision` on a target at `ancestor` as a
 * fast-forward.
 */
export function isAncestor(auth: Authority, ancestor: string, revision: string): boolean {
  checkDigest(ancestor, 'revision');
  checkDigest(revision, 'revision');
  const row = prepared(
    auth,
    `WITH RECURSIVE chain(id, depth) AS (
       SELECT parent, 1 FROM revisions WHERE id = ?
       UNION ALL SELECT r.parent, c.depth + 1 FROM revisions r JOIN chain c ON r.id = c.id WHERE c.depth < ?
     ) SELECT 1 AS found FROM chain WHERE id = ? LIMIT 1`,
  ).get(revision, MAX_ANCESTRY, ancestor) as { found: number } | undefined;
  return row !== undefined;
}

/**
 * Move the approval's target from `from` to the approved revision and record the landing, in
 * the caller's writer transaction. A target that moved meanwhile is LAND_BASE_MISMATCH; an
 * approval lands once (the row's approval_id is unique).
 */
export function recordLanding(
  auth: Authority,
  approval: Approval,
  from: string,
  landedBy: string,
  nowMs: number,
): Landing {
  checkRepositoryId(approval.repository);
  checkGenericId(approval.target, 'target name');
  if (!moveTarget(auth, approval.repository, approval.target, from, approval.revision)) {
    throw new AgentscmError('LAND_BASE_MISMATCH', `target ${approval.target} is no longer at revision ${from}`, {
      hint: `checkpoint the Change on the target's new revision, then qualify, approve and land again`,
    });
  }
  prepared(
    auth,
    `INSERT INTO landings (repository, target, previous_revision, revision, change_id, change_version, approval_id,
      receipt_kind, receipt_digest, landed_by, landed_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    approval.repository,
    approval.target,
    from,
    approval.revision,
    approval.change_id,
    u64ToSql(approval.change_version),
    approval.approval_id,
    approval.receipt_kind,
    approval.receipt_digest,
    landedBy,
    nowMs,
  );
  const row = prepared(auth, `SELECT ${COLUMNS} FROM landings WHERE approval_id = ?`).get(approval.approval_id) as
    LandingRow | undefined;
  if (row === undefined) throw new AgentscmError('INTERNAL', 'the landing just recorded is not readable');
  return landingOf(row);
}

/** The landing of an approval, or null. */
export function findLandingOfApproval(auth: Authority, approvalId: number): Landing | null {
  const row = prepared(auth, `SELECT ${COLUMNS} FROM landings WHERE approval_id = ?`).get(approvalId) as
    LandingRow | undefined;
  return row === undefined ? null : landingOf(row);
}

/** The landings of a target, newest first (at most `limit`). */
export function listLandings(auth: Authority, repository: string, target: string, limit = 100): Landing[] {
  checkRepositoryId(repository);
  checkGenericId(target, 'target name');
  return (
    prepared(
      auth,
      `SELECT ${COLUMNS} FROM landings WHERE repository = ? AND target = ? ORDER BY landing_id DESC LIMIT ?`,
    ).all(repository, target, limit) as LandingRow[]
  ).map(landingOf);
}

/** The newest landing of a Change on a target, or null. */
export function findLatestLandingOfChange(
  auth: Authority,
  repository: string,
  target: string,
  change: string,
): Landing | null {
  checkRepositoryId(repository);
  checkGenericId(target, 'target name');
  const row = prepared(
    auth,
    `SELECT ${COLUMNS} FROM landings WHERE repository = ? AND target = ? AND change_id = ? ` +
      'ORDER BY landing_id DESC LIMIT 1',
  ).get(repository, target, change) as LandingRow | undefined;
  return row === undefined ? null : landingOf(row);
}
