/**
 * Request idempotency of the task transitions: a request id is scoped to the authenticated owner
 * and agent and bound to its kind and exact canonical bytes; an identical committed retry returns
 * the retained outcome bytes, other bytes are TASK_REQUEST_CONFLICT.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import type { AgentRef } from '../../contracts/task/common.js';
import type { Journal } from '../../workflows/journal.js';
import type { TaskContext, TaskOperation } from '../context.js';
import { findRequest, insertRequest, type RequestKind } from '../request-rows.js';
import { readJournal, runTransition, type TransitionScope } from '../transition.js';
import { taskNotRetained } from './checks.js';

function requestConflict(requestId: string, kind: RequestKind, retainedKind: RequestKind): never {
  throw new AgentscmError(
    'TASK_REQUEST_CONFLICT',
    retainedKind === kind
      ? `request id ${requestId} was already used by this actor for a ${kind} with other bytes`
      : `request id ${requestId} was already used by this actor for a ${retainedKind}, not a ${kind}`,
    {
      hint: 'use a fresh request_id for every new request; retry only with the identical bytes',
      details: { request_id: requestId, retained_kind: retainedKind },
    },
  );
}

function retainedOutcome(
  journal: Journal,
  actor: AgentRef,
  requestId: string,
  kind: RequestKind,
  digest: string,
): JsonValue | null {
  const retained = findRequest(journal, actor, requestId);
  if (retained === null) return null;
  if (retained.kind !== kind || retained.request_digest !== digest) requestConflict(requestId, kind, retained.kind);
  return retained.response;
}

/**
 * An exact committed retry is looked up after current authorization and before any compilation
 * (docs/agent-tasks.md "Idempotency": it returns the retained view even after source, policy or
 * enrollment drift).
 */
export function lookupRetry(
  ctx: TaskContext,
  operation: TaskOperation,
  requestId: string,
  kind: RequestKind,
  digest: string,
): JsonValue | null {
  return ctx.guard(ctx.actor, operation, () =>
    readJournal(
      ctx,
      () => null,
      (journal) => retainedOutcome(journal, ctx.actor, requestId, kind, digest),
      true,
    ),
  );
}

/** Commit the outcome with its request binding and return it exactly as a retry will see it. */
export function commitOutcome(
  scope: TransitionScope,
  actor: AgentRef,
  requestId: string,
  kind: RequestKind,
  digest: string,
  taskId: string,
  attemptId: string,
  response: JsonObject,
): JsonValue {
  return insertRequest(scope.journal, actor, requestId, kind, digest, taskId, attemptId, response, scope.nowMs);
}

/** A transition's refusal when there is no journal: the named task cannot be retained (nothing is created). */
export function notRetainedWithoutJournal(taskId: string): () => never {
  return () => {
    throw taskNotRetained(taskId);
  };
}

/**
 * Run a transition, first re-checking inside the journal transaction for a concurrent identical
 * request. `whenMissing` refuses a request that finds no journal, without creating one; null
 * (a claim) creates it.
 */
export function transition(
  ctx: TaskContext,
  operation: TaskOperation,
  requestId: string,
  kind: RequestKind,
  digest: string,
  body: (scope: TransitionScope) => JsonValue,
  whenMissing: (() => never) | null,
): JsonValue {
  return runTransition(
    ctx,
    operation,
    (scope) => retainedOutcome(scope.journal, ctx.actor, requestId, kind, digest) ?? body(scope),
    whenMissing,
  );
}
