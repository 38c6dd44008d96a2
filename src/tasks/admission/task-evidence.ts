/**
 * The task evidence of the agent-owned path, the first of admission's checks (docs/admission.md
 * "What is rechecked, and why"): every task's state and the failure keeping it from qualifying,
 * the live origin grant and current executor registration of every imported task, and the
 * retained v2 receipt rebuilt from the retained transfers (envelopes checked as `EnvelopeCheck`
 * says). `decideSubject` (./decision.ts) builds the qualification answer and admission's refusal
 * from it.
 */
import { domainDigest, DOMAINS } from '../../contracts/digest.js';
import { AgentscmError, ERROR_CODES, EXIT } from '../../contracts/errors.js';
import { encodeReceiptV2 } from '../../contracts/receipt/receipt-v2.js';
import {
  type QualificationFailure,
  type QualificationFailureCode,
  type QualificationNext,
  type QualificationTaskState,
} from '../../contracts/task/qualification.js';
import { prepared, type Authority } from '../../native/store.js';
import type { Journal } from '../../workflows/journal.js';
import { assessCapability } from '../../workflows/require-capability.js';
import { checkSourcePaths } from '../../workflows/source-paths.js';
import { findAssertion } from '../assertion-rows.js';
import { currentAttempt } from '../attempt-rows.js';
import { collectorAuthorizationHolds, findCollectorAttempt, type CollectorAttemptRow } from '../collector/attempts.js';
import { buildReceipt, findReceipt, findTransferOfTask, readRetainedEnvelope } from '../collector/receipts.js';
import type { DerivedSubject, DerivedTask } from '../derive.js';
import { olderUnresolvedTaskId, retainedSeqOf } from '../journal-rows.js';
import { firstIncompleteDependency, observeAttempt } from '../views.js';

/**
 * How the retained envelopes are checked when the receipt is rebuilt: `'signature'` (admission)
 * verifies each one's signature again under its registration's key; `'digest'` (the advisory
 * qualification answer) checks each one's stored length and SHA-256 — the transfer digest the
 * receipt names — without re-verifying the signature.
 */
export type EnvelopeCheck = 'signature' | 'digest';

/**
 * What one task contributes: its state, the failure keeping it from qualifying (or null) and the next step it offers
 * (or null).
 */
export interface TaskEvaluation {
  readonly state: QualificationTaskState;
  readonly failure: QualificationFailureCode | null;
  readonly next: QualificationNext | null;
}

/** The outcome of an attempt's validated import, or null when it has none (one indexed read). */
function importedOutcome(auth: Authority, attemptId: string): string | null {
  const row = prepared(auth, 'SELECT outcome FROM collector_transfers WHERE attempt_id = ?').get(attemptId) as
    { outcome: string } | undefined;
  return row === undefined ? null : row.outcome;
}

/** The collector claims of one snapshot by attempt id, each read and its descriptor decoded once. */
export type Claims = (attemptId: string) => CollectorAttemptRow | null;

export function claimsOf(journal: Journal | null): Claims {
  const read = new Map<string, CollectorAttemptRow | null>();
  return (attemptId) => {
    if (journal === null) return null;
    if (!read.has(attemptId)) read.set(attemptId, findCollectorAttempt(journal, attemptId));
    return read.get(attemptId) ?? null;
  };
}

const ok = (state: QualificationTaskState): TaskEvaluation => ({ state, failure: null, next: null });
const failing = (
  state: QualificationTaskState,
  failure: QualificationFailureCode,
  next: QualificationNext | null = null,
): TaskEvaluation => ({ state, failure, next });

/**
 * A task an operator-enrolled collector finishes: a command task, or a review task collected
 * under a finite-review profile (an imported review record that is not `passed` is
 * `review_not_passed`).
 */
