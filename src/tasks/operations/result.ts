/**
 * `result`: retention of an agent assertion or a registered observation as nonpassing material.
 */
import { verifyObservation } from '../../contracts/collector/observation.js';
import { AgentscmError } from '../../contracts/errors.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import { hexToBytes } from '../../contracts/task/common.js';
import {
  resultRequestDigest,
  validateAssertionForTask,
  type TaskResultAssertion,
} from '../../contracts/task/result.js';
import { journalStatement, type Journal } from '../../workflows/journal.js';
import { insertAssertion } from '../assertion-rows.js';
import { updateAttempt } from '../attempt-rows.js';
import type { TaskContext } from '../context.js';
import { requireCurrentSubject } from '../derive.js';
import { observeAttempt } from '../views.js';
import { leaseExpired, notActive, requireActor, requireExecutor, requireFence, requireHolder } from './checks.js';
import { commitOutcome, notRetainedWithoutJournal, transition } from './idempotency.js';
import { retainedTaskAndAttempt } from './lookups.js';

/** Whether an attempt was claimed with collector_claim (its row in the journal's collector_attempts). */
function isCollectorAttempt(journal: Journal, attemptId: string): boolean {
  return (
    journalStatement(journal, 'SELECT 1 FROM collector_attempts WHERE attempt_id = ?').get(attemptId) !== undefined
  );
}

/**
 * `result`: retain an agent assertion or a registered observation as explicitly nonpassing
 * material. A registered observation is accepted only after exact task/attempt/fence binding,
 * the current enrollment lookup through the reserved authority connection and strict Ed25519
 * verification over the observation digest.
 */
export function resultOperation(ctx: TaskContext, assertion: TaskResultAssertion): JsonValue {
  requireActor(ctx, assertion.agent);
  const digest = resultRequestDigest(assertion);
  return transition(
    ctx,
    'result',
    assertion.request_id,
    'result',
    digest,
    (scope) => {
      const { journal, auth, nowMs } = scope;
      const { task, attempt: retained } = retainedTaskAndAttempt(ctx, journal, assertion, (checked) => {
        if (checked.task.entrypoint.progression !== 'claim') {
          throw new AgentscmError(
            'TASK_CONTROLLER_ONLY',
            `task ${checked.task.task_id} is controller-only; no assertion or observation is accepted for it`,
          );
        }
      });
      requireFence(retained, assertion.fence);
      requireHolder(ctx, retained);
      const view = observeAttempt(retained, nowMs);
      if (view === 'expired') leaseExpired(retained);
      if (view !== 'leased') notActive(retained, view);
      if (isCollectorAttempt(journal, retained.attempt.attempt_id)) {
        throw new AgentscmError(
          'COLLECTOR_ATTEMPT_RESULT_REFUSED',
          `attempt ${retained.attempt.attempt_id} was claimed for a collector; only its imported transfer finishes it`,
          {
            hint: 'collect and upload the transfer (agent-task collect), or reconcile the attempt',
          },
        );
      }
      const summary = validateAssertionForTask(assertion, task.task, retained.attempt);
      requireCurrentSubject(auth, task.task.subject);
      let observation: string | null = null;
      if (assertion.trust_class === 'registered_executor_observation') {
        const registration = requireExecutor(auth, task.task, assertion.executor);
        if (registration === null)
          throw new AgentscmError('TRUST_CLASS_INVALID', 'a registered observation needs its executor binding');
        observation = verifyObservation(assertion, hexToBytes(registration.public_key)).observation_digest;
      } else {
        requireExecutor(auth, task.task, retained.attempt.executor);
      }
      insertAssertion(journal, retained, assertion, observation, nowMs);
      if (!updateAttempt(journal, retained, ['active'], { state: 'finished' }, nowMs))
        throw new AgentscmError('INTERNAL', 'the attempt changed inside its transaction');
      const response: JsonObject = {
        status: 'retained',
        task_id: task.task.task_id,
        task_digest: task.digest,
        attempt_id: retained.attempt.attempt_id,
        attempt_digest: retained.digest,
        fence: retained.attempt.fence,
        trust_class: assertion.trust_class,
        outcome: assertion.outcome,
        observation_digest: observation,
        counts: {
          passed: summary.passed,
          failed: summary.failed,
          not_claimed: summary.not_claimed,
          uncertain: summary.uncertain,
        },
        required_complete: summary.required_complete,
        qualifying: false,
      };
      return commitOutcome(
        scope,
        ctx.actor,
        assertion.request_id,
        'result',
        digest,
        task.task.task_id,
        retained.attempt.attempt_id,
        response,
      );
    },
    notRetainedWithoutJournal(assertion.task_id),
  );
}
