/**
 * The imported-transfer rows of the authority (`collector_transfers`, authority step 011), read
 * without their envelope bytes: what dependency checks and receipts need to know about an import;
 * and the diagnostic output tail a stored command transfer carries.
 */
import { decodeOutputTail, type CommandOutputTail } from '../../contracts/collector/output-tail.js';
import { readTransferEnvelope } from '../../contracts/collector/transfer.js';
import { isAgentscmError } from '../../contracts/errors.js';
import { prepared, type Authority } from '../../native/store.js';

/** An imported transfer as the authority retains it (without its envelope bytes). */
export interface RetainedTransferRow {
  readonly upload_request_id: string;
  readonly attempt_id: string;
  readonly task_id: string;
  readonly transfer_digest: string;
  readonly length: number;
  readonly outcome: 'passed' | 'failed' | 'unavailable' | 'uncertain';
}

const ROW = 'upload_request_id, attempt_id, task_id, transfer_digest, length, outcome';

/** The newest import of a task (its length, not its bytes), or null. */
export function findTransferOfTask(auth: Authority, taskId: string): RetainedTransferRow | null {
  const row = prepared(auth, `SELECT ${ROW} FROM collector_transfers WHERE task_id = ? ORDER BY seq DESC LIMIT 1`).get(
    taskId,
  ) as RetainedTransferRow | undefined;
  return row ?? null;
}

/** The import of an attempt, or null. */
export function findTransferOfAttempt(auth: Authority, attemptId: string): RetainedTransferRow | null {
  const row = prepared(auth, `SELECT ${ROW} FROM collector_transfers WHERE attempt_id = ?`).get(attemptId) as
    RetainedTransferRow | undefined;
  return row ?? null;
}

/**
 * The command_output_tail of a task's newest import when that import did not pass, or null (none
 * stored, a passing import, or a transfer without the record). Diagnostic only: the stored bytes
 * were verified at import; a record that no longer reads is answered as null, never as an error.
 */
export function failedOutputTailOfTask(auth: Authority, taskId: string): CommandOutputTail | null {
  const row = prepared(
    auth,
    'SELECT envelope, outcome FROM collector_transfers WHERE task_id = ? ORDER BY seq DESC LIMIT 1',
  ).get(taskId) as { envelope: Uint8Array; outcome: string } | undefined;
  if (row === undefined || row.outcome === 'passed') return null;
  try {
    const entry = readTransferEnvelope(row.envelope).records.find((r) => r.kind === 'command_output_tail');
    return entry === undefined ? null : decodeOutputTail(entry.bytes);
  } catch (error) {
    if (isAgentscmError(error)) return null;
    throw error;
  }
}
