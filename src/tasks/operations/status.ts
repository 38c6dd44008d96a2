/**
 * `status`: the exact-attempt read of a retained task and attempt, with its applicability.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import type { TaskStatusRequest } from '../../contracts/task/requests.js';
import type { Journal } from '../../workflows/journal.js';
import { findAssertion } from '../assertion-rows.js';
import { nowOf, type TaskContext } from '../context.js';
import { requireCurrentSubject } from '../derive.js';
import { readAuthority, readJournal } from '../transition.js';
import { assertionView, attemptView, observeAttempt } from '../views.js';
import { requireExecutor } from './checks.js';
import { retainedTaskAndAttempt } from './lookups.js';

/**
 * `status`: a side-effect-free exact-attempt read of the retained task and attempt, after
 * authorization, even when the subject or enrollment is stale; currently_applicable is reported
 * separately from the retained outcome.
 */
export function statusOperation(ctx: TaskContext, request: TaskStatusRequest): JsonValue {
  return ctx.guard(ctx.actor, 'status', () => {
    const nowMs = nowOf(ctx);
    const journal = openStatusJournal(ctx);
    return journal((j) => {
      const { task, attempt } = retainedTaskAndAttempt(ctx, j, request);
      const assertion = findAssertion(j, attempt);
      return readAuthority(ctx, (auth) => {
        const view = observeAttempt(attempt, nowMs);
        let subjectCurrent = true;
        try {
          requireCurrentSubject(auth, task.task.subject);
        } catch (error) {
          if (!(error instanceof AgentscmError) || error.code !== 'TASK_STALE') throw error;
          subjectCurrent = false;
        }
        let registrationCurrent: boolean | null = null;
        if (attempt.attempt.executor !== null) {
          try {
            requireExecutor(auth, task.task, attempt.attempt.executor);
            registrationCurrent = true;
          } catch (error) {
            if (
              !(error instanceof AgentscmError) ||
              (error.code !== 'REGISTRATION_NOT_CURRENT' && error.code !== 'TASK_BINDING_MISMATCH')
            )
              throw error;
            registrationCurrent = false;
          }
        }
        const applicable = subjectCurrent && view === 'leased' && registrationCurrent !== false;
        return {
          task_id: task.task.task_id,
          task_digest: task.digest,
          ...attemptView(attempt, nowMs),
          currently_applicable: applicable,
          applicability: {
            subject_current: subjectCurrent,
            lease_live: view === 'leased',
            registration_current: registrationCurrent,
          },
          assertion: assertionView(auth, task.task, assertion),
        };
      });
    });
  });
}

function openStatusJournal(ctx: TaskContext): <T>(body: (journal: Journal) => T) => T {
  return <T>(body: (journal: Journal) => T): T =>
    readJournal<T>(
      ctx,
      () => {
        throw new AgentscmError(
          'WORKFLOW_JOURNAL_NOT_INITIALIZED',
          `the workflow journal does not exist in ${ctx.store.dataDir}; nothing was created`,
          {
            hint: 'no task was ever claimed in this data directory',
          },
        );
      },
      body,
    );
}
