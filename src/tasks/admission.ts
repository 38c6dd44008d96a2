/**
 * Admission: approval and landing (spec "Operator-enrolled collector transfer", "Approval and
 * integration recheck", and the admission column of "Capability matrix"; docs/admission.md).
 *
 * `admitSubject` is admission's one check, run inside the caller's authority transaction with
 * one journal read snapshot inside it: the subject is derived from the authority and must be
 * current (Change version and revision, context, policy epoch, target, installed requirement);
 * the evidence check is qualification's own (`qualifyDerived`: every task's state, the live
 * origin grant and current executor registration of every imported task, the retained receipt
 * rebuilt from the retained signed transfers with each signature verified again). Admission
 * adds what qualification leaves to it: every imported task's collector profile must still be
 * the current profile of its step, and every command step bound to the subject's command/v1
 * context needs an exact successful command — optional or not. A subject without a qualifying
 * imported receipt may land on the server-executed path instead (spec "Source-bound skill
 * workflows": a completed run of the exact compiled plan, its command attempts passed and their
 * retained records intact, every required review step a passed review record, source paths
 * recomputed now).
 *
 * Approval runs it in the authority's writer transaction and records the approval of the
 * subject and the receipt. Landing runs it under BEGIN IMMEDIATE on authority.sqlite (the
 * native writer lock), requires the approval of exactly that subject and receipt, requires the
 * target to be at the base the Change's revision descends from, and moves the target and
 * records the landing in the same transaction.
 */
import { encodeCanonical } from '../contracts/canonical-json.js';
import { reviewBudgetsToJson } from '../contracts/review-policy.js';
import { AgentscmError } from '../contracts/errors.js';
import type { QualificationAnswer, QualificationNext } from '../contracts/qualification.js';
import type { AgentRef } from '../contracts/task-common.js';
import { sha256Hex } from '../crypto/sha256.js';
import { findApproval, latestApproval, recordApproval } from '../native/approvals.js';
import type { Approval, ApprovalSubject, ReceiptKind } from '../native/approvals.js';
import { getChange } from '../native/changes.js';
import { listProfilesOfRegistration, requireCurrentCollectorProfile } from '../native/collector-profiles.js';
import { isAncestor, recordLanding } from '../native/landings.js';
import type { Landing } from '../native/landings.js';
import { resolveRepository } from '../native/repositories.js';
import { findReviewContext, resolveContextRef } from '../native/review-contexts.js';
import { u64ToSql } from '../native/sqlite.js';
import { openAuthority, writeTransaction } from '../native/store.js';
import type { Authority } from '../native/store.js';
import { getTarget } from '../native/targets.js';
import { pauseAtTestPoint } from '../native/test-pause.js';
import { findCommandAttemptForStep } from '../workflows/command-attempts.js';
import type { Journal } from '../workflows/journal.js';
import { findRun, journalStatement, listSteps } from '../workflows/journal.js';
import type { StepRecord } from '../workflows/journal.js';
import { stepResultValue } from '../workflows/run-model.js';
import { isJsonObject } from '../contracts/json-value.js';
import { findCollectorAttempt } from './collector-attempts.js';
import { findTransferOfTask } from './collector-transfers.js';
import { trustedLocalGuard } from './context.js';
import type { DerivedSubject } from './derive.js';
import { deriveSubject } from './derive.js';
import { qualifyDerived } from './qualification.js';
import { soleCurrentContext } from './qualification-local.js';
import { readJournal } from './transition.js';

/** Test pause point (src/native/test-pause.ts): holding the writer lock, the target moved and the landing recorded, before the commit. */
export const LAND_PAUSE_POINT = 'admission:land-before-commit';

/** The operator of the local data directory: the CLI runs in-process against it, as `agentscm qualification` does. */
const OPERATOR: AgentRef = { owner_id: 'operator', agent_id: 'local' };
/** Who approved or landed, as recorded. */
const OPERATOR_NAME = `${OPERATOR.owner_id}/${OPERATOR.agent_id}`;

/** The adapter fields that select a subject. */
export interface AdmissionSelection {
  readonly dataDir: string;
  /** Repository id or name; undefined → the only repository of the store. */
  readonly repository?: string | undefined;
  readonly profile: string;
  readonly target: string;
  readonly change: string;
  readonly nowMs?: number | undefined;
}

