/**
 * The one decision behind `qualification`, `approve` and `land` (spec "Instruction entrypoint",
 * the qualification paragraph: qualification "runs admission's current-subject check … and its
 * evidence checks"; "Operator-enrolled collector transfer", "Approval and integration recheck";
 * "Source-bound skill workflows"; docs/admission.md "What is rechecked, and why").
 *
 * `decideSubject` takes a current derived subject, one authority snapshot and one journal
 * snapshot inside it, and answers both questions at once: the qualification answer, and either
 * the receipt that admits the subject or the refusal admission throws. The two are computed
 * together so that they cannot disagree (issue #25 item 11): whatever admission would refuse,
 * the answer is not qualified and names a failure code; whatever admission would admit, the
 * answer is qualified and names that receipt's digest. The order of the checks:
 *
 * 1. the task evidence of the agent-owned path: every task's state, the live origin grant and
 *    current executor registration of every imported task, and the retained v2 receipt rebuilt
 *    from the retained transfers (envelopes checked as `EnvelopeCheck` says);
 * 2. with a retained receipt that holds: every command step needs an exact successful command,
 *    optional or not (`ADMISSION_COMMAND_REQUIRED`; the task's own failure code), and every
 *    imported task's collector profile must still be the current one of its step
 *    (`ADMISSION_PROFILE_CHANGED`; `profile_changed`) — then the imported receipt admits;
 * 3. otherwise, unless an origin or executor failed the live checks, a completed server-executed
 *    run of the subject's exact compiled plan admits with its server-run receipt;
 * 4. otherwise a required review step without a passed review is `ADMISSION_REVIEW_REQUIRED`,
 *    and anything else `ADMISSION_AUTHORIZATION_CHANGED` or `ADMISSION_NOT_QUALIFIED`.
 *
 * The only difference between the two callers is how retained envelopes are checked: admission
 * verifies each signature again (`'signature'`); the advisory qualification answer checks each
 * envelope's stored length and SHA-256 (`'digest'`, docs/qualification.md "Evidence: what is
 * re-read"). Both read the same rows otherwise.
 */
import { domainDigest, DOMAINS } from '../../contracts/digest.js';
import { AgentscmError, ERROR_CODES, EXIT } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import { isJsonObject } from '../../contracts/json/json-value.js';
import { encodeReceiptV2 } from '../../contracts/receipt/receipt-v2.js';
import { reviewBudgetsToJson } from '../../contracts/review/policy.js';
import {
  checkQualificationAnswer,
  MAX_QUALIFICATION_FAILURES,
  type QualificationAnswer,
  type QualificationFailure,
  type QualificationFailureCode,
  type QualificationNext,
  type QualificationTask,
  type QualificationTaskState,
} from '../../contracts/task/qualification.js';
import { sha256Hex } from '../../crypto/sha256.js';
import type { ReceiptKind } from '../../native/approvals.js';
import { authorityId } from '../../native/authority-identity.js';
import { listProfilesOfRegistration, requireCurrentCollectorProfile } from '../../native/collector-profiles.js';
import { findReviewContext } from '../../native/review-contexts.js';
import { u64ToSql } from '../../native/sqlite.js';
import type { Authority } from '../../native/store.js';
import { findCommandAttemptForStep } from '../../workflows/command-attempts.js';
import { findRun, journalStatement, listSteps, type Journal, type StepRecord } from '../../workflows/journal.js';
import { assessCapability } from '../../workflows/require-capability.js';
import { stepResultValue } from '../../workflows/run-model.js';
import { checkSourcePaths } from '../../workflows/source-paths.js';
import { collectorAuthorizationHolds, findCollectorAttempt, type CollectorAttemptRow } from '../collector/attempts.js';
import { buildReceipt, findReceipt, findTransferOfTask, readRetainedEnvelope } from '../collector/receipts.js';
import type { DerivedSubject, DerivedTask } from '../derive.js';
import { currentAttempt, findAssertion, olderUnresolvedTask, retainedSeqOf } from '../journal-rows.js';
import { firstIncompleteDependency, observeAttempt } from '../views.js';

/**
 * How the retained envelopes are checked when the receipt is rebuilt: `'signature'` (admission)
 * verifies each one's signature again under its registration's key; `'digest'` (the advisory
 * qualification answer) checks each one's stored length and SHA-256 — the transfer digest the
 * receipt names — without re-verifying the signature.
 */
export type EnvelopeCheck = 'signature' | 'digest';

