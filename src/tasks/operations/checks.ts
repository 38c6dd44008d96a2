/**
 * The shared checks of the task operations: actor, repository scope, exact task/attempt/fence
 * binding, holder, lease and enrollment. Each throws the typed refusal of docs/agent-tasks.md.
 */
import { AgentscmError } from '../../contracts/errors.js';
import { sameAgent, type AgentRef, type ExecutorBinding } from '../../contracts/task/common.js';
import type { WorkflowTask } from '../../contracts/task/task.js';
import { getChange } from '../../native/changes.js';
import { requireCurrentRegistration } from '../../native/executor-registry.js';
import { resolveRepository } from '../../native/repositories.js';
import type { Authority } from '../../native/store.js';
import type { RetainedAttempt } from '../attempt-rows.js';
import type { TaskContext } from '../context.js';
import type { RetainedTask } from '../journal-rows.js';

/** The request's actor must be the authenticated one: request JSON never selects an actor. */
export function requireActor(ctx: TaskContext, agent: AgentRef): void {
  if (!sameAgent(agent, ctx.actor)) {
    throw new AgentscmError(
      'TASK_ACTOR_MISMATCH',
      `the request names ${agent.owner_id}/${agent.agent_id}, but the authenticated actor is ` +
        `${ctx.actor.owner_id}/${ctx.actor.agent_id}`,
      {
        hint: 'send the request as the actor it names; request JSON never selects the actor',
      },
    );
  }
}

/**
 * A retained task of another repository than the grant's is not the caller's to read or change
 * (TASK_NOT_AUTHORIZED): one journal may hold tasks of several repositories of the store.
 */
export function requireTaskInScope(ctx: TaskContext, task: WorkflowTask): void {
  if (ctx.origin !== undefined && task.subject.repository !== ctx.origin.repository) {
    throw new AgentscmError(
      'TASK_NOT_AUTHORIZED',
      `task ${task.task_id} belongs to repository ${task.subject.repository}, not to the grant's repository ` +
        `${ctx.origin.repository}`,
      {
        hint: "use a grant for the task's repository",
      },
    );
  }
}

function taskScope(task: WorkflowTask) {
  return { repository: task.subject.repository, profile: task.subject.profile, step: task.subject.step_id };
}

/** Current enrollment of the executor an attempt or observation names (REGISTRATION_NOT_CURRENT otherwise). */
export function requireExecutor(auth: Authority, task: WorkflowTask, executor: ExecutorBinding | null) {
  return executor === null ? null : requireCurrentRegistration(auth, taskScope(task), executor);
}

export function taskNotRetained(taskId: string): AgentscmError {
  return new AgentscmError('TASK_NOT_FOUND', `the journal retains no task ${taskId}`, {
    hint: 'claim the task first; attempts exist only for claimed tasks',
    details: { task_id: taskId },
  });
}

export function requireTaskDigest(retained: RetainedTask, taskDigestValue: string): RetainedTask {
  if (retained.digest !== taskDigestValue) {
    throw new AgentscmError(
      'TASK_BINDING_MISMATCH',
      `task ${retained.task.task_id} is retained with digest ${retained.digest}, not ${taskDigestValue}`,
      { details: { field: 'task_digest' } },
    );
  }
  return retained;
}

/** The exact retained attempt of a checked task (TASK_ATTEMPT_NOT_FOUND, TASK_BINDING_MISMATCH otherwise). */
export function requireAttempt(
  task: RetainedTask,
  retained: RetainedAttempt | null,
  attemptId: string,
  attemptDigestValue: string,
): RetainedAttempt {
  if (retained === null || retained.attempt.task_id !== task.task.task_id) {
    throw new AgentscmError('TASK_ATTEMPT_NOT_FOUND', `task ${task.task.task_id} has no attempt ${attemptId}`, {
      hint: 'use the attempt_id returned by your claim',
      details: { attempt_id: attemptId },
    });
  }
  if (retained.digest !== attemptDigestValue) {
    throw new AgentscmError(
      'TASK_BINDING_MISMATCH',
      `attempt ${attemptId} is retained with digest ${retained.digest}, not ${attemptDigestValue}`,
      { details: { field: 'attempt_digest' } },
    );
  }
  return retained;
}

/** Exact fence binding: a replaced attempt or another fence is stale (old-fence mutations cannot finish it). */
export function requireFence(retained: RetainedAttempt, fence: bigint): void {
  if (retained.state === 'replaced') {
    throw new AgentscmError(
      'TASK_FENCE_STALE',
      `attempt ${retained.attempt.attempt_id} (fence ${retained.attempt.fence}) was superseded by fence ` +
        `${retained.superseded_by_fence ?? 0n}`,
      {
        hint: 'the attempt was reconciled; stop its execution and claim again with a fresh execution identity',
        details: { fence: fence.toString(), new_fence: (retained.superseded_by_fence ?? 0n).toString() },
      },
    );
  }
  if (fence !== retained.attempt.fence) {
    throw new AgentscmError(
      'TASK_FENCE_STALE',
      `the request carries fence ${fence}, the attempt holds fence ${retained.attempt.fence}`,
      {
        hint: 'send the fence of the attempt you hold',
        details: { fence: fence.toString(), attempt_fence: retained.attempt.fence.toString() },
      },
    );
  }
}

export function requireHolder(ctx: TaskContext, retained: RetainedAttempt): void {
  if (!sameAgent(retained.attempt.agent, ctx.actor)) {
    throw new AgentscmError(
      'TASK_ACTOR_MISMATCH',
      `attempt ${retained.attempt.attempt_id} is held by ` +
        `${retained.attempt.agent.owner_id}/${retained.attempt.agent.agent_id}`,
      {
        hint: 'only the holder heartbeats, cancels or reports an attempt; an authorized actor may reconcile it',
      },
    );
  }
}

export function notActive(retained: RetainedAttempt, view: string): never {
  throw new AgentscmError('TASK_ATTEMPT_NOT_ACTIVE', `attempt ${retained.attempt.attempt_id} is ${view}`, {
    hint:
      view === 'finished'
        ? 'the attempt already has a retained result'
        : 'reconcile the attempt, then claim again with a fresh execution identity',
    details: { state: view },
  });
}

export function leaseExpired(retained: RetainedAttempt): never {
  throw new AgentscmError(
    'TASK_LEASE_EXPIRED',
    `the lease of attempt ${retained.attempt.attempt_id} expired at ${retained.lease_expires_at_ms} ms; expiry ` +
      `does not prove that execution stopped`,
    {
      hint: 'the attempt stays uncertain until an authorized reconcile supersedes it',
      details: { lease_expires_at_ms: retained.lease_expires_at_ms },
    },
  );
}

/** Repository and Change still exist (cancel and reconcile need no current subject or enrollment). */
export function requireChangeExists(auth: Authority, task: WorkflowTask): void {
  resolveRepository(auth, task.subject.repository);
  getChange(auth, task.subject.repository, task.subject.change_id);
}