/** What admission found: the current subject and the receipt that admits it. */
export interface Admitted {
  readonly derived: DerivedSubject;
  readonly receipt_kind: ReceiptKind;
  readonly receipt_digest: string;
  /** The server-executed run, for a server_run receipt. */
  readonly run_id: string | null;
}

function staleSubject(message: string, change: string): AgentscmError {
  return new AgentscmError('ADMISSION_SUBJECT_STALE', message, {
    hint: `run \`agentscm qualification --change ${change}\` for the Change's current subject, collect what it names, then approve it`,
  });
}

/** The current subject of a Change and context, or ADMISSION_SUBJECT_STALE when the context is no longer the current one. */
function deriveCurrent(auth: Authority, selection: AdmissionSelection, contextDigest: string): DerivedSubject {
  try {
    return deriveSubject(auth, { repository: selection.repository, profile: selection.profile, target: selection.target, change_id: selection.change, context_digest: contextDigest });
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'TASK_STALE') throw staleSubject(`the subject is no longer current: ${error.message}`, selection.change);
    throw error;
  }
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
    return new AgentscmError('ADMISSION_AUTHORIZATION_CHANGED', `Change ${change} at revision ${answer.revision} no longer passes the live origin and executor checks: ${failures.join(', ')}`, {
      hint: 'an origin grant or executor registration was revoked, rotated or re-enrolled after the receipt; checkpoint a new version and collect it under current authorization',
      details: { failures: answer.failures.map((failure) => ({ ...failure })) },
    });
  }
  return new AgentscmError('ADMISSION_NOT_QUALIFIED', `Change ${change} at revision ${answer.revision} does not qualify: ${failures.length === 0 ? 'no receipt' : failures.join(', ')}`, {
    hint: nextStepOf(answer.next, change),
    details: { failures: answer.failures.map((failure) => ({ ...failure })), next: { ...answer.next } },
  });
}

/**
 * Every command step is bound to the subject's command/v1 context (the plan compiler checks the
 * binding), so each needs an exact successful command whatever its `required` flag says: the
 * optional flag lets a receipt record the step as an omission, never waive the command.
 */
function requireCommands(derived: DerivedSubject, succeeded: (stepId: string) => boolean): void {
  for (const entry of derived.tasks) {
    if (entry.step.action.kind !== 'command' || succeeded(entry.step.id)) continue;
    throw new AgentscmError('ADMISSION_COMMAND_REQUIRED', `command step "${entry.step.id}"${entry.step.required ? '' : ' (optional in the graph)'} of Change ${derived.base.change_id} has no exact successful command for its command/v1 context`, {
      hint: 'an optional flag cannot waive a command its context requires: fix the cause, checkpoint a new version and collect every command step',
      details: { task_id: entry.task.task_id, step_id: entry.step.id },
    });
  }
}

function profileChanged(message: string, taskId: string): AgentscmError {
  return new AgentscmError('ADMISSION_PROFILE_CHANGED', message, {
    hint: 'the evidence was collected under a profile that is no longer current; checkpoint a new version and collect it with the current profile',
    details: { task_id: taskId },
  });
}

/**
 * Each imported task's collector profile is still installed, its registration current, it is
 * the newest profile of that registration (a newer one replaced it), and its recipe is the
 * context's recipe with the context's toolchain and environment.
 */
function requireCurrentProfiles(auth: Authority, journal: Journal, derived: DerivedSubject): void {
  const context = findReviewContext(auth, derived.base.repository, derived.base.context_digest)?.context;
  for (const entry of derived.tasks) {
    const action = entry.step.action;
    if (action.kind !== 'command' && action.kind !== 'review') continue;
    const taskId = entry.task.task_id;
    const transfer = findTransferOfTask(journal, taskId);
    const claim = transfer === null ? null : findCollectorAttempt(journal, transfer.attempt_id);
    if (claim === null) continue;
    const profileId = claim.descriptor.collector_profile_id;
    let registrationId: string;
    try {
      const current = requireCurrentCollectorProfile(auth, profileId);
      registrationId = current.registration.registration_id;
      const profile = current.installed.profile;
      if (profile.kind === 'finite_review') {
        // A review profile pins what the step's plan action binds (fixture bases never decode).
        const fits = action.kind === 'review' && profile.policy_sha256 === action.policy_sha256 && encodeCanonical(profile.coverage as string[]).equals(encodeCanonical(action.coverage as string[])) && encodeCanonical(reviewBudgetsToJson(profile.budgets)).equals(encodeCanonical(reviewBudgetsToJson(action.budgets)));
        if (!fits) throw profileChanged(`finite-review profile ${profileId} of task ${taskId} does not pin the policy, coverage and budgets of the step's review`, taskId);
      } else if (context === undefined || profile.recipe_digest !== context.recipe_digest || profile.recipe.toolchain !== context.toolchain || profile.recipe.environment !== context.environment) {
        throw profileChanged(`collector profile ${profileId} of task ${taskId} does not pin the recipe, toolchain and environment of the subject's context`, taskId);
      }
    } catch (error) {
      if (error instanceof AgentscmError && (error.code === 'COLLECTOR_PROFILE_NOT_FOUND' || error.code === 'REGISTRATION_NOT_CURRENT')) {
        throw profileChanged(`collector profile ${profileId} of task ${taskId} is no longer current: ${error.message}`, taskId);
      }
      throw error;
    }
    const newest = listProfilesOfRegistration(auth, registrationId).at(-1);
    if (newest !== undefined && newest.collector_profile_id !== profileId) {
      throw profileChanged(`collector profile ${profileId} of task ${taskId} was replaced by profile ${newest.collector_profile_id} for step "${entry.step.id}"`, taskId);
    }
  }
}

