/**
 * The retained requests of the agent-task journal (row conventions: src/tasks/journal-rows.ts):
 * each request id bound to its kind, digest and committed outcome, the bytes an exact retry
 * answers with.
 */
import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { asParsed, parseStrictJson } from '../contracts/json/strict-json.js';
import type { AgentRef } from '../contracts/task/common.js';
import { sha256Hex } from '../crypto/sha256.js';
import { journalStatement, type Journal } from '../workflows/journal.js';
import { inconsistent } from './journal-rows.js';

/** Responses are bounded by the largest outcome we retain (a status-sized JSON document). */
export const MAX_RESPONSE_BYTES = 512 * 1024;

export type RequestKind = 'claim' | 'heartbeat' | 'cancel' | 'reconcile' | 'result';

export interface RetainedRequest {
  readonly kind: RequestKind;
  readonly request_digest: string;
  readonly task_id: string;
  readonly attempt_id: string;
  readonly response: JsonValue;
  readonly response_bytes: Buffer;
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
    'SELECT kind, request_digest, task_id, attempt_id, response, response_sha256 FROM agent_task_requests WHERE ' +
      'owner_id = ? AND agent_id = ? AND request_id = ?',
  ).get(actor.owner_id, actor.agent_id, requestId) as RequestRow | undefined;
  if (row === undefined) return null;
  if (sha256Hex(row.response) !== row.response_sha256) inconsistent(`retained outcome of request ${requestId}`);
  return {
    ...row,
    response: parseStrictJson(row.response, { maxBytes: MAX_RESPONSE_BYTES }),
    response_bytes: row.response,
  };
}

/**
 * Bind a request id to its kind, digest and committed outcome (write transaction); returns the outcome as a retry will
 * read it.
 */
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
    `INSERT INTO agent_task_requests (owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id,
      response, response_sha256, created_at_ms)
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
