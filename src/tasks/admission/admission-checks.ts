/**
 * Admission's checks beyond the task evidence, and its refusals (docs/admission.md "What is
 * rechecked, and why", "Review at landing"): every command step needs an exact successful command,
 * every imported task's collector profile must still be current, a required review needs a passed
 * review record; and the error admission throws for each, with its next step.
 */
import { AgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { ReviewContext } from '../../contracts/review/context.js';
import { reviewBudgetsToJson } from '../../contracts/review/policy.js';
import type { QualificationAnswer, QualificationNext } from '../../contracts/task/qualification.js';
import { listProfilesOfRegistration, requireCurrentCollectorProfile } from '../../native/collector-profiles.js';
import { findReviewContext } from '../../native/review-contexts.js';
import type { Authority } from '../../native/store.js';
import { listSteps, type Journal } from '../../workflows/journal.js';
import { listPlanRunIds } from '../../workflows/plan-runs.js';
import type { PlanStep } from '../../workflows/plan.js';
import { findCollectorAttempt } from '../collector/attempts.js';
import { findTransferOfTask } from '../collector/receipts.js';
import type { DerivedSubject, DerivedTask } from '../derive.js';
import { passedReviewDigest } from './server-run-receipt.js';
import type { TaskEvaluation, TaskEvidence } from './task-evidence.js';

/**
 * Every command step is bound to the subject's command/v1 context (the plan compiler checks the
 * binding), so each needs an exact successful command whatever its `required` flag says: the
 * optional flag lets a receipt record the step as an omission, never waive the command. The
 * command steps without one, in plan order.
 */
export function commandGaps(
  evidence: TaskEvidence,
): { readonly entry: DerivedTask; readonly evaluation: TaskEvaluation }[] {
  return evidence.evaluations.filter(
    ({ entry, evaluation }) => entry.step.action.kind === 'command' && evaluation.state !== 'succeeded',
  );
}

export function commandRequired(derived: DerivedSubject, entry: DerivedTask): AgentscmError {
  return new AgentscmError(
    'ADMISSION_COMMAND_REQUIRED',
    `command step "${entry.step.id}"${entry.step.required ? '' : ' (optional in the graph)'} of Change ` +
      `${derived.base.change_id} has no exact successful command for its command/v1 context`,
    {
      hint:
        'an optional flag cannot waive a command its context requires: fix the cause, checkpoint a new ' +
        'version and collect every command step',
      details: { task_id: entry.task.task_id, step_id: entry.step.id },
    },
  );
}

function profileChanged(message: string, taskId: string): AgentscmError {
  return new AgentscmError('ADMISSION_PROFILE_CHANGED', message, {
    hint:
      'the evidence was collected under a profile that is no longer current; checkpoint a new version and ' +
      'collect it with the current profile',
    details: { task_id: taskId },
  });
}

/**
 * The first imported task whose collector profile is no longer current, with the refusal: the
 * profile must still be installed, its registration current, it must be the newest profile of
 * that registration (a newer one replaced it), and its recipe the recipe of the step's context
 * (each command step binds its own, docs/checks.md "Several command checks") with that context's
 * toolchain and environment (a finite-review profile: the step's policy, coverage and
 * budgets). Null when every imported task's profile is current.
 */
/** The context a command step binds (each binds its own), or null for a review step or none stored. */
function stepContext(auth: Authority, derived: DerivedSubject, action: PlanStep['action']): ReviewContext | null {
  if (action.kind !== 'command') return null;
  return findReviewContext(auth, derived.base.repository, action.context_digest)?.context ?? null;
}

export function profileGap(
  auth: Authority,
  journal: Journal,
  derived: DerivedSubject,
): { readonly task_id: string; readonly refusal: AgentscmError } | null {
  for (const entry of derived.tasks) {
    const action = entry.step.action;
    if (action.kind !== 'command' && action.kind !== 'review') continue;
    const taskId = entry.task.task_id;
    const transfer = findTransferOfTask(auth, taskId);
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
            `finite-review profile ${profileId} of task ${taskId} does not pin the policy, coverage and budgets ` +
              `of the step's review`,
          );
      } else {
        const context = stepContext(auth, derived, action);
        if (
          context === null ||
          profile.recipe_digest !== context.recipe_digest ||
          profile.recipe.toolchain !== context.toolchain ||
          profile.recipe.environment !== context.environment
        ) {
          return gap(
            `collector profile ${profileId} of task ${taskId} does not pin the recipe, toolchain and environment ` +
              `of the step's context`,
          );
        }
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
        `collector profile ${profileId} of task ${taskId} was replaced by profile ${newest.collector_profile_id} ` +
          `for step "${entry.step.id}"`,
      );
    }
  }
  return null;
}