/** Domain of a server-executed run's receipt digest (docs/admission.md "The server-executed path"). */
const SERVER_RUN_RECEIPT_DOMAIN = 'agentscm.server-run-receipt.v1';

/**
 * The receipt of a completed server-executed run of the subject's exact compiled plan, or null:
 * every required step and every command step succeeded, each command step's newest attempt
 * passed and its retained record still has its digest, and the source paths and capabilities
 * recomputed now (the qualification answer's states) hold.
 */
function serverRunReceipt(journal: Journal, derived: DerivedSubject, answer: QualificationAnswer, runId: string): string | null {
  const run = findRun(journal, runId);
  if (run === null || run.halted_reason !== null) return null;
  const steps = listSteps(journal, runId);
  const rows: { step_id: string; state: string; result_sha256: string | null; attempt_id: string | null; record_digest: string | null }[] = [];
  for (const entry of derived.tasks) {
    const step = steps.find((s) => s.step_id === entry.step.id);
    if (step === undefined) return null;
    const kind = entry.step.action.kind;
    if (kind === 'review') {
      // A review counts only as a passed record; the receipt names its record digest.
      const digest = passedReviewDigest(step);
      if (digest === null && entry.step.required) return null;
      rows.push({ step_id: step.step_id, state: step.state, result_sha256: step.result_sha256, attempt_id: null, record_digest: digest });
      continue;
    }
    if (kind === 'command') {
      if (step.state !== 'succeeded') return null;
      const attempt = findCommandAttemptForStep(journal.db, runId, step.step_id);
      if (attempt?.state !== 'succeeded' || attempt.outcome !== 'passed' || attempt.record_json === null || attempt.record_digest !== sha256Hex(attempt.record_json)) return null;
      rows.push({ step_id: step.step_id, state: step.state, result_sha256: step.result_sha256, attempt_id: attempt.attempt_id, record_digest: attempt.record_digest });
      continue;
    }
    const now = answer.tasks.find((task) => task.task_id === entry.task.task_id)?.state;
    if (entry.step.required && (step.state !== 'succeeded' || now !== 'succeeded')) return null;
    rows.push({ step_id: step.step_id, state: step.state, result_sha256: step.result_sha256, attempt_id: null, record_digest: null });
  }
  return sha256Hex(encodeCanonical([SERVER_RUN_RECEIPT_DOMAIN, { run_id: run.run_id, plan_digest: run.plan_digest, definition_sha256: run.definition_sha256, steps: rows }]));
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
 * The first required review step with no passed review in any retained run of the subject's
 * exact plan, or null (docs/admission.md "Review at landing").
 */
function missingReview(journal: Journal | null, derived: DerivedSubject): DerivedSubject['tasks'][number] | null {
  const reviews = derived.tasks.filter((entry) => entry.step.action.kind === 'review' && entry.step.required);
  if (reviews.length === 0) return null;
  if (journal === null) return reviews[0] ?? null;
  const b = derived.base;
  const runs = journalStatement(journal, 'SELECT run_id FROM workflow_runs WHERE plan_digest = ? AND repository = ? AND revision = ? AND policy_epoch = ? ORDER BY updated_at_ms DESC, run_id LIMIT 8').all(
    b.plan_digest,
    b.repository,
    b.revision,
    u64ToSql(b.policy_epoch),
  ) as { run_id: string }[];
  const stepsOf = runs.map(({ run_id }) => listSteps(journal, run_id));
  return reviews.find((entry) => !stepsOf.some((steps) => steps.some((s) => s.step_id === entry.step.id && passedReviewDigest(s) !== null))) ?? null;
}

function reviewRequired(derived: DerivedSubject, entry: DerivedSubject['tasks'][number]): AgentscmError {
  const change = derived.base.change_id;
  return new AgentscmError('ADMISSION_REVIEW_REQUIRED', `review step "${entry.step.id}" of Change ${change} at revision ${derived.base.revision} has no passed review record: no imported review transfer qualifies it and no completed server-executed run of its plan passed it`, {
    hint: 'collect the review task with a finite-review collector (`agentscm agent-task claim --profile` then `agent-task collect`), or run the requirement with the review flags (`agentscm skill-workflow stop` or `run`, docs/review.md); a failed, incomplete or uncertain review needs a fix and a new checkpoint',
    details: { task_id: entry.task.task_id, step_id: entry.step.id },
  });
}

/** The newest completed server-executed run of the subject that gives a receipt, or null. */
function serverRunEvidence(journal: Journal, derived: DerivedSubject, answer: QualificationAnswer): { run_id: string; receipt_digest: string } | null {
  const b = derived.base;
  const runs = journalStatement(
    journal,
    "SELECT run_id FROM workflow_runs WHERE plan_digest = ? AND repository = ? AND revision = ? AND policy_epoch = ? AND state IN ('completed', 'completed_with_omissions') ORDER BY updated_at_ms DESC, run_id LIMIT 8",
  ).all(b.plan_digest, b.repository, b.revision, u64ToSql(b.policy_epoch)) as { run_id: string }[];
  for (const { run_id } of runs) {
    const digest = serverRunReceipt(journal, derived, answer, run_id);
    if (digest !== null) return { run_id, receipt_digest: digest };
  }
  return null;
}

/**
 * Admission's checks for the subject of `contextDigest`, in the caller's authority transaction
 * and one journal snapshot inside it (docs/admission.md "What is rechecked, and why"). Returns the
 * receipt that admits the subject, or throws the refusal with its code and next step.
 */
export function admitSubject(auth: Authority, journal: Journal | null, selection: AdmissionSelection, contextDigest: string, nowMs: number): Admitted {
  const derived = deriveCurrent(auth, selection, contextDigest);
  const answer = qualifyDerived(auth, journal, derived, nowMs);
  if (answer.qualified && answer.receipt_digest !== null && journal !== null) {
    requireCommands(derived, (stepId) => answer.tasks.find((task) => task.step_id === stepId)?.state === 'succeeded');
    requireCurrentProfiles(auth, journal, derived);
    return { derived, receipt_kind: 'imported', receipt_digest: answer.receipt_digest, run_id: null };
  }
  // A revoked origin or executor refuses the subject whatever else might admit it.
  if (journal !== null && !answer.failures.some((failure) => failure.code === 'authorization_changed')) {
    const run = serverRunEvidence(journal, derived, answer);
    if (run !== null) return { derived, receipt_kind: 'server_run', receipt_digest: run.receipt_digest, run_id: run.run_id };
  }
  const review = missingReview(journal, derived);
  if (review !== null) throw reviewRequired(derived, review);
  throw notQualified(answer, selection.change);
}

/** The approval subject of an admitted subject. */
function approvalSubjectOf(admitted: Admitted): ApprovalSubject {
  const b = admitted.derived.base;
  return {
    repository: b.repository,
    change_id: b.change_id,
    change_version: b.change_version,
    revision: b.revision,
    context_digest: b.context_digest,
    policy_epoch: b.policy_epoch,
    profile: b.profile,
    target: b.target,
    requirement_digest: b.requirement_digest,
    receipt_kind: admitted.receipt_kind,
    receipt_digest: admitted.receipt_digest,
  };
}

/** One journal read snapshot for the operator's local admission (none when the data directory has no journal). */
function withJournal<T>(selection: AdmissionSelection, body: (journal: Journal | null) => T): T {
  return readJournal(
    { dataDir: selection.dataDir, actor: OPERATOR, repository: selection.repository, profile: selection.profile, target: selection.target, guard: trustedLocalGuard },
    () => body(null),
    (journal) => body(journal),
  );
}

function withWriter<T>(dataDir: string, body: (auth: Authority) => T): T {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    return writeTransaction(auth, () => body(auth));
  } finally {
    auth.close();
  }
}

