/**
 * Recovery projections (docs/agent-tasks.md "Status and recovery"): a side-effect-free read that tells the caller what
 * became of one request it sent — confirmed, conclusive_rejection or uncertain_effect — with the
 * observed state of the attempt, typed effects, an explicit fence supersession and the permitted
 * actions from the contract's rule functions. It never dispatches, replays or creates anything.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { attemptDigest } from '../contracts/task/attempt.js';
import type { RecoveredRequest } from '../contracts/task/operations.js';
import {
  buildRecoveryEnvelope,
  recoveryEnvelopeToJson,
  type ConfirmedEffect,
  type FenceSupersession,
  type ObservedState,
  type RecoveryFacts,
  type RecoveryIdentity,
  type UnresolvedEffect,
} from '../contracts/task/recovery.js';
import { claimRequestDigest, mutationRequestDigest, type TaskClaimRequest } from '../contracts/task/requests.js';
import { resultRequestDigest } from '../contracts/task/result.js';
import type { Journal } from '../workflows/journal.js';
import { currentAttempt, findAttempt, latestAttempt, type RetainedAttempt } from './attempt-rows.js';
import { nowOf, type TaskContext } from './context.js';
import { findDerivedTask } from './derive.js';
import { findRetainedTask } from './journal-rows.js';
import { requireActor, requireTaskInScope } from './operations/checks.js';
import { attemptForClaim } from './operations/claim.js';
import { deriveCurrent } from './operations/lookups.js';
import { findRequest } from './request-rows.js';
import { readJournal } from './transition.js';
import { executionMayStillRun, observeAttempt } from './views.js';

const CONFIRMED_BY_KIND: Record<RecoveredRequest['kind'], ConfirmedEffect> = {
  claim: 'attempt_claimed',
  heartbeat: 'lease_renewed',
  cancel: 'attempt_cancelled',
  reconcile: 'attempt_superseded',
  result: 'assertion_retained',
};

function requestDigestOf(recovered: RecoveredRequest): string {
  switch (recovered.kind) {
    case 'claim':
      return claimRequestDigest(recovered.request);
    case 'result':
      return resultRequestDigest(recovered.request);
    default:
      return mutationRequestDigest(recovered.request);
  }
}

function agentOf(recovered: RecoveredRequest) {
  return recovered.request.agent;
}

interface Located {
  /** The attempt the observed state describes, or null (none, or not known). */
  readonly attempt: RetainedAttempt | null;
  /** The request's own commitment was found and matches. */
  readonly committed: boolean;
  /** The task the request names exists with the request's digest (retained, or derived and claimable). */
  readonly taskKnown: boolean;
  /** The highest fence issued for the task (null: not retained). */
  readonly lastFence: bigint | null;
}

const NOT_FOUND: Located = { attempt: null, committed: false, taskKnown: false, lastFence: null };

/**
 * The attempt the envelope describes. A committed request describes its own attempt. A request
 * that never committed is matched only by its own names: the task must be retained with the
 * request's digest (a claim's observed state is then the task's existing attempt, which is
 * never reported as its own), and a mutation's or result's attempt must have the request's
 * digest; anything else is unknown.
 */
function locate(journal: Journal, ctx: TaskContext, recovered: RecoveredRequest): Located {
  const requestId = recovered.request.request_id;
  const retained = findRequest(journal, ctx.actor, requestId);
  if (retained !== null) {
    if (retained.kind !== recovered.kind || retained.request_digest !== requestDigestOf(recovered)) {
      throw new AgentscmError(
        'TASK_REQUEST_CONFLICT',
        `request id ${requestId} was committed as a ${retained.kind} with other bytes`,
        {
          hint: 'recovery needs the exact request that was sent',
          details: { request_id: requestId, retained_kind: retained.kind },
        },
      );
    }
    const task = findRetainedTask(journal, retained.task_id);
    if (task !== null) requireTaskInScope(ctx, task.task);
    return {
      attempt: task === null ? null : findAttempt(journal, task, retained.attempt_id),
      committed: true,
      taskKnown: task !== null,
      lastFence: task?.last_fence ?? null,
    };
  }
  const task = findRetainedTask(journal, recovered.request.task_id);
  if (task === null || task.digest !== recovered.request.task_digest) return NOT_FOUND;
  requireTaskInScope(ctx, task.task);
  if (recovered.kind === 'claim') {
    // A claim that was never committed: the task's current (or newest) attempt, if any, is observed.
    return {
      attempt: currentAttempt(journal, task) ?? latestAttempt(journal, task),
      committed: false,
      taskKnown: true,
      lastFence: task.last_fence,
    };
  }
  const attempt = findAttempt(journal, task, recovered.request.attempt_id);
  return {
    attempt: attempt !== null && attempt.digest === recovered.request.attempt_digest ? attempt : null,
    committed: false,
    taskKnown: true,
    lastFence: task.last_fence,
  };
}