/** What the decision admits: the receipt kind and digest, and the server-executed run of a server_run receipt. */
export interface AdmittedReceipt {
  readonly receipt_kind: ReceiptKind;
  readonly receipt_digest: string;
  readonly run_id: string | null;
}

/**
 * The decision for one current subject: the qualification answer and, exactly when it is
 * qualified, the receipt that admits the subject (else the refusal admission throws).
 */
export type SubjectDecision =
  | { readonly answer: QualificationAnswer; readonly admitted: AdmittedReceipt; readonly refusal: null }
  | { readonly answer: QualificationAnswer; readonly admitted: null; readonly refusal: AgentscmError };

// ---------------------------------------------------------------------------------------------
// Task evidence (the agent-owned path)
// ---------------------------------------------------------------------------------------------

/** What one task contributes: its state, the failure keeping it from qualifying (or null) and the next step it offers (or null). */
interface TaskEvaluation {
  readonly state: QualificationTaskState;
  readonly failure: QualificationFailureCode | null;
  readonly next: QualificationNext | null;
}

/** The outcome of an attempt's validated import, or null when it has none (one indexed read). */
function importedOutcome(journal: Journal, attemptId: string): string | null {
  const row = journalStatement(journal, 'SELECT outcome FROM collector_transfers WHERE attempt_id = ?').get(
    attemptId,
  ) as { outcome: string } | undefined;
  return row === undefined ? null : row.outcome;
}

/** The collector claims of one snapshot by attempt id, each read and its descriptor decoded once. */
type Claims = (attemptId: string) => CollectorAttemptRow | null;

