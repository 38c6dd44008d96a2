/**
 * The refusals of offline receipt-bundle verification (src/tasks/admission/receipt-bundle-verify.ts):
 * each a RECEIPT_BUNDLE_* code with its hint and details (docs/errors.md "receipt bundles"); a
 * wrapped refusal names the check's own code as its cause.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { ReceiptBundleErrorCode } from '../../contracts/receipt/bundle.js';
import type { ReceiptCollectorEvidence, ReceiptTask } from '../../contracts/receipt/receipt-v2.js';

/** A receipt row whose evidence is a signed collector transfer. */
export type CollectorRow = ReceiptTask & ReceiptCollectorEvidence;

export function fail(
  code: ReceiptBundleErrorCode,
  message: string,
  hint: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): never {
  throw new AgentscmError(code, message, { hint, details, ...(cause === undefined ? {} : { cause }) });
}

export function wrapped(
  code: ReceiptBundleErrorCode,
  error: AgentscmError,
  prefix: string,
  hint: string,
  details: Record<string, unknown>,
): never {
  return fail(
    code,
    `${prefix}: [${error.code}] ${error.message}`,
    hint,
    { ...details, cause_code: error.code, ...(error.details === undefined ? {} : { cause_details: error.details }) },
    error,
  );
}

/** RECEIPT_BUNDLE_REQUEST_MISMATCH: the signed request (or review requests) of a row's transfer is not the row's. */
export function requestMismatch(row: CollectorRow, field: string, message: string, cause?: unknown): never {
  return fail(
    'RECEIPT_BUNDLE_REQUEST_MISMATCH',
    `the execution_request of task ${row.task_id}'s transfer ${message}`,
    "the signed ExecutionRequest must be the request of the receipt's exact subject, task and attempt",
    { task_id: row.task_id, field },
    cause,
  );
}
