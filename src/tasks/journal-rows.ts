/**
 * The agent-task rows of the workflow journal (spec "Phase-two local state machine": "bounded
 * logical-task, attempt, assertion and idempotency rows"). Every row keeps its exact canonical
 * bytes; reading a row decodes them strictly and checks them against the stored digest
 * (TASK_JOURNAL_INCONSISTENT otherwise), so status and retries return integrity-checked data.
 */
import { encodeCanonical } from '../contracts/canonical-json.js';
import { AgentscmError } from '../contracts/errors.js';
import type { JsonValue } from '../contracts/json-value.js';
import { parseStrictJson } from '../contracts/strict-json.js';
import type { AgentRef } from '../contracts/task-common.js';
import type { WorkflowTaskAttempt } from '../contracts/task-attempt.js';
import { attemptDigest, attemptToJson, workflowTaskAttemptDecoder } from '../contracts/task-attempt.js';
import type { TaskResultAssertion } from '../contracts/task-result.js';
import { assertionToJson, taskResultAssertionDecoder } from '../contracts/task-result.js';
import type { WorkflowTask } from '../contracts/task.js';
import { encodeTask, taskDigest, workflowTaskDecoder } from '../contracts/task.js';
import { sha256Hex } from '../crypto/sha256.js';
import { u64FromSql, u64ToSql } from '../native/sqlite.js';
import type { Journal } from '../workflows/journal.js';
import { journalStatement } from '../workflows/journal.js';

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
  task_id: string;
  task_digest: string;
  canonical: Buffer;
  last_fence: string;
  seq: number;
}

/**
 * Decoded retained rows by their exact canonical bytes: a row whose bytes equal a cached entry
 * decodes to the same checked value, so the strict decode and digest run once per distinct row.
 */
const DECODED_LIMIT = 256;
const decodedTasks = new Map<string, { readonly bytes: Buffer; readonly task: WorkflowTask; readonly digest: string }>();
const decodedAttempts = new Map<string, { readonly bytes: Buffer; readonly attempt: WorkflowTaskAttempt; readonly digest: string }>();

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
  const row = journalStatement(journal, 'SELECT task_id, task_digest, canonical, last_fence, seq FROM agent_tasks WHERE task_id = ?').get(taskId) as TaskRow | undefined;
  return row === undefined ? null : taskOf(row);
}

/**
 * Retain a derived task (write transaction); an existing identical row is kept as is.
 * `canonical` is the task's canonical encoding when the caller already holds it (a derivation
 * encodes each task once to digest it).
 */