function claimsOf(journal: Journal | null): Claims {
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
    const older = olderUnresolvedTask(journal, entry.task, seq).task_id;
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
  const outcome = importedOutcome(journal, attempt.attempt.attempt_id);
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

function evaluateTask(
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

/** The first `MAX_QUALIFICATION_FAILURES` failures, in the order given (plan order). */
export function boundFailures(failures: readonly QualificationFailure[]): QualificationFailure[] {
  return failures.slice(0, MAX_QUALIFICATION_FAILURES);
}

/**
 * The `'digest'` check of every retained transfer the subject's command tasks name: the claim
 * exists, its origin grant and executor registration pass the live checks (optional tasks
 * included, since the receipt names them), and the envelope has its stored length and digest.
 */
function retainedTransfersHold(auth: Authority, journal: Journal, claims: Claims, derived: DerivedSubject): boolean {
  for (const entry of derived.tasks) {
    if (entry.step.action.kind !== 'command' && entry.step.action.kind !== 'review') continue;
    const transfer = findTransferOfTask(journal, entry.task.task_id);
    if (transfer === null) continue;
    const claim = claims(transfer.attempt_id);
    if (claim === null || !collectorAuthorizationHolds(auth, claim)) return false;
    readRetainedEnvelope(journal, transfer);
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

/** The agent-owned path's evidence: each task evaluated, the failures that count, and the retained receipt when it holds. */
interface TaskEvidence {
  readonly evaluations: readonly { readonly entry: DerivedTask; readonly evaluation: TaskEvaluation }[];
  readonly failures: readonly QualificationFailure[];
  readonly next: QualificationNext;
  /** The retained v2 receipt's digest when it holds and nothing else fails, else null. */
  readonly receipt_digest: string | null;
}

function taskEvidence(
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
  const stored = journal === null ? null : findReceipt(journal, derived);
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

// ---------------------------------------------------------------------------------------------
// Admission's checks beyond the task evidence
// ---------------------------------------------------------------------------------------------

/**
 * Every command step is bound to the subject's command/v1 context (the plan compiler checks the
 * binding), so each needs an exact successful command whatever its `required` flag says: the
 * optional flag lets a receipt record the step as an omission, never waive the command. The
 * command steps without one, in plan order.
 */
function commandGaps(evidence: TaskEvidence): { readonly entry: DerivedTask; readonly evaluation: TaskEvaluation }[] {
  return evidence.evaluations.filter(
    ({ entry, evaluation }) => entry.step.action.kind === 'command' && evaluation.state !== 'succeeded',
  );
}

function commandRequired(derived: DerivedSubject, entry: DerivedTask): AgentscmError {
  return new AgentscmError(
    'ADMISSION_COMMAND_REQUIRED',
    `command step "${entry.step.id}"${entry.step.required ? '' : ' (optional in the graph)'} of Change ${derived.base.change_id} has no exact successful command for its command/v1 context`,
    {
      hint: 'an optional flag cannot waive a command its context requires: fix the cause, checkpoint a new version and collect every command step',
      details: { task_id: entry.task.task_id, step_id: entry.step.id },
    },
  );
}

function profileChanged(message: string, taskId: string): AgentscmError {
  return new AgentscmError('ADMISSION_PROFILE_CHANGED', message, {
    hint: 'the evidence was collected under a profile that is no longer current; checkpoint a new version and collect it with the current profile',
    details: { task_id: taskId },
  });
}

/**
 * The first imported task whose collector profile is no longer current, with the refusal: the
 * profile must still be installed, its registration current, it must be the newest profile of
 * that registration (a newer one replaced it), and its recipe the context's recipe with the
 * context's toolchain and environment (a finite-review profile: the step's policy, coverage and
 * budgets). Null when every imported task's profile is current.
 */
function profileGap(
  auth: Authority,
  journal: Journal,
  derived: DerivedSubject,
): { readonly task_id: string; readonly refusal: AgentscmError } | null {
  const context = findReviewContext(auth, derived.base.repository, derived.base.context_digest)?.context;
  for (const entry of derived.tasks) {
    const action = entry.step.action;
    if (action.kind !== 'command' && action.kind !== 'review') continue;
    const taskId = entry.task.task_id;
    const transfer = findTransferOfTask(journal, taskId);
    const claim = transfer === null ? null : findCollectorAttempt(journal, transfer.attempt_id);
    if (claim === null) continue;
    const gap = (message: string): { task_id: string; refusal: AgentscmError } => ({
      task_id: taskId,
      refusal: profileChanged(message, taskId),
    });
    const profileId = claim.descriptor.collector_profile_id;
    let registrationId: string;
    try {
      const current = requireCurrentCollectorProfile(auth, profileId);
      registrationId = current.registration.registration_id;
      const profile = current.installed.profile;
      if (profile.kind === 'finite_review') {
        // A review profile pins what the step's plan action binds (fixture bases never decode).
        const fits =
          action.kind === 'review' &&
          profile.policy_sha256 === action.policy_sha256 &&
          encodeCanonical(profile.coverage as string[]).equals(encodeCanonical(action.coverage as string[])) &&
          encodeCanonical(reviewBudgetsToJson(profile.budgets)).equals(
            encodeCanonical(reviewBudgetsToJson(action.budgets)),
          );
        if (!fits)
          return gap(
            `finite-review profile ${profileId} of task ${taskId} does not pin the policy, coverage and budgets of the step's review`,
          );
      } else if (
        context === undefined ||
        profile.recipe_digest !== context.recipe_digest ||
        profile.recipe.toolchain !== context.toolchain ||
        profile.recipe.environment !== context.environment
      ) {
        return gap(
          `collector profile ${profileId} of task ${taskId} does not pin the recipe, toolchain and environment of the subject's context`,
        );
      }
    } catch (error) {
      if (
        error instanceof AgentscmError &&
        (error.code === 'COLLECTOR_PROFILE_NOT_FOUND' || error.code === 'REGISTRATION_NOT_CURRENT')
      ) {
        return gap(`collector profile ${profileId} of task ${taskId} is no longer current: ${error.message}`);
      }
      throw error;
    }
    const newest = listProfilesOfRegistration(auth, registrationId).at(-1);
    if (newest !== undefined && newest.collector_profile_id !== profileId) {
      return gap(
        `collector profile ${profileId} of task ${taskId} was replaced by profile ${newest.collector_profile_id} for step "${entry.step.id}"`,
      );
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The server-executed path
// ---------------------------------------------------------------------------------------------

/** Domain of a server-executed run's receipt (docs/admission.md "The server-executed path"). */
export const SERVER_RUN_RECEIPT_DOMAIN = 'agentscm.server-run-receipt.v2';

/** One step of a server-run receipt, in plan order. */
interface ServerRunStep {
  readonly step_id: string;
  readonly required: boolean;
  readonly state: string;
  readonly result_sha256: string | null;
  readonly attempt_id: string | null;
  readonly record_digest: string | null;
}

/**
 * The exact-subject receipt of a completed server-executed run: the canonical JSON
 * `[SERVER_RUN_RECEIPT_DOMAIN, document]` is what the digest covers; `receipt` is the
 * document's canonical bytes (what the authority retains, docs/admission.md).
 */
export interface ServerRunReceipt {
  readonly run_id: string;
  readonly receipt_digest: string;
  readonly receipt: Buffer;
  readonly state: 'completed' | 'completed_with_omissions';
  /** Each step's state in the run, by step id (the qualification answer's task states). */
  readonly steps: ReadonlyMap<string, string>;
}

/**
 * The review record digest of a review step that passed in a run, or null: the step succeeded,
 * its retained result still has its digest, and it names a `passed` review and its record.
 */
function passedReviewDigest(step: StepRecord): string | null {
  if (step.state !== 'succeeded' || step.result === null || step.result_sha256 !== sha256Hex(step.result)) return null;
  const result = stepResultValue(step);
  if (!isJsonObject(result) || result.outcome !== 'passed' || typeof result.record_digest !== 'string') return null;
  return result.record_digest;
}

/**
 * The receipt of a completed server-executed run of the subject's exact compiled plan, or null:
 * the run is completed (or completed with omissions) and not halted, it ran the subject's plan,
 * every required step and every command step succeeded, each command step's newest attempt
 * passed and its retained record still has its digest, every required review step has a passed
 * review record, and the source paths and capabilities recomputed now (`now`) hold.
 */
export function serverRunReceipt(
  auth: Authority,
  journal: Journal,
  derived: DerivedSubject,
  now: (taskId: string) => QualificationTaskState | undefined,
  runId: string,
): ServerRunReceipt | null {
  const run = findRun(journal, runId);
  const b = derived.base;
  if (
    run === null ||
    run.halted_reason !== null ||
    (run.state !== 'completed' && run.state !== 'completed_with_omissions')
  )
    return null;
  if (
    run.plan_digest !== b.plan_digest ||
    run.repository !== b.repository ||
    run.revision !== b.revision ||
    run.policy_epoch !== b.policy_epoch
  )
    return null;
  const steps = listSteps(journal, runId);
  const rows: ServerRunStep[] = [];
  for (const entry of derived.tasks) {
    const step = steps.find((s) => s.step_id === entry.step.id);
    if (step === undefined) return null;
    const row = {
      step_id: step.step_id,
      required: entry.step.required,
      state: step.state,
      result_sha256: step.result_sha256,
    };
    const kind = entry.step.action.kind;
    if (kind === 'review') {
      // A review counts only as a passed record; the receipt names its record digest.
      const digest = passedReviewDigest(step);
      if (digest === null && entry.step.required) return null;
      rows.push({ ...row, attempt_id: null, record_digest: digest });
      continue;
    }
    if (kind === 'command') {
      if (step.state !== 'succeeded') return null;
      const attempt = findCommandAttemptForStep(journal.db, runId, step.step_id);
      if (
        attempt?.state !== 'succeeded' ||
        attempt.outcome !== 'passed' ||
        attempt.record_json === null ||
        attempt.record_digest !== sha256Hex(attempt.record_json)
      )
        return null;
      rows.push({ ...row, attempt_id: attempt.attempt_id, record_digest: attempt.record_digest });
      continue;
    }
    if (entry.step.required && (step.state !== 'succeeded' || now(entry.task.task_id) !== 'succeeded')) return null;
    rows.push({ ...row, attempt_id: null, record_digest: null });
  }
  const document = {
    version: 2,
    authority_id: authorityId(auth),
    repository_id: b.repository,
    subject: {
      change_id: b.change_id,
      change_version: b.change_version,
      revision: b.revision,
      context_digest: b.context_digest,
      policy_epoch: b.policy_epoch,
      target: b.target,
      requirement_digest: b.requirement_digest,
      plan_digest: b.plan_digest,
    },
    run_id: run.run_id,
    definition_sha256: run.definition_sha256,
    state: run.state,
    steps: rows.map((r) => ({ ...r })),
  };
  return {
    run_id: run.run_id,
    receipt_digest: sha256Hex(encodeCanonical([SERVER_RUN_RECEIPT_DOMAIN, document])),
    receipt: encodeCanonical(document),
    state: run.state,
    steps: new Map(rows.map((r) => [r.step_id, r.state])),
  };
}

/** The newest (of at most 8) completed server-executed runs of the subject's plan that gives a receipt, or null. */
function serverRunEvidence(
  auth: Authority,
  journal: Journal,
  derived: DerivedSubject,
  now: (taskId: string) => QualificationTaskState | undefined,
): ServerRunReceipt | null {
  const b = derived.base;
  const runs = journalStatement(
    journal,
    "SELECT run_id FROM workflow_runs WHERE plan_digest = ? AND repository = ? AND revision = ? AND policy_epoch = ? AND state IN ('completed', 'completed_with_omissions') ORDER BY updated_at_ms DESC, run_id LIMIT 8",
  ).all(b.plan_digest, b.repository, b.revision, u64ToSql(b.policy_epoch)) as { run_id: string }[];
  for (const { run_id } of runs) {
    const receipt = serverRunReceipt(auth, journal, derived, now, run_id);
    if (receipt !== null) return receipt;
  }
  return null;
}

/**
 * The first required review step with no passed review in any retained run of the subject's
 * exact plan, or null (docs/admission.md "Review at landing").
 */
function missingReview(journal: Journal | null, derived: DerivedSubject): DerivedTask | null {
  const reviews = derived.tasks.filter((entry) => entry.step.action.kind === 'review' && entry.step.required);
  if (reviews.length === 0) return null;
  if (journal === null) return reviews[0] ?? null;
  const b = derived.base;
  const runs = journalStatement(
    journal,
    'SELECT run_id FROM workflow_runs WHERE plan_digest = ? AND repository = ? AND revision = ? AND policy_epoch = ? ORDER BY updated_at_ms DESC, run_id LIMIT 8',
  ).all(b.plan_digest, b.repository, b.revision, u64ToSql(b.policy_epoch)) as { run_id: string }[];
  const stepsOf = runs.map(({ run_id }) => listSteps(journal, run_id));
  return (
    reviews.find(
      (entry) =>
        !stepsOf.some((steps) => steps.some((s) => s.step_id === entry.step.id && passedReviewDigest(s) !== null)),
    ) ?? null
  );
}

function reviewRequired(derived: DerivedSubject, entry: DerivedTask): AgentscmError {
  const change = derived.base.change_id;
  return new AgentscmError(
    'ADMISSION_REVIEW_REQUIRED',
    `review step "${entry.step.id}" of Change ${change} at revision ${derived.base.revision} has no passed review record: no imported review transfer qualifies it and no completed server-executed run of its plan passed it`,
    {
      hint: 'collect the review task with a finite-review collector (`agentscm agent-task claim --profile` then `agent-task collect`), or run the requirement with the review flags (`agentscm skill-workflow stop` or `run`, docs/review.md); a failed, incomplete or uncertain review needs a fix and a new checkpoint',
      details: { task_id: entry.task.task_id, step_id: entry.step.id },
    },
  );
}

/** The step to take for a qualification `next`, in words (the answer itself stays data). */
function nextStepOf(next: QualificationNext, change: string): string {
  switch (next.operation) {
    case 'collector_claim':
      return `claim and collect task ${next.task_id} (\`agentscm agent-task claim\`, \`agentscm agent-task collect\`), then approve again`;
    case 'reconcile':
      return `reconcile task ${next.task_id} (agent-task operation reconcile), then collect and approve again`;
    case 'collector_finalize':
      return 'write the missing receipt with the agent-task operation collector_finalize, then approve again';
    case 'checkpoint':
      return `checkpoint Change ${change} again and collect the new subject`;
    case 'none':
      return `see \`agentscm qualification --change ${change}\`; a failed step needs a fix and a new checkpoint`;
  }
}

function notQualified(answer: QualificationAnswer, change: string): AgentscmError {
  const failures = answer.failures.map((failure) => `${failure.code} (task ${failure.task_id})`);
  if (answer.failures.some((failure) => failure.code === 'authorization_changed')) {
    return new AgentscmError(
      'ADMISSION_AUTHORIZATION_CHANGED',
      `Change ${change} at revision ${answer.revision} no longer passes the live origin and executor checks: ${failures.join(', ')}`,
      {
        hint: 'an origin grant or executor registration was revoked, rotated or re-enrolled after the receipt; checkpoint a new version and collect it under current authorization',
        details: { failures: answer.failures.map((failure) => ({ ...failure })) },
      },
    );
  }
  return new AgentscmError(
    'ADMISSION_NOT_QUALIFIED',
    `Change ${change} at revision ${answer.revision} does not qualify: ${failures.length === 0 ? 'no receipt' : failures.join(', ')}`,
    {
      hint: nextStepOf(answer.next, change),
      details: { failures: answer.failures.map((failure) => ({ ...failure })), next: { ...answer.next } },
    },
  );
}

// ---------------------------------------------------------------------------------------------
// The decision
// ---------------------------------------------------------------------------------------------

function answerOf(
  derived: DerivedSubject,
  tasks: QualificationTask[],
  failures: readonly QualificationFailure[],
  next: QualificationNext,
  receiptDigest: string | null,
): QualificationAnswer {
  const answer: QualificationAnswer = {
    qualified: receiptDigest !== null,
    subject_current: true,
    receipt_digest: receiptDigest,
    revision: derived.base.revision,
    tasks,
    failures: boundFailures(failures),
    next: receiptDigest !== null ? { operation: 'none' } : next,
  };
  checkQualificationAnswer(answer);
  return answer;
}

function refused(answer: QualificationAnswer, refusal: AgentscmError): SubjectDecision {
  if (answer.qualified || answer.failures.length === 0)
    throw new AgentscmError(
      'INTERNAL',
      `admission refused with ${refusal.code} but the qualification answer names no failure`,
    );
  return { answer, admitted: null, refusal };
}

/**
 * The decision for a current subject, read from one authority snapshot and one journal snapshot
 * inside it (the caller derived the subject in that authority snapshot and checked it current).
 * Qualification returns `answer`; admission admits `admitted` or throws `refusal`.
 */
export function decideSubject(
  auth: Authority,
  journal: Journal | null,
  derived: DerivedSubject,
  nowMs: number,
  envelopes: EnvelopeCheck,
): SubjectDecision {
  const evidence = taskEvidence(auth, journal, derived, nowMs, envelopes);
  const tasks: QualificationTask[] = evidence.evaluations.map(({ entry, evaluation }) => ({
    task_id: entry.task.task_id,
    task_digest: entry.digest,
    step_id: entry.task.subject.step_id,
    required: entry.task.required,
    state: evaluation.state,
  }));
  const change = derived.base.change_id;
  if (evidence.receipt_digest !== null && journal !== null) {
    const gaps = commandGaps(evidence);
    const first = gaps[0];
    if (first !== undefined) {
      const failures = gaps.map(({ entry, evaluation }) => ({
        task_id: entry.task.task_id,
        code: evaluation.failure ?? 'collector_not_passed',
      }));
      return refused(
        answerOf(derived, tasks, failures, first.evaluation.next ?? { operation: 'none' }, null),
        commandRequired(derived, first.entry),
      );
    }
    const profile = profileGap(auth, journal, derived);
    if (profile !== null)
      return refused(
        answerOf(derived, tasks, [{ task_id: profile.task_id, code: 'profile_changed' }], { operation: 'none' }, null),
        profile.refusal,
      );
    return {
      answer: answerOf(derived, tasks, [], { operation: 'none' }, evidence.receipt_digest),
      admitted: { receipt_kind: 'imported', receipt_digest: evidence.receipt_digest, run_id: null },
      refusal: null,
    };
  }
  const answer = answerOf(derived, tasks, evidence.failures, evidence.next, null);
  // A revoked origin or executor refuses the subject whatever else might admit it.
  if (journal !== null && !evidence.failures.some((failure) => failure.code === 'authorization_changed')) {
    const stateOf = (taskId: string): QualificationTaskState | undefined =>
      tasks.find((task) => task.task_id === taskId)?.state;
    const run = serverRunEvidence(auth, journal, derived, stateOf);
    if (run !== null) {
      // The run's own step states (a succeeded step of the run is a succeeded task).
      const runTasks = tasks.map((task): QualificationTask => {
        const state = run.steps.get(task.step_id);
        return state === 'succeeded' || state === 'failed' ? { ...task, state } : task;
      });
      return {
        answer: answerOf(derived, runTasks, [], { operation: 'none' }, run.receipt_digest),
        admitted: { receipt_kind: 'server_run', receipt_digest: run.receipt_digest, run_id: run.run_id },
        refusal: null,
      };
    }
  }
  const review = missingReview(journal, derived);
  if (review !== null) return refused(answer, reviewRequired(derived, review));
  return refused(answer, notQualified(answer, change));
}

/**
 * The receipt one completed server-executed run gives the current subject, or null: the same
 * check as the server-executed path of `decideSubject`, for this run, with the source paths and
 * capabilities recomputed now (what the server-executed Stop loop copies into the authority).
 */
export function completedRunReceipt(
  auth: Authority,
  journal: Journal,
  derived: DerivedSubject,
  runId: string,
  nowMs: number,
): ServerRunReceipt | null {
  const claims = claimsOf(journal);
  const now = (taskId: string): QualificationTaskState | undefined => {
    const entry = derived.tasks.find((task) => task.task.task_id === taskId);
    return entry === undefined ? undefined : evaluateTask(auth, journal, claims, derived, entry, nowMs).state;
  };
  return serverRunReceipt(auth, journal, derived, now, runId);
}
