/**
 * The attempt mutations `heartbeat`, `cancel` and `reconcile`.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import { sameExecutor } from '../../contracts/task/common.js';
import { mutationRequestDigest, type TaskMutationRequest } from '../../contracts/task/requests.js';
import { updateAttempt } from '../attempt-rows.js';
import type { TaskContext } from '../context.js';
import { requireCurrentSubject } from '../derive.js';
import { setLastFence } from '../journal-rows.js';
import { type RequestKind } from '../request-rows.js';
import { observeAttempt } from '../views.js';
import {
  leaseExpired,
  notActive,
  requireActor,
  requireChangeExists,
  requireExecutor,
  requireFence,
  requireHolder,
} from './checks.js';
import { commitOutcome, notRetainedWithoutJournal, transition } from './idempotency.js';
import { retainedTaskAndAttempt } from './lookups.js';

/**
 * `heartbeat`, `cancel`, `reconcile` (docs/agent-tasks.md "Idempotency", "State machine"): exact
 * task/attempt/execution/executor/fence binding. A heartbeat renews a live
 * lease of the current subject and enrollment; cancel stops the holder's attempt (execution
 * stays uncertain); reconcile — any authorized actor — supersedes an unfinished attempt with a
 * strictly greater fence and records both fences.
 */
export function mutationOperation(ctx: TaskContext, request: TaskMutationRequest): JsonValue {
  requireActor(ctx, request.agent);
  const digest = mutationRequestDigest(request);
  const kind: RequestKind = request.action;
  // No compilation precedes a mutation: the exact-retry lookup is the first step inside the
  // guarded transaction, before any subject or enrollment recheck.
  return transition(
    ctx,
    request.action,
    request.request_id,
    kind,
    digest,
    (scope) => {
      const { journal, auth, nowMs } = scope;
      const { task, attempt: retained } = retainedTaskAndAttempt(ctx, journal, request);
      if (request.execution_operation_id !== retained.attempt.execution_operation_id) {
        throw new AgentscmError(
          'TASK_BINDING_MISMATCH',
          `attempt ${retained.attempt.attempt_id} has execution operation ` +
            `${retained.attempt.execution_operation_id}, not ${request.execution_operation_id}`,
          { details: { field: 'execution_operation_id' } },
        );
      }
      if (!sameExecutor(request.executor, retained.attempt.executor)) {
        throw new AgentscmError(
          'TASK_BINDING_MISMATCH',
          `the request names another executor than attempt ${retained.attempt.attempt_id}`,
          { details: { field: 'executor' } },
        );
      }
      requireFence(retained, request.fence);
      const view = observeAttempt(retained, nowMs);
      const attemptId = retained.attempt.attempt_id;
      const base = {
        task_id: task.task.task_id,
        task_digest: task.digest,
        attempt_id: attemptId,
        attempt_digest: retained.digest,
        fence: retained.attempt.fence,
      };
      let response: JsonObject;
      if (request.action === 'heartbeat') {
        requireHolder(ctx, retained);
        if (view === 'expired') leaseExpired(retained);
        if (view !== 'leased') notActive(retained, view);
        requireCurrentSubject(auth, task.task.subject);
        requireExecutor(auth, task.task, retained.attempt.executor);
        const expires = nowMs + Number(retained.attempt.lease_ms);
        if (!updateAttempt(journal, retained, ['active'], { lease_expires_at_ms: expires }, nowMs))
          throw new AgentscmError('INTERNAL', 'the attempt changed inside its transaction');
        response = { status: 'renewed', ...base, lease_expires_at_ms: expires };
      } else if (request.action === 'cancel') {
        requireHolder(ctx, retained);
        if (view !== 'leased' && view !== 'expired') notActive(retained, view);
        requireChangeExists(auth, task.task);
        if (!updateAttempt(journal, retained, ['active'], { state: 'cancelled' }, nowMs))
          throw new AgentscmError('INTERNAL', 'the attempt changed inside its transaction');
        response = { status: 'cancelled', ...base, execution_uncertain: true };
      } else {
        if (view === 'finished') notActive(retained, view);
        requireChangeExists(auth, task.task);
        const newFence = task.last_fence + 1n;
        if (
          !updateAttempt(
            journal,
            retained,
            ['active', 'cancelled'],
            { state: 'replaced', superseded_by_fence: newFence },
            nowMs,
          )
        ) {
          throw new AgentscmError('INTERNAL', 'the attempt changed inside its transaction');
        }
        setLastFence(journal, task, newFence);
        response = {
          status: 'reconciled',
          ...base,
          supersession: { old_fence: retained.attempt.fence, new_fence: newFence },
          execution_uncertain: true,
        };
      }
      return commitOutcome(scope, ctx.actor, request.request_id, kind, digest, task.task.task_id, attemptId, response);
    },
    notRetainedWithoutJournal(request.task_id),
  );
}