export function retainTask(journal: Journal, task: WorkflowTask, digest: string, nowMs: number, canonicalBytes?: Buffer): RetainedTask {
  const existing = findRetainedTask(journal, task.task_id);
  if (existing !== null) {
    if (existing.digest !== digest) inconsistent(`retained task ${task.task_id}`);
    return existing;
  }
  const seq = (journalStatement(journal, 'SELECT coalesce(max(seq), 0) + 1 AS next FROM agent_tasks').get() as { next: number }).next;
  const canonical = canonicalBytes ?? encodeTask(task).canonical;
  // The next transition reads this row back: remember its decoding now (keyed by the exact
  // bytes, so a rolled-back insert leaves only a correct decoding of bytes never read).
  remember(decodedTasks, task.task_id, { bytes: canonical, task, digest });
  journalStatement(
    journal,
    `INSERT INTO agent_tasks (task_id, task_digest, repository, change_id, profile, step_id, canonical, last_fence, seq, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(task.task_id, digest, task.subject.repository, task.subject.change_id, task.subject.profile, task.subject.step_id, canonical, u64ToSql(0n), seq, nowMs);
  return { task, digest, last_fence: 0n, seq };
}

/** Raise a task's highest issued fence (write transaction). */
export function setLastFence(journal: Journal, taskId: string, fence: bigint): void {
  journalStatement(journal, 'UPDATE agent_tasks SET last_fence = ? WHERE task_id = ? AND last_fence < ?').run(u64ToSql(fence), taskId, u64ToSql(fence));
}

/**
 * The bounded scan before a fresh claim (spec: at most MAX_SCOPE_SCAN older subjects), in two
 * indexed queries over the older retained identities of the same repository, Change, profile
 * and step: `exceeded` when there are more than MAX_SCOPE_SCAN of them, and the newest of the
 * newest MAX_SCOPE_SCAN whose attempt is unresolved (active or cancelled), or null.
 */
export function olderUnresolvedTask(journal: Journal, task: WorkflowTask): { readonly exceeded: boolean; readonly task_id: string | null } {
  const s = task.subject;
  const scope = [s.repository, s.change_id, s.profile, s.step_id, task.task_id] as const;
  const older = (
    journalStatement(
      journal,
      'SELECT count(*) AS n FROM (SELECT 1 FROM agent_tasks WHERE repository = ? AND change_id = ? AND profile = ? AND step_id = ? AND task_id <> ? LIMIT ?)',
    ).get(...scope, MAX_SCOPE_SCAN + 1) as { n: number }
  ).n;
  if (older === 0) return { exceeded: false, task_id: null };
  const row = journalStatement(
    journal,
    `SELECT t.task_id FROM (
       SELECT task_id, seq FROM agent_tasks WHERE repository = ? AND change_id = ? AND profile = ? AND step_id = ? AND task_id <> ? ORDER BY seq DESC LIMIT ?
     ) t
     WHERE EXISTS (SELECT 1 FROM agent_task_attempts a WHERE a.task_id = t.task_id AND a.state IN ('active', 'cancelled'))
     ORDER BY t.seq DESC LIMIT 1`,
  ).get(...scope, MAX_SCOPE_SCAN) as { task_id: string } | undefined;
  return { exceeded: older > MAX_SCOPE_SCAN, task_id: row?.task_id ?? null };
}

interface AttemptRow {
  attempt_id: string;
  attempt_digest: string;
  canonical: Buffer;
  state: AttemptRowState;
  lease_expires_at_ms: number;
  superseded_by_fence: string | null;
  created_at_ms: number;
  updated_at_ms: number;
}

const ATTEMPT_COLUMNS = 'attempt_id, attempt_digest, canonical, state, lease_expires_at_ms, superseded_by_fence, created_at_ms, updated_at_ms';

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
  if (digest !== row.attempt_digest || attempt.attempt_id !== row.attempt_id) inconsistent(`retained attempt ${row.attempt_id}`);
  return {
    attempt,
    digest,
    state: row.state,
    lease_expires_at_ms: row.lease_expires_at_ms,
    superseded_by_fence: row.superseded_by_fence === null ? null : u64FromSql(row.superseded_by_fence),
    created_at_ms: row.created_at_ms,
    updated_at_ms: row.updated_at_ms,
  };
}

/** The retained attempt, or null. */
export function findAttempt(journal: Journal, attemptId: string): RetainedAttempt | null {
  const row = journalStatement(journal, `SELECT ${ATTEMPT_COLUMNS} FROM agent_task_attempts WHERE attempt_id = ?`).get(attemptId) as AttemptRow | undefined;
  return row === undefined ? null : attemptOf(row);
}

/** The task's attempt that is not replaced (at most one exists), or null. */
export function currentAttempt(journal: Journal, taskId: string): RetainedAttempt | null {
  const row = journalStatement(journal, `SELECT ${ATTEMPT_COLUMNS} FROM agent_task_attempts WHERE task_id = ? AND state <> 'replaced'`).get(taskId) as AttemptRow | undefined;
  return row === undefined ? null : attemptOf(row);
}

/** The task's newest attempt by fence, or null. */
export function latestAttempt(journal: Journal, taskId: string): RetainedAttempt | null {
  const row = journalStatement(journal, `SELECT ${ATTEMPT_COLUMNS} FROM agent_task_attempts WHERE task_id = ? ORDER BY fence DESC LIMIT 1`).get(taskId) as AttemptRow | undefined;
  return row === undefined ? null : attemptOf(row);
}

/** Number of retained attempts of a task. */
export function attemptCount(journal: Journal, taskId: string): number {
  return (journalStatement(journal, 'SELECT count(*) AS n FROM agent_task_attempts WHERE task_id = ?').get(taskId) as { n: number }).n;
}

/** Whether the task already used an execution operation id. */
export function executionIdUsed(journal: Journal, taskId: string, executionOperationId: string): boolean {
  return journalStatement(journal, 'SELECT 1 FROM agent_task_attempts WHERE task_id = ? AND execution_operation_id = ?').get(taskId, executionOperationId) !== undefined;
}

/** Insert a fresh active attempt (write transaction). */
export function insertAttempt(journal: Journal, attempt: WorkflowTaskAttempt, digest: string, leaseExpiresAtMs: number, nowMs: number): void {
  const canonical = Buffer.from(encodeCanonical(attemptToJson(attempt)));
  remember(decodedAttempts, attempt.attempt_id, { bytes: canonical, attempt, digest });
  journalStatement(
    journal,
    `INSERT INTO agent_task_attempts (attempt_id, task_id, attempt_digest, canonical, fence, execution_operation_id, owner_id, agent_id, state,
       lease_expires_at_ms, superseded_by_fence, created_at_ms, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, NULL, ?, ?)`,
  ).run(
    attempt.attempt_id,
    attempt.task_id,
    digest,
    canonical,
    u64ToSql(attempt.fence),
    attempt.execution_operation_id,
    attempt.agent.owner_id,
    attempt.agent.agent_id,
    leaseExpiresAtMs,
    nowMs,
    nowMs,
  );
}

/** Move an attempt from one state to another (write transaction); false when it was not in `from`. */
export function updateAttempt(
  journal: Journal,
  attemptId: string,
  from: readonly AttemptRowState[],
  change: { readonly state?: AttemptRowState; readonly lease_expires_at_ms?: number; readonly superseded_by_fence?: bigint },
  nowMs: number,
): boolean {
  const placeholders = from.map(() => '?').join(', ');
  const result = journalStatement(
    journal,
    `UPDATE agent_task_attempts SET state = coalesce(?, state), lease_expires_at_ms = coalesce(?, lease_expires_at_ms),
       superseded_by_fence = coalesce(?, superseded_by_fence), updated_at_ms = ?
     WHERE attempt_id = ? AND state IN (${placeholders})`,
  ).run(change.state ?? null, change.lease_expires_at_ms ?? null, change.superseded_by_fence === undefined ? null : u64ToSql(change.superseded_by_fence), nowMs, attemptId, ...from);
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
export function findAssertion(journal: Journal, attemptId: string): RetainedAssertion | null {
  const row = journalStatement(journal, 'SELECT canonical, canonical_sha256, observation_digest, registration_id, created_at_ms FROM agent_task_assertions WHERE attempt_id = ?').get(attemptId) as
    | AssertionRow
    | undefined;
  if (row === undefined) return null;
  if (sha256Hex(row.canonical) !== row.canonical_sha256) inconsistent(`retained assertion of attempt ${attemptId}`);
  const assertion = taskResultAssertionDecoder.decode(row.canonical);
  return { assertion, observation_digest: row.observation_digest, registration_id: row.registration_id, created_at_ms: row.created_at_ms };
}

/** Retain a validated assertion (write transaction). */
export function insertAssertion(journal: Journal, assertion: TaskResultAssertion, observationDigest: string | null, nowMs: number): void {
  const canonical = Buffer.from(encodeCanonical(assertionToJson(assertion)));
  journalStatement(
    journal,
    `INSERT INTO agent_task_assertions (attempt_id, task_id, request_id, trust_class, outcome, canonical, canonical_sha256, observation_digest, registration_id, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
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
  return { ...row, response: parseStrictJson(row.response, { maxBytes: MAX_RESPONSE_BYTES }), response_bytes: row.response };
}

/** Bind a request id to its kind, digest and committed outcome (write transaction); returns the outcome as a retry will read it. */
export function insertRequest(journal: Journal, actor: AgentRef, requestId: string, kind: RequestKind, requestDigest: string, taskId: string, attemptId: string, response: JsonValue, nowMs: number): JsonValue {
  const bytes = Buffer.from(encodeCanonical(response));
  journalStatement(
    journal,
    `INSERT INTO agent_task_requests (owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id, response, response_sha256, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(actor.owner_id, actor.agent_id, requestId, kind, requestDigest, taskId, attemptId, bytes, sha256Hex(bytes), nowMs);
  return parseStrictJson(bytes, { maxBytes: MAX_RESPONSE_BYTES });
}
