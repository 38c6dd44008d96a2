/**
 * The agent-task rows of the workflow journal (spec "Phase-two local state machine": "bounded
 * logical-task, attempt, assertion and idempotency rows"). Every row keeps its exact canonical
 * bytes; reading a row decodes them strictly and checks them against the stored digest
 * (TASK_JOURNAL_INCONSISTENT otherwise), so status and retries return integrity-checked data.
 */
import type { CanonicalEncoding } from '../contracts/digest.js';
import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { asParsed, parseStrictJson } from '../contracts/json/strict-json.js';
import { attemptDigest, workflowTaskAttemptDecoder, type WorkflowTaskAttempt } from '../contracts/task/attempt.js';
import type { AgentRef } from '../contracts/task/common.js';
import { encodeAssertion, taskResultAssertionDecoder, type TaskResultAssertion } from '../contracts/task/result.js';
import { encodeTask, taskDigest, workflowTaskDecoder, type WorkflowTask } from '../contracts/task/task.js';
import { sha256Hex } from '../crypto/sha256.js';
import { u64FromSql, u64ToSql } from '../native/sqlite.js';
import { journalStatement, type Journal } from '../workflows/journal.js';

/** A retained task scan never reads more than this many identities (spec: at most 4096). */
export const MAX_SCOPE_SCAN = 4096;
/** Attempts retained per task (each claim after a reconciliation adds one). */
export const MAX_ATTEMPTS_PER_TASK = 1024;
/** Responses are bounded by the largest outcome we retain (a status-sized JSON document). */
export const MAX_RESPONSE_BYTES = 512 * 1024;

export type AttemptRowState = 'active' | 'finished' | 'cancelled' | 'replaced';
export type RequestKind = 'claim' | 'heartbeat' | 'cancel' | 'reconcile' | 'result';

export interface RetainedTask {
  readonly task: WorkflowTask;
  readonly digest: string;
  readonly last_fence: bigint;
  readonly seq: number;
}

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

export interface RetainedAssertion {
  readonly assertion: TaskResultAssertion;
  readonly observation_digest: string | null;
  readonly registration_id: string | null;
  readonly created_at_ms: number;
}

export interface RetainedRequest {
  readonly kind: RequestKind;
  readonly request_digest: string;
  readonly task_id: string;
  readonly attempt_id: string;
  readonly response: JsonValue;
  readonly response_bytes: Buffer;
}

function inconsistent(what: string): never {
  throw new AgentscmError('TASK_JOURNAL_INCONSISTENT', `${what} does not match its retained digest`, {
    hint: 'the journal was changed outside agentscm; inspect it before continuing',
  });
}

interface TaskRow {
  seq: number;
  task_id: string;
  task_digest: string;
  canonical: Buffer;
  last_fence: string;
}

/**
 * Decoded retained rows by their exact canonical bytes: a row whose bytes equal a cached entry
 * decodes to the same checked value, so the strict decode and digest run once per distinct row.
 */
const DECODED_LIMIT = 256;
const decodedTasks = new Map<
  string,
  { readonly bytes: Buffer; readonly task: WorkflowTask; readonly digest: string }
>();
const decodedAttempts = new Map<
  string,
  { readonly bytes: Buffer; readonly attempt: WorkflowTaskAttempt; readonly digest: string }
>();

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > DECODED_LIMIT) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
}

function taskOf(row: TaskRow): RetainedTask {
  const cached = decodedTasks.get(row.task_id);
  let task: WorkflowTask;
  let digest: string;
  if (cached !== undefined && cached.bytes.equals(row.canonical)) {
    ({ task, digest } = cached);
  } else {
    task = workflowTaskDecoder.decode(row.canonical);
    digest = taskDigest(task);
    remember(decodedTasks, row.task_id, { bytes: Buffer.from(row.canonical), task, digest });
  }
  if (digest !== row.task_digest || task.task_id !== row.task_id) inconsistent(`retained task ${row.task_id}`);
  return { task, digest, last_fence: u64FromSql(row.last_fence), seq: row.seq };
}

/** The retained task, or null. */
export function findRetainedTask(journal: Journal, taskId: string): RetainedTask | null {
  const row = journalStatement(
    journal,
    'SELECT seq, task_id, task_digest, canonical, last_fence FROM agent_tasks WHERE task_id = ?',
  ).get(taskId) as TaskRow | undefined;
  return row === undefined ? null : taskOf(row);
}

/**
 * The retained task of a derived task identity, or null when it is not retained; a retained row
 * with another digest under the same id is TASK_JOURNAL_INCONSISTENT (derivation is
 * deterministic, so only a change outside agentscm can cause it).
 */
export function findRetainedDerivedTask(journal: Journal, taskId: string, digest: string): RetainedTask | null {
  const retained = findRetainedTask(journal, taskId);
  if (retained !== null && retained.digest !== digest) inconsistent(`retained task ${taskId}`);
  return retained;
}

