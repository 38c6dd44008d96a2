/**
 * The retained result assertions of attempts (row conventions: src/tasks/journal-rows.ts): the
 * assertion's canonical bytes and their SHA-256, read back strictly decoded and checked.
 */
import { encodeAssertion, taskResultAssertionDecoder, type TaskResultAssertion } from '../contracts/task/result.js';
import { sha256Hex } from '../crypto/sha256.js';
import { u64ToSql } from '../native/sqlite.js';
import { journalStatement, type Journal } from '../workflows/journal.js';
import type { RetainedAttempt } from './attempt-rows.js';
import { inconsistent } from './journal-rows.js';

export interface RetainedAssertion {
  readonly assertion: TaskResultAssertion;
  readonly observation_digest: string | null;
  readonly registration_id: string | null;
  readonly created_at_ms: number;
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
    'SELECT canonical, canonical_sha256, observation_digest, registration_id, created_at_ms FROM ' +
      'agent_task_assertions WHERE task_seq = ? AND fence = ?',
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
    `INSERT INTO agent_task_assertions (task_seq, fence, attempt_id, task_id, request_id, trust_class, outcome,
      canonical, canonical_sha256, observation_digest, registration_id, created_at_ms)
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
