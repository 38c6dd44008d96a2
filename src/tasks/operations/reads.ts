/**
 * The side-effect-free reads of the current subject: `requirements` (every task with its local
 * state) and `next` (the one next thing to do).
 */
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import { subjectToJson } from '../../contracts/task/subject.js';
import { taskToJson } from '../../contracts/task/task.js';
import { stepCollectorProfileId } from '../../native/collector-commands.js';
import type { Authority } from '../../native/store.js';
import type { Journal } from '../../workflows/journal.js';
import { currentAttempt, currentAttemptOf } from '../attempt-rows.js';
import { nowOf, type TaskContext } from '../context.js';
import type { DerivedSubject, DerivedTask } from '../derive.js';
import { olderUnresolvedTaskId, retainedSeqOf } from '../journal-rows.js';
import { readAuthority, readJournal } from '../transition.js';
import { firstIncompleteDependency, observeAttempt } from '../views.js';
import { deriveCurrent } from './lookups.js';

/** One task row of a requirements answer (state is the read-time local view). */
export type RequirementsTaskRow = {
  readonly task_id: string;
  readonly task_digest: string;
  readonly step_id: string;
  readonly action_kind: string;
  readonly required: boolean;
  readonly progression: string;
  readonly needs: string[];
  /** 'controller_only', 'pending' or the current attempt's observed state. */
  readonly state: string;
  /** The step a pending claimable task waits for, or null. */
  readonly waiting_for: string | null;
  readonly attempt_id: string | null;
  readonly qualifying: boolean;
};

/** The `requirements` answer: the subject (without step_id) and every task row, in plan order. */
export type RequirementsAnswer = {
  readonly subject: JsonObject;
  readonly tasks: RequirementsTaskRow[];
};

/** The one next thing to do, as `next` answers it. */
export type NextStep =
  | { readonly operation: 'reconcile'; readonly task_id: string; readonly reason: string }
  | { readonly operation: 'claim'; readonly task_id: string; readonly task_digest: string }
  | {
      readonly operation: 'collector_claim';
      readonly task_id: string;
      readonly task_digest: string;
      readonly collector_profile_id: string;
    }
  | { readonly operation: 'none' };

function taskRow(
  auth: Authority,
  journal: Journal | null,
  derived: DerivedSubject,
  entry: DerivedTask,
  nowMs: number,
): RequirementsTaskRow {
  const attempt = journal === null ? null : currentAttemptOf(journal, entry.task.task_id);
  const view = attempt === null ? null : observeAttempt(attempt, nowMs);
  const claimable = entry.task.entrypoint.progression === 'claim';
  const state = !claimable ? 'controller_only' : view === null ? 'pending' : view;
  const blockedBy = claimable && view === null ? firstIncompleteDependency(auth, journal, derived, entry) : null;
  return {
    task_id: entry.task.task_id,
    task_digest: entry.digest,
    step_id: entry.task.subject.step_id,
    action_kind: entry.task.action_kind,
    required: entry.task.required,
    progression: entry.task.entrypoint.progression,
    needs: [...entry.task.needs],
    state,
    waiting_for: blockedBy,
    attempt_id: attempt === null ? null : attempt.attempt.attempt_id,
    qualifying: false,
  };
}

/** `requirements`: every task of the current subject with its local state (side-effect free). */
export function requirementsOperation(ctx: TaskContext): JsonValue {
  return ctx.guard(ctx.actor, 'requirements', () => {
    const derived = deriveCurrent(ctx);
    const nowMs = nowOf(ctx);
    return readAuthority(ctx, (auth) =>
      readJournal(
        ctx,
        () =>
          subjectAnswer(
            derived,
            derived.tasks.map((entry) => taskRow(auth, null, derived, entry, nowMs)),
          ),
        (journal) =>
          subjectAnswer(
            derived,
            derived.tasks.map((entry) => taskRow(auth, journal, derived, entry, nowMs)),
          ),
      ),
    );
  });
}

/** The subject fields shared by every task of a derivation (each task adds its step_id). */
function subjectBaseJson(derived: DerivedSubject): JsonObject {
  const { step_id: _step, ...base } = subjectToJson({ ...derived.base, step_id: 'x' });
  return base;
}

function subjectAnswer(derived: DerivedSubject, tasks: RequirementsTaskRow[]): RequirementsAnswer {
  return {
    subject: subjectBaseJson(derived),
    tasks,
  };
}

/**
 * `next`: the one next thing to do for the current subject, as typed data — reconcile an
 * unresolved older subject or attempt, claim the first claimable pending task whose dependencies
 * are complete (collector_claim naming the profile when its step has an installed collector
 * profile), or none.
 */
export function nextOperation(ctx: TaskContext): JsonValue {
  return ctx.guard(ctx.actor, 'next', () => {
    const derived = deriveCurrent(ctx);
    const nowMs = nowOf(ctx);
    const choose = (auth: Authority, journal: Journal | null): NextStep => {
      for (const entry of derived.tasks) {
        if (entry.task.entrypoint.progression !== 'claim') continue;
        const seq = journal === null ? null : retainedSeqOf(journal, entry.task.task_id);
        if (journal !== null) {
          const older = olderUnresolvedTaskId(journal, entry.task, seq);
          if (older !== null) return { operation: 'reconcile', task_id: older, reason: 'prior_subject_unresolved' };
        }
        const attempt = journal === null || seq === null ? null : currentAttempt(journal, { seq });
        if (attempt !== null) {
          const view = observeAttempt(attempt, nowMs);
          if (view === 'expired' || view === 'cancelled')
            return { operation: 'reconcile', task_id: entry.task.task_id, reason: `attempt_${view}` };
          continue;
        }
        if (firstIncompleteDependency(auth, journal, derived, entry) !== null) continue;
        // A step with an installed collector profile is claimed with collector_claim, never a plain claim.
        const profileId = stepCollectorProfileId(auth, {
          repository: derived.base.repository,
          workflow_profile: derived.base.profile,
          step: entry.task.subject.step_id,
        });
        if (profileId !== null)
          return {
            operation: 'collector_claim',
            task_id: entry.task.task_id,
            task_digest: entry.digest,
            collector_profile_id: profileId,
          };
        return { operation: 'claim', task_id: entry.task.task_id, task_digest: entry.digest };
      }
      return { operation: 'none' };
    };
    const next = readAuthority(ctx, (auth) =>
      readJournal(
        ctx,
        () => choose(auth, null),
        (journal) => choose(auth, journal),
      ),
    );
    const chosen = 'task_digest' in next ? derived.tasks.find((t) => t.task.task_id === next.task_id) : undefined;
    return {
      subject: subjectBaseJson(derived),
      next,
      task: chosen === undefined ? null : taskToJson(chosen.task),
    };
  });
}
