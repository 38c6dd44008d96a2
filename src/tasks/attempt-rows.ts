/**
 * The retained attempt rows of the agent-task journal (row conventions: src/tasks/journal-rows.ts):
 * an attempt's exact canonical bytes, its state and lease, read back strictly decoded and checked.
 */
import type { CanonicalEncoding } from '../contracts/digest.js';
import { attemptDigest, workflowTaskAttemptDecoder, type WorkflowTaskAttempt } from '../contracts/task/attempt.js';
import { u64FromSql, u64ToSql } from '../native/sqlite.js';
import { journalStatement, type Journal } from '../workflows/journal.js';
import { inconsistent, remember, retainedSeqOf, taskOf, type RetainedTask, type TaskRow } from './journal-rows.js';

/** Attempts retained per task (each claim after a reconciliation adds one). */
export const MAX_ATTEMPTS_PER_TASK = 1024;

export type AttemptRowState = 'active' | 'finished' | 'cancelled' | 'replaced';

export interface RetainedAttempt {
  /** Retention order (rowid) of the attempt's task: the attempt's key is (task_seq, fence). */
  readonly task_seq: number;
  readonly attempt: WorkflowTaskAttempt;
  readonly digest: string;
  readonly state: AttemptRowState;
  readonly lease_expires_at_ms: number;
  readonly superseded_by_fence: bigint | null;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

interface AttemptRow {
  task_seq: number;
  attempt_id: string;
  attempt_digest: string;
  canonical: Buffer;
  state: AttemptRowState;
  lease_expires_at_ms: number;
  superseded_by_fence: string | null;
  created_at_ms: number;
  updated_at_ms: number;
}

const ATTEMPT_COLUMN_NAMES = [
  'task_seq',
  'attempt_id',
  'attempt_digest',
  'canonical',
  'state',
  'lease_expires_at_ms',
  'superseded_by_fence',
  'created_at_ms',
  'updated_at_ms',
] as const satisfies readonly (keyof AttemptRow)[];

const ATTEMPT_COLUMNS = ATTEMPT_COLUMN_NAMES.join(', ');

// The attempt columns of a join with agent_tasks, as a_<column> (findTaskWithAttempt).
const JOINED_ATTEMPT_COLUMNS = ATTEMPT_COLUMN_NAMES.map((column) => `a.${column} AS a_${column}`).join(', ');

/** Decoded attempt rows by their exact canonical bytes (see decodedTasks in journal-rows.ts). */
const decodedAttempts = new Map<
  string,
  { readonly bytes: Buffer; readonly attempt: WorkflowTaskAttempt; readonly digest: string }
>();

function attemptOf(row: AttemptRow): RetainedAttempt {
  const cached = decodedAttempts.get(row.attempt_id);
  let attempt: WorkflowTaskAttempt;
  let digest: string;
  if (cached !== undefined && cached.bytes.equals(row.canonical)) {
    ({ attempt, digest } = cached);
  } else {
    attempt = workflowTaskAttemptDecoder.decode(row.canonical);
    digest = attemptDigest(attempt);
    remember(decodedAttempts, row.attempt_id, { bytes: Buffer.from(row.canonical), attempt, digest });
  }
  if (digest !== row.attempt_digest || attempt.attempt_id !== row.attempt_id)
    inconsistent(`retained attempt ${row.attempt_id}`);
  return {
    task_seq: row.task_seq,
    attempt,
    digest,
    state: row.state,
    lease_expires_at_ms: row.lease_expires_at_ms,
    superseded_by_fence: row.superseded_by_fence === null ? null : u64FromSql(row.superseded_by_fence),
    created_at_ms: row.created_at_ms,
    updated_at_ms: row.updated_at_ms,
  };
}

/** The retained attempt `attemptId` of the task, or null. */
export function findAttempt(journal: Journal, task: RetainedTask, attemptId: string): RetainedAttempt | null {
  const row = journalStatement(
    journal,
    `SELECT ${ATTEMPT_COLUMNS} FROM agent_task_attempts WHERE task_seq = ? AND attempt_id = ?`,
  ).get(task.seq, attemptId) as AttemptRow | undefined;
  return row === undefined ? null : attemptOf(row);
}

/**
 * The retained task and, read by the same statement, its attempt `attemptId` (`attempt` is null
 * when the task has no attempt by that id); null when the task is not retained. The attempt row
 * is decoded and checked only when `attempt()` is called, after the caller checked the task.
 */
export function findTaskWithAttempt(
  journal: Journal,
  taskId: string,
  attemptId: string,
): { readonly task: RetainedTask; readonly attempt: (() => RetainedAttempt) | null } | null {
  const row = journalStatement(
    journal,
    `SELECT t.seq, t.task_id, t.task_digest, t.canonical, t.last_fence, ${JOINED_ATTEMPT_COLUMNS}
     FROM agent_tasks t LEFT JOIN agent_task_attempts a ON a.task_seq = t.seq AND a.attempt_id = ?
     WHERE t.task_id = ?`,
  ).get(attemptId, taskId) as (TaskRow & Record<`a_${keyof AttemptRow}`, unknown>) | undefined;
  if (row === undefined) return null;
  const task = taskOf(row);
  if (row.a_task_seq === null) return { task, attempt: null };
  const attemptRow: Record<string, unknown> = {};
  for (const column of ATTEMPT_COLUMN_NAMES) attemptRow[column] = row[`a_${column}`];
  return { task, attempt: () => attemptOf(attemptRow as unknown as AttemptRow) };
}

/** The task's attempt that is not replaced (at most one exists), or null. */
export function currentAttempt(journal: Journal, task: { readonly seq: number }): RetainedAttempt | null {
  const row = journalStatement(
    journal,
    `SELECT ${ATTEMPT_COLUMNS} FROM agent_task_attempts WHERE task_seq = ? AND superseded_by_fence IS NULL`,
  ).get(task.seq) as AttemptRow | undefined;
  return row === undefined ? null : attemptOf(row);
}

/** The current attempt of the task with this id (see currentAttempt), or null when the task is not retained. */
export function currentAttemptOf(journal: Journal, taskId: string): RetainedAttempt | null {
  const seq = retainedSeqOf(journal, taskId);
  return seq === null ? null : currentAttempt(journal, { seq });
}

/** The task's newest attempt by fence, or null. */
export function latestAttempt(journal: Journal, task: RetainedTask): RetainedAttempt | null {
  const row = journalStatement(
    journal,
    `SELECT ${ATTEMPT_COLUMNS} FROM agent_task_attempts WHERE task_seq = ? ORDER BY fence DESC LIMIT 1`,
  ).get(task.seq) as AttemptRow | undefined;
  return row === undefined ? null : attemptOf(row);
}

/** Number of retained attempts of a task. */
export function attemptCount(journal: Journal, task: RetainedTask): number {
  return (
    journalStatement(journal, 'SELECT count(*) AS n FROM agent_task_attempts WHERE task_seq = ?').get(task.seq) as {
      n: number;
    }
  ).n;
}

/** Whether the task already used an execution operation id (its attempt range, at most MAX_ATTEMPTS_PER_TASK rows). */
export function executionIdUsed(journal: Journal, task: RetainedTask, executionOperationId: string): boolean {
  return (
    journalStatement(
      journal,
      'SELECT 1 FROM agent_task_attempts WHERE task_seq = ? AND execution_operation_id = ?',
    ).get(task.seq, executionOperationId) !== undefined
  );
}

/**
 * Insert a fresh active attempt of a retained task (write transaction). `canonical` is the
 * attempt's canonical encoding, the bytes its digest covers (encodeAttempt).
 */
export function insertAttempt(
  journal: Journal,
  task: RetainedTask,
  attempt: WorkflowTaskAttempt,
  encoded: CanonicalEncoding,
  leaseExpiresAtMs: number,
  nowMs: number,
): void {
  const { canonical, digest } = encoded;
  remember(decodedAttempts, attempt.attempt_id, { bytes: canonical, attempt, digest });
  journalStatement(
    journal,
    `INSERT INTO agent_task_attempts (task_seq, fence, attempt_id, attempt_digest, canonical,
      execution_operation_id, owner_id, agent_id, state,
       lease_expires_at_ms, superseded_by_fence, created_at_ms, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, NULL, ?, ?)`,
  ).run(
    task.seq,
    u64ToSql(attempt.fence),
    attempt.attempt_id,
    digest,
    canonical,
    attempt.execution_operation_id,
    attempt.agent.owner_id,
    attempt.agent.agent_id,
    leaseExpiresAtMs,
    nowMs,
    nowMs,
  );
}

/**
 * Move an attempt from one state to another (write transaction); false when it was not in
 * `from`. Only the columns that change are written, so that a statement that does not
 * supersede leaves the one-current-attempt index untouched.
 */
export function updateAttempt(
  journal: Journal,
  retained: RetainedAttempt,
  from: readonly AttemptRowState[],
  change: {
    readonly state?: AttemptRowState;
    readonly lease_expires_at_ms?: number;
    readonly superseded_by_fence?: bigint;
  },
  nowMs: number,
): boolean {
  const columns: string[] = [];
  const values: (string | number)[] = [];
  if (change.state !== undefined) {
    columns.push('state = ?');
    values.push(change.state);
  }
  if (change.lease_expires_at_ms !== undefined) {
    columns.push('lease_expires_at_ms = ?');
    values.push(change.lease_expires_at_ms);
  }
  if (change.superseded_by_fence !== undefined) {
    columns.push('superseded_by_fence = ?');
    values.push(u64ToSql(change.superseded_by_fence));
  }
  const placeholders = from.map(() => '?').join(', ');
  const result = journalStatement(
    journal,
    `UPDATE agent_task_attempts SET ${columns.join(', ')}, updated_at_ms = ? WHERE task_seq = ? AND fence = ? AND ` +
      `state IN (${placeholders})`,
  ).run(...values, nowMs, retained.task_seq, u64ToSql(retained.attempt.fence), ...from);
  return result.changes === 1;
}

/** The task's attempts by fence, newest first (at most `limit`). */
export function listAttempts(journal: Journal, task: { readonly seq: number }, limit: number): RetainedAttempt[] {
  return (
    journalStatement(
      journal,
      `SELECT ${ATTEMPT_COLUMNS} FROM agent_task_attempts WHERE task_seq = ? ORDER BY fence DESC LIMIT ?`,
    ).all(task.seq, limit) as AttemptRow[]
  ).map(attemptOf);
}