/**
 * Retain a derived task that the journal does not hold yet (write transaction), with
 * `lastFence` as its highest issued fence; its seq is the rowid SQLite assigns (one above the
 * newest). `canonical` is the task's canonical encoding when the caller already holds it (a
 * derivation encodes each task once to digest it).
 */
export function insertTask(
  journal: Journal,
  task: WorkflowTask,
  digest: string,
  lastFence: bigint,
  nowMs: number,
  canonicalBytes?: Buffer,
): RetainedTask {
  const canonical = canonicalBytes ?? encodeTask(task).canonical;
  // The next transition reads this row back: remember its decoding now (keyed by the exact
  // bytes, so a rolled-back insert leaves only a correct decoding of bytes never read).
  remember(decodedTasks, task.task_id, { bytes: canonical, task, digest });
  const { lastInsertRowid } = journalStatement(
    journal,
    `INSERT INTO agent_tasks (task_id, task_digest, repository, change_id, profile, step_id, canonical, last_fence, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    task.task_id,
    digest,
    task.subject.repository,
    task.subject.change_id,
    task.subject.profile,
    task.subject.step_id,
    canonical,
    u64ToSql(lastFence),
    nowMs,
  );
  return { task, digest, last_fence: lastFence, seq: Number(lastInsertRowid) };
}

/** Raise a task's highest issued fence (write transaction). */
export function setLastFence(journal: Journal, task: RetainedTask, fence: bigint): void {
  journalStatement(journal, 'UPDATE agent_tasks SET last_fence = ? WHERE seq = ? AND last_fence < ?').run(
    u64ToSql(fence),
    task.seq,
    u64ToSql(fence),
  );
}

/**
 * The bounded scan before a fresh claim (spec: at most MAX_SCOPE_SCAN older subjects), in one
 * statement over the other retained identities of the same repository, Change, profile and step
 * (`exceptSeq` is the task's own seq when it is retained): `exceeded` when there are more than
 * MAX_SCOPE_SCAN of them, and the newest of the newest MAX_SCOPE_SCAN whose attempt is unresolved
 * (active or cancelled), or null. The bound is written into the SQL: a LIMIT or OFFSET bound as a
 * parameter makes SQLite run these queries several times slower.
 */
export function olderUnresolvedTask(
  journal: Journal,
  task: WorkflowTask,
  exceptSeq: number | null,
): { readonly exceeded: boolean; readonly task_id: string | null } {
  const s = task.subject;
  const scope = [s.repository, s.change_id, s.profile, s.step_id, exceptSeq ?? -1] as const;
  const row = journalStatement(
    journal,
    `SELECT EXISTS (
         SELECT 1 FROM agent_tasks WHERE repository = ? AND change_id = ? AND profile = ? AND step_id = ? AND seq <> ? LIMIT 1 OFFSET ${MAX_SCOPE_SCAN}
       ) AS exceeded,
       (SELECT (SELECT task_id FROM agent_tasks WHERE seq = o.seq) FROM (
          SELECT seq FROM agent_tasks WHERE repository = ? AND change_id = ? AND profile = ? AND step_id = ? AND seq <> ? ORDER BY seq DESC LIMIT ${MAX_SCOPE_SCAN}
        ) o
        WHERE EXISTS (SELECT 1 FROM agent_task_attempts a WHERE a.task_seq = o.seq AND a.state IN ('active', 'cancelled'))
        ORDER BY o.seq DESC LIMIT 1) AS task_id`,
  ).get(...scope, ...scope) as { exceeded: number; task_id: string | null };
  return { exceeded: row.exceeded === 1, task_id: row.task_id };
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

/** The seq of a retained task (its index entry only, the row is not read), or null. */
export function retainedSeqOf(journal: Journal, taskId: string): number | null {
  const row = journalStatement(journal, 'SELECT seq FROM agent_tasks WHERE task_id = ?').get(taskId) as
    { seq: number } | undefined;
  return row === undefined ? null : row.seq;
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
    `INSERT INTO agent_task_attempts (task_seq, fence, attempt_id, attempt_digest, canonical, execution_operation_id, owner_id, agent_id, state,
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
    `UPDATE agent_task_attempts SET ${columns.join(', ')}, updated_at_ms = ? WHERE task_seq = ? AND fence = ? AND state IN (${placeholders})`,
  ).run(...values, nowMs, retained.task_seq, u64ToSql(retained.attempt.fence), ...from);
  return result.changes === 1;
}

interface AssertionRow {
  canonical: Buffer;
  canonical_sha256: string;
  observation_digest: string | null;
  registration_id: string | null;
  created_at_ms: number;
}

/** The retained assertion of an attempt, or null. */
export function findAssertion(journal: Journal, retained: RetainedAttempt): RetainedAssertion | null {
  const row = journalStatement(
    journal,
    'SELECT canonical, canonical_sha256, observation_digest, registration_id, created_at_ms FROM agent_task_assertions WHERE task_seq = ? AND fence = ?',
  ).get(retained.task_seq, u64ToSql(retained.attempt.fence)) as AssertionRow | undefined;
  if (row === undefined) return null;
  const attemptId = retained.attempt.attempt_id;
  if (sha256Hex(row.canonical) !== row.canonical_sha256) inconsistent(`retained assertion of attempt ${attemptId}`);
  const assertion = taskResultAssertionDecoder.decode(row.canonical);
  if (assertion.attempt_id !== attemptId) inconsistent(`retained assertion of attempt ${attemptId}`);
  return {
    assertion,
    observation_digest: row.observation_digest,
    registration_id: row.registration_id,
    created_at_ms: row.created_at_ms,
  };
}

/** Retain a validated assertion of an attempt (write transaction). */
export function insertAssertion(
  journal: Journal,
  retained: RetainedAttempt,
  assertion: TaskResultAssertion,
  observationDigest: string | null,
  nowMs: number,
): void {
  const { canonical } = encodeAssertion(assertion);
  journalStatement(
    journal,
    `INSERT INTO agent_task_assertions (task_seq, fence, attempt_id, task_id, request_id, trust_class, outcome, canonical, canonical_sha256, observation_digest, registration_id, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    retained.task_seq,
    u64ToSql(retained.attempt.fence),
    assertion.attempt_id,
    assertion.task_id,
    assertion.request_id,
    assertion.trust_class,
    assertion.outcome,
    canonical,
    sha256Hex(canonical),
    observationDigest,
    assertion.executor?.registration_id ?? null,
    nowMs,
  );
}

interface RequestRow {
  kind: RequestKind;
  request_digest: string;
  task_id: string;
  attempt_id: string;
  response: Buffer;
  response_sha256: string;
}

/** The retained request of (owner, agent, request_id), or null. */
export function findRequest(journal: Journal, actor: AgentRef, requestId: string): RetainedRequest | null {
  const row = journalStatement(
    journal,
    'SELECT kind, request_digest, task_id, attempt_id, response, response_sha256 FROM agent_task_requests WHERE owner_id = ? AND agent_id = ? AND request_id = ?',
  ).get(actor.owner_id, actor.agent_id, requestId) as RequestRow | undefined;
  if (row === undefined) return null;
  if (sha256Hex(row.response) !== row.response_sha256) inconsistent(`retained outcome of request ${requestId}`);
  return {
    ...row,
    response: parseStrictJson(row.response, { maxBytes: MAX_RESPONSE_BYTES }),
    response_bytes: row.response,
  };
}

/** Bind a request id to its kind, digest and committed outcome (write transaction); returns the outcome as a retry will read it. */
export function insertRequest(
  journal: Journal,
  actor: AgentRef,
  requestId: string,
  kind: RequestKind,
  requestDigest: string,
  taskId: string,
  attemptId: string,
  response: JsonValue,
  nowMs: number,
): JsonValue {
  const bytes = encodeCanonical(response);
  // A retained response is read back with this bound (findRequest): never store one it would refuse.
  if (bytes.byteLength > MAX_RESPONSE_BYTES)
    throw new AgentscmError(
      'INTERNAL',
      `a task response encodes to ${bytes.byteLength} bytes, more than ${MAX_RESPONSE_BYTES}`,
    );
  journalStatement(
    journal,
    `INSERT INTO agent_task_requests (owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id, response, response_sha256, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    actor.owner_id,
    actor.agent_id,
    requestId,
    kind,
    requestDigest,
    taskId,
    attemptId,
    bytes,
    sha256Hex(bytes),
    nowMs,
  );
  // A retry answers with the value parsed from these bytes (findRequest); the first answer is the
  // same value, built without parsing what was just encoded.
  return asParsed(response);
}

/** One page of retained tasks of a repository (optionally one Change), in retention order after `afterSeq` (docs/dashboard.md). */
export function listRetainedTasks(
  journal: Journal,
  query: {
    readonly repository: string;
    readonly change: string | null;
    readonly afterSeq: number;
    readonly limit: number;
  },
): RetainedTask[] {
  const rows = (
    query.change === null
      ? journalStatement(
          journal,
          'SELECT seq, task_id, task_digest, canonical, last_fence FROM agent_tasks WHERE repository = ? AND seq > ? ORDER BY seq LIMIT ?',
        ).all(query.repository, query.afterSeq, query.limit)
      : journalStatement(
          journal,
          'SELECT seq, task_id, task_digest, canonical, last_fence FROM agent_tasks WHERE repository = ? AND change_id = ? AND seq > ? ORDER BY seq LIMIT ?',
        ).all(query.repository, query.change, query.afterSeq, query.limit)
  ) as TaskRow[];
  return rows.map(taskOf);
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
