/**
 * Operator approvals (docs/admission.md "What is rechecked, and why"): one immutable row binding
 * the operator's decision to the exact subject — Change id and version, revision, review context,
 * policy epoch, workflow profile, target, installed requirement — and the receipt that qualified
 * it. Admission's checks run in the caller's transaction (src/tasks/admission/admission.ts); this
 * module only stores and reads rows.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { TargetSubject } from '../contracts/task/subject.js';
import { checkDigest, checkGenericId, checkRepositoryId } from './checks.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { prepared, type Authority } from './store.js';

export type ReceiptKind = 'imported' | 'server_run';

/** The subject and receipt an approval binds (every field compared exactly at landing). */
export interface ApprovalSubject extends TargetSubject {
  readonly repository: string;
  readonly profile: string;
  readonly receipt_kind: ReceiptKind;
  readonly receipt_digest: string;
}

export interface Approval extends ApprovalSubject {
  readonly approval_id: number;
  readonly approved_by: string;
  readonly approved_at_ms: number;
}

interface ApprovalRow {
  approval_id: number;
  repository: string;
  change_id: string;
  change_version: string;
  revision: string;
  context_digest: string;
  policy_epoch: string;
  profile: string;
  target: string;
  requirement_digest: string;
  receipt_kind: ReceiptKind;
  receipt_digest: string;
  approved_by: string;
  approved_at_ms: number;
}

const COLUMNS =
  'approval_id, repository, change_id, change_version, revision, context_digest, policy_epoch, profile, target, ' +
  'requirement_digest, receipt_kind, receipt_digest, approved_by, approved_at_ms';

function approvalOf(row: ApprovalRow): Approval {
  return { ...row, change_version: u64FromSql(row.change_version), policy_epoch: u64FromSql(row.policy_epoch) };
}

function checkSubject(subject: ApprovalSubject): void {
  checkRepositoryId(subject.repository);
  checkGenericId(subject.change_id, 'Change ID');
  checkGenericId(subject.profile, 'workflow profile');
  checkGenericId(subject.target, 'target name');
  checkDigest(subject.revision, 'revision');
  checkDigest(subject.context_digest, 'context digest');
  checkDigest(subject.requirement_digest, 'requirement digest');
  checkDigest(subject.receipt_digest, 'receipt digest');
}

/** The subject's values in column order: repository … receipt_digest, as the INSERT and the exact lookup name them. */
function subjectColumns(subject: ApprovalSubject): (string | number)[] {
  return [
    subject.repository,
    subject.change_id,
    u64ToSql(subject.change_version),
    subject.revision,
    subject.context_digest,
    u64ToSql(subject.policy_epoch),
    subject.profile,
    subject.target,
    subject.requirement_digest,
    subject.receipt_kind,
    subject.receipt_digest,
  ];
}

/**
 * Record the approval of `subject` in the caller's writer transaction; an identical approval
 * already recorded is returned as it is (created false), so approving twice changes nothing.
 */
export function recordApproval(
  auth: Authority,
  subject: ApprovalSubject,
  approvedBy: string,
  nowMs: number,
): { readonly approval: Approval; readonly created: boolean } {
  checkSubject(subject);
  const key = [
    subject.repository,
    subject.change_id,
    u64ToSql(subject.change_version),
    subject.context_digest,
    subject.profile,
    subject.target,
    subject.requirement_digest,
    subject.receipt_digest,
  ];
  const find = (): ApprovalRow | undefined =>
    prepared(
      auth,
      `SELECT ${COLUMNS} FROM approvals WHERE repository = ? AND change_id = ? AND change_version = ? AND ` +
        `context_digest = ? AND profile = ? AND target = ? AND requirement_digest = ? AND receipt_digest = ?`,
    ).get(...key) as ApprovalRow | undefined;
  const known = find();
  if (known !== undefined) return { approval: approvalOf(known), created: false };
  prepared(
    auth,
    `INSERT INTO approvals (repository, change_id, change_version, revision, context_digest, policy_epoch, profile,
      target, requirement_digest, receipt_kind, receipt_digest, approved_by, approved_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(...subjectColumns(subject), approvedBy, nowMs);
  const row = find();
  if (row === undefined) throw new AgentscmError('INTERNAL', 'the approval just recorded is not readable');
  return { approval: approvalOf(row), created: true };
}

/** The newest approval of the Change for a workflow profile and target (any version), or null. */
export function latestApproval(
  auth: Authority,
  repository: string,
  changeId: string,
  profile: string,
  target: string,
): Approval | null {
  checkRepositoryId(repository);
  checkGenericId(changeId, 'Change ID');
  const row = prepared(
    auth,
    `SELECT ${COLUMNS} FROM approvals WHERE repository = ? AND change_id = ? AND profile = ? AND target = ? ` +
      `ORDER BY approval_id DESC LIMIT 1`,
  ).get(repository, changeId, profile, target) as ApprovalRow | undefined;
  return row === undefined ? null : approvalOf(row);
}

/** The approval of exactly this subject and receipt, or null. */
export function findApproval(auth: Authority, subject: ApprovalSubject): Approval | null {
  checkSubject(subject);
  const row = prepared(
    auth,
    `SELECT ${COLUMNS} FROM approvals WHERE repository = ? AND change_id = ? AND change_version = ? AND ` +
      `revision = ? AND context_digest = ? AND policy_epoch = ? AND profile = ? AND target = ? AND ` +
      `requirement_digest = ? AND receipt_kind = ? AND receipt_digest = ? ORDER BY approval_id DESC LIMIT 1`,
  ).get(...subjectColumns(subject)) as ApprovalRow | undefined;
  return row === undefined ? null : approvalOf(row);
}
