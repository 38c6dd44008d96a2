/**
 * `claim` (docs/agent-tasks.md): one fresh attempt for a claimable task of the current subject,
 * and the extension point of the collector claim.
 */
import { AgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import {
  attemptToJson,
  encodeAttempt,
  validateForClaim,
  type WorkflowTaskAttempt,
} from '../../contracts/task/attempt.js';
import type { AgentRef } from '../../contracts/task/common.js';
import { claimRequestDigest, type TaskClaimRequest } from '../../contracts/task/requests.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { stepCollectorProfileId } from '../../native/collector-commands.js';
import type { Authority } from '../../native/store.js';
import type { Journal } from '../../workflows/journal.js';
import {
  attemptCount,
  currentAttempt,
  executionIdUsed,
  insertAttempt,
  MAX_ATTEMPTS_PER_TASK,
} from '../attempt-rows.js';
import type { TaskContext, TaskOperation } from '../context.js';
import { findDerivedTask, requireCurrentSubject, type DerivedSubject, type DerivedTask } from '../derive.js';
import {
  findRetainedDerivedTask,
  insertTask,
  MAX_SCOPE_SCAN,
  olderUnresolvedTask,
  setLastFence,
  type RetainedTask,
} from '../journal-rows.js';
import { journalExists, readAuthority, type TransitionScope } from '../transition.js';
import { firstIncompleteDependency, observeAttempt } from '../views.js';
import { requireActor, requireExecutor } from './checks.js';
import { commitOutcome, lookupRetry, transition } from './idempotency.js';
import { deriveCurrent } from './lookups.js';

/** Deterministic attempt id of a claim (the service issues it; a retry gets the same one). */
export function attemptIdOf(taskDigestValue: string, actor: AgentRef, requestId: string, fence: bigint): string {
  const identity = [
    'agentscm.agent-workflow-attempt-id.v1',
    taskDigestValue,
    actor.owner_id,
    actor.agent_id,
    requestId,
    fence,
  ];
  return `a-${sha256Hex(encodeCanonical(identity)).slice(0, 40)}`;
}

/** The attempt a claim issues at `fence` (lease = the requested lease). */
export function attemptForClaim(request: TaskClaimRequest, fence: bigint): WorkflowTaskAttempt {
  return {
    version: 1,
    task_id: request.task_id,
    task_digest: request.task_digest,
    attempt_id: attemptIdOf(request.task_digest, request.agent, request.request_id, fence),
    claim_request_id: request.request_id,
    execution_operation_id: request.execution_operation_id,
    agent: { owner_id: request.agent.owner_id, agent_id: request.agent.agent_id },
    executor: request.executor,
    lease_ms: request.requested_lease_ms,
    fence,
  };
}

/** Every step the task needs is complete (TASK_DEPENDENCY_INCOMPLETE otherwise). */
function requireDependencies(
  auth: Authority,
  journal: Journal | null,
  derived: DerivedSubject,
  entry: DerivedTask,
): void {
  const missing = firstIncompleteDependency(auth, journal, derived, entry);
  if (missing !== null) {
    throw new AgentscmError(
      'TASK_DEPENDENCY_INCOMPLETE',
      `task ${entry.task.task_id} needs step "${missing}", which is not complete`,
      {
        hint: "complete the needed step first (its registered observation, or the authority's own check)",
        details: { step_id: missing },
      },
    );
  }
}

/**
 * A plain claim of a task whose step has an installed collector profile is refused before anything
 * is opened for writing (TASK_COLLECTOR_CLAIM_REQUIRED): only the collector claim produces evidence
 * that qualifies, and a plain claim's lease would only block it.
 */
function requireNoCollectorProfile(ctx: TaskContext, entry: DerivedTask): void {
  const task = entry.task;
  const profileId = readAuthority(ctx, (auth) =>
    stepCollectorProfileId(auth, {
      repository: task.subject.repository,
      workflow_profile: task.subject.profile,
      step: task.subject.step_id,
    }),
  );
  if (profileId === null) return;
  throw new AgentscmError(
    'TASK_COLLECTOR_CLAIM_REQUIRED',
    `task ${task.task_id} (step "${task.subject.step_id}") is collected under collector profile ${profileId}; ` +
      'a plain claim is refused and took no lease',
    {
      hint:
        `claim it with collector_claim: agentscm agent-task claim --profile ${profileId} --task ${task.task_id} ` +
        '--change CHANGE --token-file FILE --out DESCRIPTOR (qualification prints the full line)',
      details: { task_id: task.task_id, collector_profile_id: profileId },
    },
  );
}

/**
 * A claim that finds no journal is first checked against the authority alone, as against an
 * empty journal (no retained task: no attempt, no older subject, no used execution identity), so
 * that a refused claim creates no journal. The transition then checks everything again.
 */
function precheckWithoutJournal(
  ctx: TaskContext,
  derived: DerivedSubject,
  entry: DerivedTask,
  request: TaskClaimRequest,
): void {
  ctx.guard(ctx.actor, 'claim', () => {
    if (journalExists(ctx)) return;
    readAuthority(ctx, (auth) => {
      requireCurrentSubject(auth, derived.base);
      requireExecutor(auth, entry.task, request.executor);
      requireDependencies(auth, null, derived, entry);
    });
    validateForClaim(attemptForClaim(request, 1n), request);
  });
}

/**
 * A claim's answer: the task, the attempt it opened (its wire encoding), the attempt's digest,
 * the fence this claim issued and the lease's end. An object type, so that it is a JSON value.
 */
export type ClaimAnswer = {
  readonly status: 'claimed';
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt: JsonObject;
  readonly attempt_digest: string;
  readonly fence: bigint;
  readonly lease_expires_at_ms: number;
};

/**
 * What a collector claim (src/tasks/collector/claim.ts) adds to a claim: the operation the guard
 * sees, the digest the request id is bound to (it covers the collector request, not only the
 * claim), a check of the derived task before anything is opened for writing, a recheck inside
 * the transition, and the rows and answer (`A`) written in the same journal transaction.
 */
export interface ClaimExtension<A extends JsonObject> {
  readonly operation: TaskOperation;
  readonly digest: string;
  /**
   * A finite-review collector claim: the controller-only review task is claimed for the review
   * collector (docs/review.md "Collecting a review"); no other claim reaches one.
   */
  readonly claimsReview?: boolean;
  check(entry: DerivedTask): void;
  recheck(scope: TransitionScope, entry: DerivedTask): void;
  extend(
    scope: TransitionScope,
    claimed: {
      readonly entry: DerivedTask;
      readonly attempt: WorkflowTaskAttempt;
      readonly attempt_digest: string;
      readonly lease_expires_at_ms: number;
    },
    response: ClaimAnswer,
  ): A;
}

/**
 * `claim`: one fresh attempt for a claimable task of the current subject. Inside the serialized
 * transaction: subject and enrollment recheck, no current attempt, dependencies complete, the
 * bounded scan of older subjects, a fresh execution identity, then the next fence.
 */
export function claimOperation<A extends JsonObject>(
  ctx: TaskContext,
  request: TaskClaimRequest,
  extension?: ClaimExtension<A>,
): JsonValue {
  requireActor(ctx, request.agent);
  const digest = extension?.digest ?? claimRequestDigest(request);
  const operation: TaskOperation = extension?.operation ?? 'claim';
  const retry = lookupRetry(ctx, operation, request.request_id, 'claim', digest);
  if (retry !== null) return retry;
  const derived = deriveCurrent(ctx);
  const entry = findDerivedTask(derived, request.task_id, request.task_digest);
  const reviewCollection = extension?.claimsReview === true && entry.step.action.kind === 'review';
  if (entry.task.entrypoint.progression !== 'claim' && !reviewCollection) {
    throw new AgentscmError(
      'TASK_CONTROLLER_ONLY',
      `task ${entry.task.task_id} (${entry.task.action_kind} step "${entry.task.subject.step_id}") is ` +
        `controller-only and cannot be claimed`,
      {
        hint: 'the authority evaluates this step itself; claim a task whose progression is claim',
      },
    );
  }
  if (extension === undefined) requireNoCollectorProfile(ctx, entry);
  extension?.check(entry);
  precheckWithoutJournal(ctx, derived, entry, request);
  return transition(
    ctx,
    operation,
    request.request_id,
    'claim',
    digest,
    (scope) => {
      const { journal, auth, nowMs } = scope;
      requireCurrentSubject(auth, derived.base);
      requireExecutor(auth, entry.task, request.executor);
      extension?.recheck(scope, entry);
      // A task is retained by its first claim. One that is not retained yet has no attempt, no used
      // execution identity and no issued fence; it is inserted, with the fence this claim issues,
      // only after every check below passed.
      const retained = findRetainedDerivedTask(journal, entry.task.task_id, entry.digest);
      const existing = retained === null ? null : currentAttempt(journal, retained);
      if (existing !== null) {
        const view = observeAttempt(existing, nowMs);
        throw new AgentscmError(
          'TASK_ALREADY_CLAIMED',
          `task ${entry.task.task_id} already has attempt ${existing.attempt.attempt_id} (${view})`,
          {
            hint:
              view === 'finished'
                ? 'the task has a retained result; a new checkpoint creates a new subject with fresh tasks'
                : 'wait for it, or reconcile it before a fresh claim',
            details: { attempt_id: existing.attempt.attempt_id, state: view },
          },
        );
      }
      requireDependencies(auth, journal, derived, entry);
      const unresolved = olderUnresolvedTask(journal, entry.task, retained?.seq ?? null);
      if (unresolved.exceeded) {
        throw new AgentscmError(
          'TASK_SCAN_LIMIT',
          `more than ${MAX_SCOPE_SCAN} retained tasks share Change ${entry.task.subject.change_id}, profile ` +
            `${entry.task.subject.profile} and step ${entry.task.subject.step_id}`,
          {
            hint: 'the claim fails closed; the operator must inspect the journal',
            details: { limit: MAX_SCOPE_SCAN },
          },
        );
      }
      if (unresolved.task_id !== null) {
        throw new AgentscmError(
          'TASK_PRIOR_SUBJECT_UNRESOLVED',
          `an older subject's task ${unresolved.task_id} for the same Change, profile and step has an unresolved ` +
            `attempt`,
          {
            hint: `reconcile task ${unresolved.task_id} first`,
            details: { task_id: unresolved.task_id },
          },
        );
      }
      if (retained !== null && executionIdUsed(journal, retained, request.execution_operation_id)) {
        throw new AgentscmError(
          'TASK_EXECUTION_ID_REUSED',
          `execution operation ${request.execution_operation_id} was already used for task ${entry.task.task_id}`,
          {
            hint: 'a fresh claim needs a fresh execution_operation_id',
          },
        );
      }
      if (retained !== null && attemptCount(journal, retained) >= MAX_ATTEMPTS_PER_TASK) {
        throw new AgentscmError(
          'TASK_ATTEMPT_LIMIT',
          `task ${entry.task.task_id} already has ${MAX_ATTEMPTS_PER_TASK} attempts`,
          { hint: 'checkpoint to get a new subject' },
        );
      }
      const fence = (retained?.last_fence ?? 0n) + 1n;
      const attempt = attemptForClaim(request, fence);
      validateForClaim(attempt, request);
      const encoded = encodeAttempt(attempt);
      const expires = nowMs + Number(attempt.lease_ms);
      let task: RetainedTask;
      if (retained === null) {
        task = insertTask(journal, entry.task, entry.digest, fence, nowMs, entry.canonical);
      } else {
        task = retained;
        setLastFence(journal, retained, fence);
      }
      insertAttempt(journal, task, attempt, encoded, expires, nowMs);
      const response: ClaimAnswer = {
        status: 'claimed',
        task_id: entry.task.task_id,
        task_digest: entry.digest,
        attempt: attemptToJson(attempt),
        attempt_digest: encoded.digest,
        fence,
        lease_expires_at_ms: expires,
      };
      const answer: ClaimAnswer | A =
        extension === undefined
          ? response
          : extension.extend(
              scope,
              { entry, attempt, attempt_digest: encoded.digest, lease_expires_at_ms: expires },
              response,
            );
      return commitOutcome(
        scope,
        ctx.actor,
        request.request_id,
        'claim',
        digest,
        entry.task.task_id,
        attempt.attempt_id,
        answer,
      );
    },
    null,
  );
}