/**
 * The first required review step with no passed review in any retained run of the subject's
 * exact plan, or null (docs/admission.md "Review at landing").
 */
export function missingReview(journal: Journal | null, derived: DerivedSubject): DerivedTask | null {
  const reviews = derived.tasks.filter((entry) => entry.step.action.kind === 'review' && entry.step.required);
  if (reviews.length === 0) return null;
  if (journal === null) return reviews[0] ?? null;
  const runIds = listPlanRunIds(journal, derived.base, { completed: false });
  const stepsOf = runIds.map((runId) => listSteps(journal, runId));
  return (
    reviews.find(
      (entry) =>
        !stepsOf.some((steps) => steps.some((s) => s.step_id === entry.step.id && passedReviewDigest(s) !== null)),
    ) ?? null
  );
}

export function reviewRequired(derived: DerivedSubject, entry: DerivedTask): AgentscmError {
  const change = derived.base.change_id;
  return new AgentscmError(
    'ADMISSION_REVIEW_REQUIRED',
    `review step "${entry.step.id}" of Change ${change} at revision ${derived.base.revision} has no passed review ` +
      `record: no imported review transfer qualifies it and no completed server-executed run of its plan ` +
      `passed it`,
    {
      hint:
        'collect the review task with a finite-review collector (`agentscm agent-task claim --profile` then ' +
        '`agent-task collect`), or run the requirement with the review flags (`agentscm skill-workflow stop` or ' +
        '`run`, docs/review.md); a failed, incomplete or uncertain review needs a fix and a new checkpoint',
      details: { task_id: entry.task.task_id, step_id: entry.step.id },
    },
  );
}

/** The step to take for a qualification `next`, in words (the answer itself stays data). */
function nextStepOf(next: QualificationNext, change: string): string {
  switch (next.operation) {
    case 'collector_claim':
      return (
        `claim and collect task ${next.task_id} (\`agentscm agent-task claim\`, \`agentscm agent-task ` +
        `collect\`), then approve again`
      );
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

export function notQualified(answer: QualificationAnswer, change: string): AgentscmError {
  const failures = answer.failures.map((failure) => `${failure.code} (task ${failure.task_id})`);
  if (answer.failures.some((failure) => failure.code === 'authorization_changed')) {
    return new AgentscmError(
      'ADMISSION_AUTHORIZATION_CHANGED',
      `Change ${change} at revision ${answer.revision} no longer passes the live origin and executor checks: ` +
        `${failures.join(', ')}`,
      {
        hint:
          'an origin grant or executor registration was revoked, rotated or re-enrolled after the receipt; ' +
          'checkpoint a new version and collect it under current authorization',
        details: { failures: answer.failures.map((failure) => ({ ...failure })) },
      },
    );
  }
  return new AgentscmError(
    'ADMISSION_NOT_QUALIFIED',
    `Change ${change} at revision ${answer.revision} does not qualify: ` +
      `${failures.length === 0 ? 'no receipt' : failures.join(', ')}`,
    {
      hint: nextStepOf(answer.next, change),
      details: { failures: answer.failures.map((failure) => ({ ...failure })), next: { ...answer.next } },
    },
  );
}
