/**
 * The imported-transfer rows of the journal (`collector_transfers`, schema step 6), read without
 * their envelope bytes: what dependency checks and receipts need to know about an import.
 */
import { journalStatement, type Journal } from '../../workflows/journal.js';

/** An imported transfer as the journal retains it (without its envelope bytes). */
export interface RetainedTransferRow {
  readonly upload_request_id: string;
  readonly attempt_id: string;
  readonly task_id: string;
  readonly transfer_digest: string;
  readonly length: number;
  readonly outcome: 'passed' | 'failed' | 'unavailable' | 'uncertain';
}

/** The newest import of a task (its length, not its bytes), or null. */
export function findTransferOfTask(journal: Journal, taskId: string): RetainedTransferRow | null {
  const row = journalStatement(
    journal,
    'SELECT upload_request_id, attempt_id, task_id, transfer_digest, length, outcome FROM collector_transfers WHERE task_id = ? ORDER BY seq DESC LIMIT 1',
  ).get(taskId) as RetainedTransferRow | undefined;
  return row ?? null;
}

/** The import of an attempt, or null. */
export function findTransferOfAttempt(journal: Journal, attemptId: string): RetainedTransferRow | null {
  const row = journalStatement(
    journal,
    'SELECT upload_request_id, attempt_id, task_id, transfer_digest, length, outcome FROM collector_transfers WHERE attempt_id = ?',
  ).get(attemptId) as RetainedTransferRow | undefined;
  return row ?? null;
}