function evaluateCollected(
  auth: Authority,
  journal: Journal | null,
  claims: Claims,
  derived: DerivedSubject,
  entry: DerivedTask,
  nowMs: number,
): TaskEvaluation {
  const taskId = entry.task.task_id;
  const seq = journal === null ? null : retainedSeqOf(journal, taskId);
  if (journal !== null) {
    // The claim path refuses a fresh claim while an older subject's attempt of the same Change,
    // profile and step is unresolved: reconcile that one first.
    const older = olderUnresolvedTaskId(journal, entry.task, seq);
    if (older !== null)
      return failing('blocked', 'prior_subject_unresolved', { operation: 'reconcile', task_id: older });
  }
  const attempt = journal === null || seq === null ? null : currentAttempt(journal, { seq });
  if (journal === null || attempt === null) {
    if (firstIncompleteDependency(auth, journal, derived, entry) !== null)
      return failing('blocked', 'dependency_incomplete');
    return failing('pending', 'task_pending', { operation: 'collector_claim', task_id: taskId });
  }
  const claim = claims(attempt.attempt.attempt_id);
  const view = observeAttempt(attempt, nowMs);
  if (view === 'expired' || view === 'cancelled')
    return failing('uncertain', 'attempt_uncertain', { operation: 'reconcile', task_id: taskId });
  if (view === 'leased')
    return failing(
      'claimed',
      claim !== null && !collectorAuthorizationHolds(auth, claim) ? 'authorization_changed' : 'attempt_in_progress',
    );
  if (view === 'replaced') return failing('pending', 'task_pending', { operation: 'collector_claim', task_id: taskId });
  // Finished: by its validated import (a collector attempt) or by a retained result assertion.
  const outcome = importedOutcome(auth, attempt.attempt.attempt_id);
  if (outcome !== null && claim !== null) {
    if (outcome !== 'passed')
      return failing('failed', entry.step.action.kind === 'review' ? 'review_not_passed' : 'collector_not_passed');
    if (!collectorAuthorizationHolds(auth, claim)) return failing('blocked', 'authorization_changed');
    return ok('succeeded');
  }
  const assertion = findAssertion(journal, attempt);
  if (assertion !== null && assertion.assertion.outcome !== 'passed') return failing('failed', 'result_failed');
  // An agent's passing assertion records a claim, not evidence: it never qualifies.
  return failing('blocked', 'result_not_qualifying');
}

export function evaluateTask(
  auth: Authority,
  journal: Journal | null,
  claims: Claims,
  derived: DerivedSubject,
  entry: DerivedTask,
  nowMs: number,
): TaskEvaluation {
  const action = entry.step.action;
  if (action.kind === 'source_paths') {
    return checkSourcePaths(auth, derived.base.repository, derived.base.revision, action.expectations).state ===
      'succeeded'
      ? ok('succeeded')
      : failing('failed', 'source_paths_failed');
  }
  if (action.kind === 'require_capability')
    return assessCapability(action.capability).available
      ? ok('succeeded')
      : failing('blocked', 'capability_unavailable');
  return evaluateCollected(auth, journal, claims, derived, entry, nowMs);
}

/**
 * The `'digest'` check of every retained transfer the subject's command tasks name: the claim
 * exists, its origin grant and executor registration pass the live checks (optional tasks
 * included, since the receipt names them), and the envelope has its stored length and digest.
 */
function retainedTransfersHold(auth: Authority, journal: Journal, claims: Claims, derived: DerivedSubject): boolean {
  for (const entry of derived.tasks) {
    if (entry.step.action.kind !== 'command' && entry.step.action.kind !== 'review') continue;
    const transfer = findTransferOfTask(auth, entry.task.task_id);
    if (transfer === null) continue;
    const claim = claims(transfer.attempt_id);
    if (claim === null || !collectorAuthorizationHolds(auth, claim)) return false;
    readRetainedEnvelope(auth, transfer);
  }
  return true;
}

/**
 * Whether the retained receipt still holds: rebuilding it now from the retained transfers
 * (source_paths recomputed; capabilities assessed; each envelope checked as `envelopes` says)
 * gives exactly the stored canonical bytes, and those bytes have the stored digest.
 */
