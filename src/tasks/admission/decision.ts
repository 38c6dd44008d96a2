/**
 * The one decision behind `qualification`, `approve` and `land` (docs/qualification.md: it runs
 * admission's current-subject check and its evidence checks; docs/admission.md "What is
 * rechecked, and why", "The server-executed path").
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
import { AgentscmError } from '../../contracts/errors.js';
import {
  checkQualificationAnswer,
  MAX_QUALIFICATION_FAILURES,
  type QualificationAnswer,
  type QualificationFailure,
  type QualificationNext,
  type QualificationTask,
  type QualificationTaskState,
} from '../../contracts/task/qualification.js';
import type { ReceiptKind } from '../../native/approvals.js';
import type { Authority } from '../../native/store.js';
import type { Journal } from '../../workflows/journal.js';
import type { DerivedSubject } from '../derive.js';
import {
  commandGaps,
  commandRequired,
  missingReview,
  notQualified,
  profileGap,
  reviewRequired,
} from './admission-checks.js';
import { serverRunEvidence, serverRunReceipt, type ServerRunReceipt } from './server-run-receipt.js';
import { claimsOf, evaluateTask, taskEvidence, type EnvelopeCheck } from './task-evidence.js';

export type { EnvelopeCheck } from './task-evidence.js';
export { SERVER_RUN_RECEIPT_DOMAIN, serverRunReceipt, type ServerRunReceipt } from './server-run-receipt.js';

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

/** The first `MAX_QUALIFICATION_FAILURES` failures, in the order given (plan order). */
export function boundFailures(failures: readonly QualificationFailure[]): QualificationFailure[] {
  return failures.slice(0, MAX_QUALIFICATION_FAILURES);
}

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