export interface ApproveInput extends AdmissionSelection {
  /** Review context digest or unique prefix; undefined → the one context of the Change's current version. */
  readonly context?: string | undefined;
}

export interface ApproveResult {
  readonly approval: Approval;
  /** False when the same subject and receipt were already approved (nothing was written). */
  readonly created: boolean;
  readonly run_id: string | null;
}

/**
 * `agentscm approve`: run admission's checks on the Change's current subject in the authority's
 * writer transaction and record the operator's approval of it and its receipt.
 */
export function approveChange(input: ApproveInput): ApproveResult {
  return withWriter(input.dataDir, (auth) => {
    const repository = resolveRepository(auth, input.repository).id;
    const contextDigest = input.context === undefined ? soleCurrentContext(auth, repository, input.change) : resolveContextRef(auth, repository, input.context);
    const selection = { ...input, repository };
    const admitted = withJournal(selection, (journal) => admitSubject(auth, journal, selection, contextDigest, input.nowMs ?? Date.now()));
    const { approval, created } = recordApproval(auth, approvalSubjectOf(admitted), OPERATOR_NAME, input.nowMs ?? Date.now());
    return { approval, created, run_id: admitted.run_id };
  });
}

export interface LandResult {
  readonly landing: Landing;
  readonly approval: Approval;
}