function receiptHolds(
  auth: Authority,
  journal: Journal,
  claims: Claims,
  derived: DerivedSubject,
  stored: { readonly receipt_digest: string; readonly receipt: Buffer },
  envelopes: EnvelopeCheck,
): boolean {
  try {
    if (envelopes === 'digest' && !retainedTransfersHold(auth, journal, claims, derived)) return false;
    const rebuilt = buildReceipt(auth, journal, derived, envelopes === 'signature');
    if (!('receipt' in rebuilt)) return false;
    // The stored bytes must be the rebuilt receipt's canonical bytes (which decode strictly, as
    // they were built from decoded parts and checked), so they need no decoding of their own.
    return (
      encodeReceiptV2(rebuilt.receipt).equals(stored.receipt) &&
      domainDigest(DOMAINS.receipt, stored.receipt) === stored.receipt_digest
    );
  } catch (error) {
    // Evidence that no longer holds is an answer; a busy or unavailable store is not.
    if (error instanceof AgentscmError && error.code !== 'INTERNAL' && ERROR_CODES[error.code].exit === EXIT.INVALID)
      return false;
    if (error instanceof AgentscmError && error.code === 'TASK_JOURNAL_INCONSISTENT') return false;
    throw error;
  }
}

/**
 * The agent-owned path's evidence: each task evaluated, the failures that count, and the retained receipt when it
 * holds.
 */
export interface TaskEvidence {
  readonly evaluations: readonly { readonly entry: DerivedTask; readonly evaluation: TaskEvaluation }[];
  readonly failures: readonly QualificationFailure[];
  readonly next: QualificationNext;
  /** The retained v2 receipt's digest when it holds and nothing else fails, else null. */
  readonly receipt_digest: string | null;
}

export function taskEvidence(
  auth: Authority,
  journal: Journal | null,
  derived: DerivedSubject,
  nowMs: number,
  envelopes: EnvelopeCheck,
): TaskEvidence {
  const claims = claimsOf(journal);
  const evaluations = derived.tasks.map((entry) => ({
    entry,
    evaluation: evaluateTask(auth, journal, claims, derived, entry, nowMs),
  }));
  const stored = findReceipt(auth, derived);
  // A required task's failure always counts. An optional task's outcome is recorded in the
  // receipt as an omission, so it counts here only while it keeps the receipt from being written
  // (a command task without a validated import) — and a revoked origin or executor of any
  // imported task counts, since admission rechecks every task the receipt names. (An optional
  // command that did not pass is refused later by the command check, `commandGaps`.)
  const counts = (entry: DerivedTask, failure: QualificationFailureCode): boolean =>
    entry.task.required ||
    failure === 'authorization_changed' ||
    (stored === null &&
      (entry.step.action.kind === 'command' || entry.step.action.kind === 'review') &&
      failure !== 'collector_not_passed' &&
      failure !== 'review_not_passed');
  const failures: QualificationFailure[] = evaluations
    .filter(({ entry, evaluation }) => evaluation.failure !== null && counts(entry, evaluation.failure))
    .map(({ entry, evaluation }) => ({
      task_id: entry.task.task_id,
      code: evaluation.failure as QualificationFailureCode,
    }));
  let next: QualificationNext = evaluations.find(({ evaluation }) => evaluation.next !== null)?.evaluation.next ?? {
    operation: 'none',
  };
  let receiptDigest: string | null = null;
  const anchor = evaluations.find(({ entry }) => entry.step.action.kind === 'command')?.entry ?? derived.tasks[0];
  if (failures.length === 0 && anchor !== undefined) {
    if (stored === null) {
      failures.push({ task_id: anchor.task.task_id, code: 'receipt_missing' });
      next = { operation: 'collector_finalize' };
    } else if (journal !== null && receiptHolds(auth, journal, claims, derived, stored, envelopes)) {
      receiptDigest = stored.receipt_digest;
    } else {
      failures.push({ task_id: anchor.task.task_id, code: 'receipt_invalid' });
    }
  }
  return { evaluations, failures, next, receipt_digest: receiptDigest };
}