/**
 * Whether a task the journal does not retain is a claimable task of the current subject with
 * the claim's exact digest; without a subject in the context it cannot be checked (false).
 */
function claimableNow(ctx: TaskContext, request: TaskClaimRequest): boolean {
  if (ctx.subject === undefined) return false;
  try {
    const entry = findDerivedTask(deriveCurrent(ctx), request.task_id, request.task_digest);
    return entry.task.entrypoint.progression === 'claim';
  } catch (error) {
    if (error instanceof AgentscmError && (error.code === 'TASK_NOT_FOUND' || error.code === 'TASK_STALE'))
      return false;
    throw error;
  }
}

/**
 * `recovery`: the envelope of one request (docs/agent-tasks.md "Status and recovery"). A committed request reports its
 * confirmed effect; an expired, cancelled or replaced attempt adds execution_may_still_run; a
 * replaced attempt carries its supersession (old and strictly greater new fence). A request
 * that never committed is a conclusive rejection whose only retry permission is for pending.
 */
export function recoveryOperation(ctx: TaskContext, recovered: RecoveredRequest): JsonValue {
  requireActor(ctx, agentOf(recovered));
  return ctx.guard(ctx.actor, 'recovery', () => {
    const nowMs = nowOf(ctx);
    const located = readJournal<Located>(
      ctx,
      () => NOT_FOUND,
      (journal) => locate(journal, ctx, recovered),
    );
    const attempt = located.attempt;
    let identity: RecoveryIdentity;
    let fence: bigint;
    let observed: ObservedState;
    let supersession: FenceSupersession | null = null;
    if (located.committed && attempt !== null) {
      // The request's own attempt: the one its commitment names.
      identity = {
        request_id: recovered.request.request_id,
        request_kind: recovered.kind,
        task_id: attempt.attempt.task_id,
        task_digest: attempt.attempt.task_digest,
        attempt_id: attempt.attempt.attempt_id,
        attempt_digest: attempt.digest,
        execution_operation_id: attempt.attempt.execution_operation_id,
      };
      fence = attempt.attempt.fence;
      observed = observeAttempt(attempt, nowMs);
      supersession = supersessionOf(attempt);
    } else if (recovered.kind === 'claim') {
      // The envelope names the attempt this exact claim would be issued now (its next fence), so
      // that an identical retry stays bound to it; another claim's attempt is only observed.
      const prospective = attemptForClaim(recovered.request, (located.lastFence ?? 0n) + 1n);
      identity = {
        request_id: recovered.request.request_id,
        request_kind: 'claim',
        task_id: prospective.task_id,
        task_digest: prospective.task_digest,
        attempt_id: prospective.attempt_id,
        attempt_digest: attemptDigest(prospective),
        execution_operation_id: prospective.execution_operation_id,
      };
      fence = prospective.fence;
      if (attempt !== null) observed = observeAttempt(attempt, nowMs);
      else observed = located.taskKnown || claimableNow(ctx, recovered.request) ? 'pending' : 'unknown';
    } else {
      const named = recovered.request;
      identity = {
        request_id: named.request_id,
        request_kind: recovered.kind,
        task_id: named.task_id,
        task_digest: named.task_digest,
        attempt_id: named.attempt_id,
        attempt_digest: named.attempt_digest,
        execution_operation_id: named.execution_operation_id,
      };
      fence = named.fence;
      observed = attempt === null ? 'unknown' : observeAttempt(attempt, nowMs);
      // A supersession is reported only of the fence the request holds.
      if (attempt !== null && attempt.attempt.fence === named.fence) supersession = supersessionOf(attempt);
    }
    const confirmed: ConfirmedEffect[] = located.committed ? [CONFIRMED_BY_KIND[recovered.kind]] : [];
    const unresolved: UnresolvedEffect[] = [];
    if (located.committed && attempt !== null && recovered.kind !== 'result') {
      const view = observeAttempt(attempt, nowMs);
      if (executionMayStillRun(view)) unresolved.push('execution_may_still_run');
    }
    const facts: RecoveryFacts = {
      observed_state: observed,
      confirmed_effects: confirmed,
      unresolved_effects: unresolved,
      supersession,
      fence,
    };
    return recoveryEnvelopeToJson(buildRecoveryEnvelope(identity, facts));
  });
}

/** The recorded supersession of a replaced attempt (old fence = the attempt's), else null. */
function supersessionOf(attempt: RetainedAttempt): FenceSupersession | null {
  return attempt.state === 'replaced' && attempt.superseded_by_fence !== null
    ? { old_fence: attempt.attempt.fence, new_fence: attempt.superseded_by_fence }
    : null;
}