/** The target's current revision must be the base the Change's revision descends from. */
function requireBase(auth: Authority, approval: Approval, targetRevision: string): void {
  if (targetRevision === approval.revision) {
    throw new AgentscmError('LAND_BASE_MISMATCH', `target ${approval.target} already is at revision ${approval.revision} of Change ${approval.change_id}`, {
      hint: 'nothing to land: the target already has this revision; checkpoint new work on it to land more',
    });
  }
  if (!isAncestor(auth, targetRevision, approval.revision)) {
    throw new AgentscmError('LAND_BASE_MISMATCH', `Change ${approval.change_id} version ${approval.change_version} (revision ${approval.revision}) does not descend from target ${approval.target}'s current revision ${targetRevision}`, {
      hint: `checkpoint the Change on the target's new revision ${targetRevision}, then qualify, approve and land it`,
      details: { target_revision: targetRevision },
    });
  }
}

/**
 * `agentscm land`: under BEGIN IMMEDIATE on the authority (the native writer lock), recheck
 * everything admission checks for the newest approval of the Change, require that approval to
 * bind exactly the current subject and the receipt that admits it now, require the target at the
 * Change's base, then move the target and record the landing in the same transaction.
 */
export function landChange(input: AdmissionSelection): LandResult {
  return withWriter(input.dataDir, (auth) => {
    const repository = resolveRepository(auth, input.repository).id;
    const selection = { ...input, repository };
    const target = getTarget(auth, repository, input.target);
    const change = getChange(auth, repository, input.change);
    const approved = latestApproval(auth, repository, change.id, input.profile, input.target);
    if (approved === null) {
      throw new AgentscmError('APPROVAL_NOT_FOUND', `Change ${change.id} has no approval for target ${input.target} and profile ${input.profile}`, {
        hint: `check \`agentscm qualification --change ${change.id}\`, then \`agentscm approve --change ${change.id} --target ${input.target}\``,
      });
    }
    if (approved.change_version !== change.current_version || approved.revision !== change.current_revision) {
      throw staleSubject(`the approval names Change ${change.id} version ${approved.change_version}; the Change is at version ${change.current_version}`, change.id);
    }
    const admitted = withJournal(selection, (journal) => admitSubject(auth, journal, selection, approved.context_digest, input.nowMs ?? Date.now()));
    const approval = findApproval(auth, approvalSubjectOf(admitted));
    if (approval === null) {
      throw new AgentscmError('APPROVAL_NOT_FOUND', `no approval binds Change ${change.id}'s current subject with the ${admitted.receipt_kind} receipt ${admitted.receipt_digest} that admits it now`, {
        hint: `approve the current subject again: \`agentscm approve --change ${change.id} --target ${input.target}\``,
      });
    }
    requireBase(auth, approval, target.revision);
    const landing = recordLanding(auth, approval, target.revision, OPERATOR_NAME, input.nowMs ?? Date.now());
    pauseAtTestPoint(LAND_PAUSE_POINT);
    return { landing, approval };
  });
}
