/**
 * Receipts of completed server-executed runs in the authority
 * (docs/admission.md "The server-executed path": the optional required-target loop revalidates the
 * graph and copies an exact-subject receipt into native authority). One immutable row per receipt
 * digest, with the exact subject it binds and its canonical bytes. What the receipt says and when
 * it may be written is decided by src/tasks/admission/decision.ts; this module only stores and
 * reads rows, in the caller's transaction.
 */
import { checkDigest, checkGenericId, checkRepositoryId } from './checks.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { prepared, type Authority } from './store.js';

export interface ServerRunReceiptRow {
  readonly receipt_digest: string;
  readonly repository: string;
  readonly change_id: string;
  readonly change_version: bigint;
  readonly revision: string;
  readonly context_digest: string;
  readonly policy_epoch: bigint;
  readonly target: string;
  readonly requirement_digest: string;
  readonly plan_digest: string;
  readonly run_id: string;
  readonly state: 'completed' | 'completed_with_omissions';
  /** The receipt document's canonical bytes. */
  readonly receipt: Buffer;
  readonly recorded_at_ms: number;
}

type SqlRow = Omit<ServerRunReceiptRow, 'change_version' | 'policy_epoch'> & {
  change_version: string;
  policy_epoch: string;
};

const COLUMNS =
  'receipt_digest, repository, change_id, change_version, revision, context_digest, policy_epoch, target, ' +
  'requirement_digest, plan_digest, run_id, state, receipt, recorded_at_ms';

function rowOf(row: SqlRow): ServerRunReceiptRow {
  return { ...row, change_version: u64FromSql(row.change_version), policy_epoch: u64FromSql(row.policy_epoch) };
}

/** The row of a receipt digest, or null. */
export function findServerRunReceipt(auth: Authority, receiptDigest: string): ServerRunReceiptRow | null {
  const row = prepared(auth, `SELECT ${COLUMNS} FROM server_run_receipts WHERE receipt_digest = ?`).get(
    receiptDigest,
  ) as SqlRow | undefined;
  return row === undefined ? null : rowOf(row);
}

/** The receipts recorded for a Change version, oldest first. */
export function listServerRunReceipts(
  auth: Authority,
  repository: string,
  changeId: string,
  changeVersion: bigint,
): ServerRunReceiptRow[] {
  const rows = prepared(
    auth,
    `SELECT ${COLUMNS} FROM server_run_receipts WHERE repository = ? AND change_id = ? AND change_version = ? ` +
      `ORDER BY recorded_at_ms, receipt_digest`,
  ).all(repository, changeId, u64ToSql(changeVersion)) as SqlRow[];
  return rows.map(rowOf);
}

/** Record a receipt in the caller's writer transaction; the same digest again records nothing (`created: false`). */
export function recordServerRunReceipt(
  auth: Authority,
  row: ServerRunReceiptRow,
): { readonly row: ServerRunReceiptRow; readonly created: boolean } {
  checkDigest(row.receipt_digest, 'receipt digest');
  checkRepositoryId(row.repository);
  checkGenericId(row.change_id, 'Change id');
  checkDigest(row.context_digest, 'context digest');
  const existing = findServerRunReceipt(auth, row.receipt_digest);
  if (existing !== null) return { row: existing, created: false };
  prepared(auth, `INSERT INTO server_run_receipts (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    row.receipt_digest,
    row.repository,
    row.change_id,
    u64ToSql(row.change_version),
    row.revision,
    row.context_digest,
    u64ToSql(row.policy_epoch),
    row.target,
    row.requirement_digest,
    row.plan_digest,
    row.run_id,
    row.state,
    row.receipt,
    row.recorded_at_ms,
  );
  return { row, created: true };
}
