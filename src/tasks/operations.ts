/**
 * The phase-two operations (spec "Phase-two local state machine"): requirements, next-task
 * selection, instruction and reference reads, claim, heartbeat, status, cancellation, authorized
 * reconciliation and result retention. Every operation runs under the caller's guard; new
 * transitions derive compilation first, then take guard → journal → native reservation
 * (transition.ts) and recheck the subject and enrollment through that authority connection.
 * Request ids are scoped to the authenticated owner and agent and bound to their kind and exact
 * canonical bytes; an identical committed retry returns the retained outcome bytes.
 */
import { verifyObservation } from '../contracts/collector/observation.js';
import { AgentscmError } from '../contracts/errors.js';
import {
  entrypointToJson,
  offersSupportedSchema,
  type InstructionEntrypointResponse,
  type InstructionRequest,
} from '../contracts/instruction-entrypoint.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../contracts/json/json-value.js';
import {
  REFERENCE_MAX_BYTES,
  referenceResponseForBody,
  schemaMismatch,
  type ReferenceFetchRequest,
  type ReferenceFetchResponse,
} from '../contracts/named-reference.js';
import { attemptToJson, encodeAttempt, validateForClaim, type WorkflowTaskAttempt } from '../contracts/task/attempt.js';
import {
  hexToBytes,
  sameAgent,
  sameExecutor,
  SUPPORTED_SCHEMA_VERSIONS,
  TASK_CONTRACT_VERSION,
  type AgentRef,
  type ExecutorBinding,
} from '../contracts/task/common.js';
import {
  claimRequestDigest,
  mutationRequestDigest,
  type TaskClaimRequest,
  type TaskMutationRequest,
  type TaskStatusRequest,
} from '../contracts/task/requests.js';
import { resultRequestDigest, validateAssertionForTask, type TaskResultAssertion } from '../contracts/task/result.js';
import { subjectToJson } from '../contracts/task/subject.js';
import { taskToJson, type WorkflowTask } from '../contracts/task/task.js';
import { sha256Hex } from '../crypto/sha256.js';
import { getChange } from '../native/changes.js';
import { requireCurrentRegistration } from '../native/executor-registry.js';
import { resolveRepository } from '../native/repositories.js';
import { readRevisionFile, statRevisionPath } from '../native/revisions.js';
import type { Authority } from '../native/store.js';
import { journalStatement, type Journal } from '../workflows/journal.js';
import { nowOf, type TaskContext, type TaskOperation } from './context.js';
import {
  deriveSubject,
  findDerivedTask,
  requireCurrentSubject,
  type DerivedSubject,
  type DerivedTask,
} from './derive.js';
import {
  attemptCount,
  currentAttempt,
  currentAttemptOf,
  executionIdUsed,
  findAssertion,
  findRequest,
  findRetainedDerivedTask,
  findRetainedTask,
  findTaskWithAttempt,
  insertAssertion,
  insertAttempt,
  insertRequest,
  insertTask,
  MAX_ATTEMPTS_PER_TASK,
  MAX_SCOPE_SCAN,
  olderUnresolvedTask,
  retainedSeqOf,
  setLastFence,
  updateAttempt,
  type RequestKind,
  type RetainedAttempt,
  type RetainedTask,
} from './journal-rows.js';
import { journalExists, readAuthority, readJournal, runTransition, type TransitionScope } from './transition.js';
import { assertionView, attemptView, firstIncompleteDependency, observeAttempt } from './views.js';

// ---------------------------------------------------------------- shared checks

/** Whether an attempt was claimed with collector_claim (its row in the journal's collector_attempts). */
function isCollectorAttempt(journal: Journal, attemptId: string): boolean {
  return (
    journalStatement(journal, 'SELECT 1 FROM collector_attempts WHERE attempt_id = ?').get(attemptId) !== undefined
  );
}

/** The request's actor must be the authenticated one: request JSON never selects an actor. */
export function requireActor(ctx: TaskContext, agent: AgentRef): void {
  if (!sameAgent(agent, ctx.actor)) {
    throw new AgentscmError(
      'TASK_ACTOR_MISMATCH',
      `the request names ${agent.owner_id}/${agent.agent_id}, but the authenticated actor is ${ctx.actor.owner_id}/${ctx.actor.agent_id}`,
      {
        hint: 'send the request as the actor it names; request JSON never selects the actor',
      },
    );
  }
}

function subjectSelection(ctx: TaskContext) {
  if (ctx.subject === undefined) {
    throw new AgentscmError(
      'TASK_SUBJECT_REQUIRED',
      'this operation derives the tasks of a subject and needs its Change and review context',
      {
        hint: 'pass the Change id and the context digest of its current version (agent-task call --change ID --context DIGEST)',
      },
    );
  }
  return {
    repository: ctx.repository,
    profile: ctx.profile,
    target: ctx.target,
    change_id: ctx.subject.change_id,
    context_digest: ctx.subject.context_digest,
  };
}

/** Derive the current subject of the context (read-only authority snapshot). */
export function deriveCurrent(ctx: TaskContext): DerivedSubject {
  const selection = subjectSelection(ctx);
  return readAuthority(ctx, (auth) => deriveSubject(auth, selection));
}

/**
 * A retained task of another repository than the grant's is not the caller's to read or change
 * (TASK_NOT_AUTHORIZED): one journal may hold tasks of several repositories of the store.
 */
export function requireTaskInScope(ctx: TaskContext, task: WorkflowTask): void {
  if (ctx.origin !== undefined && task.subject.repository !== ctx.origin.repository) {
    throw new AgentscmError(
      'TASK_NOT_AUTHORIZED',
      `task ${task.task_id} belongs to repository ${task.subject.repository}, not to the grant's repository ${ctx.origin.repository}`,
      {
        hint: "use a grant for the task's repository",
      },
    );
  }
}

/** A task by id: the retained canonical task when the journal has it, else the current derivation. */
function locateTask(ctx: TaskContext, taskId: string): { task: WorkflowTask; digest: string } {
  const retained = readJournal(
    ctx,
    () => null,
    (journal) => findRetainedTask(journal, taskId),
  );
  if (retained !== null) {
    requireTaskInScope(ctx, retained.task);
    return { task: retained.task, digest: retained.digest };
  }
  const derived = deriveCurrent(ctx);
  const found = findDerivedTask(derived, taskId);
  return { task: found.task, digest: found.digest };
}

function taskScope(task: WorkflowTask) {
  return { repository: task.subject.repository, profile: task.subject.profile, step: task.subject.step_id };
}

/** Current enrollment of the executor an attempt or observation names (REGISTRATION_NOT_CURRENT otherwise). */
function requireExecutor(auth: Authority, task: WorkflowTask, executor: ExecutorBinding | null) {
  return executor === null ? null : requireCurrentRegistration(auth, taskScope(task), executor);
}

function taskNotRetained(taskId: string): AgentscmError {
  return new AgentscmError('TASK_NOT_FOUND', `the journal retains no task ${taskId}`, {
    hint: 'claim the task first; attempts exist only for claimed tasks',
    details: { task_id: taskId },
  });
}

function requireTaskDigest(retained: RetainedTask, taskDigestValue: string): RetainedTask {
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
function requireAttempt(
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

/**
 * The retained task and attempt a request names, read by one statement: the task is checked
 * first (TASK_NOT_FOUND, TASK_BINDING_MISMATCH), then `between` (a check of the task that
 * precedes the attempt's), then the attempt (TASK_ATTEMPT_NOT_FOUND, TASK_BINDING_MISMATCH).
 */
function retainedTaskAndAttempt(
  ctx: TaskContext,
  journal: Journal,
  names: {
    readonly task_id: string;
    readonly task_digest: string;
    readonly attempt_id: string;
    readonly attempt_digest: string;
  },
  between: (task: RetainedTask) => void = () => undefined,
): { readonly task: RetainedTask; readonly attempt: RetainedAttempt } {
  const found = findTaskWithAttempt(journal, names.task_id, names.attempt_id);
  if (found === null) throw taskNotRetained(names.task_id);
  requireTaskInScope(ctx, found.task.task);
  const task = requireTaskDigest(found.task, names.task_digest);
  between(task);
  return {
    task,
    attempt: requireAttempt(
      task,
      found.attempt === null ? null : found.attempt(),
      names.attempt_id,
      names.attempt_digest,
    ),
  };
}

/** Exact fence binding: a replaced attempt or another fence is stale (old-fence mutations cannot finish it). */
function requireFence(retained: RetainedAttempt, fence: bigint): void {
  if (retained.state === 'replaced') {
    throw new AgentscmError(
      'TASK_FENCE_STALE',
      `attempt ${retained.attempt.attempt_id} (fence ${retained.attempt.fence}) was superseded by fence ${retained.superseded_by_fence ?? 0n}`,
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

function requireHolder(ctx: TaskContext, retained: RetainedAttempt): void {
  if (!sameAgent(retained.attempt.agent, ctx.actor)) {
    throw new AgentscmError(
      'TASK_ACTOR_MISMATCH',
      `attempt ${retained.attempt.attempt_id} is held by ${retained.attempt.agent.owner_id}/${retained.attempt.agent.agent_id}`,
      {
        hint: 'only the holder heartbeats, cancels or reports an attempt; an authorized actor may reconcile it',
      },
    );
  }
}

function notActive(retained: RetainedAttempt, view: string): never {
  throw new AgentscmError('TASK_ATTEMPT_NOT_ACTIVE', `attempt ${retained.attempt.attempt_id} is ${view}`, {
    hint:
      view === 'finished'
        ? 'the attempt already has a retained result'
        : 'reconcile the attempt, then claim again with a fresh execution identity',
    details: { state: view },
  });
}

function leaseExpired(retained: RetainedAttempt): never {
  throw new AgentscmError(
    'TASK_LEASE_EXPIRED',
    `the lease of attempt ${retained.attempt.attempt_id} expired at ${retained.lease_expires_at_ms} ms; expiry does not prove that execution stopped`,
    {
      hint: 'the attempt stays uncertain until an authorized reconcile supersedes it',
      details: { lease_expires_at_ms: retained.lease_expires_at_ms },
    },
  );
}

/** Repository and Change still exist (cancel and reconcile need no current subject or enrollment). */
function requireChangeExists(auth: Authority, task: WorkflowTask): void {
  resolveRepository(auth, task.subject.repository);
  getChange(auth, task.subject.repository, task.subject.change_id);
}

// ---------------------------------------------------------------- idempotency

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
 * (spec: it returns the retained view even after source, policy or enrollment drift).
 */
function lookupRetry(
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
function commitOutcome(
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
function notRetainedWithoutJournal(taskId: string): () => never {
  return () => {
    throw taskNotRetained(taskId);
  };
}

/**
 * Run a transition, first re-checking inside the journal transaction for a concurrent identical
 * request. `whenMissing` refuses a request that finds no journal, without creating one; null
 * (a claim) creates it.
 */
function transition(
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

// ---------------------------------------------------------------- reads

/** One task row of a requirements answer (state is the read-time local view). */
function taskRow(
  auth: Authority,
  journal: Journal | null,
  derived: DerivedSubject,
  entry: DerivedTask,
  nowMs: number,
): JsonObject {
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

function subjectAnswer(derived: DerivedSubject, tasks: JsonObject[]): JsonObject {
  return {
    subject: subjectBaseJson(derived),
    tasks,
  };
}

/**
 * `next`: the one next thing to do for the current subject, as typed data — reconcile an
 * unresolved older subject or attempt, claim the first claimable pending task whose dependencies
 * are complete, or none.
 */
export function nextOperation(ctx: TaskContext): JsonValue {
  return ctx.guard(ctx.actor, 'next', () => {
    const derived = deriveCurrent(ctx);
    const nowMs = nowOf(ctx);
    const choose = (auth: Authority, journal: Journal | null): JsonObject => {
      for (const entry of derived.tasks) {
        if (entry.task.entrypoint.progression !== 'claim') continue;
        const seq = journal === null ? null : retainedSeqOf(journal, entry.task.task_id);
        if (journal !== null) {
          const older = olderUnresolvedTask(journal, entry.task, seq).task_id;
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
    const chosen = next.operation === 'claim' ? derived.tasks.find((t) => t.task.task_id === next.task_id) : undefined;
    return {
      subject: subjectBaseJson(derived),
      next,
      task: chosen === undefined ? null : taskToJson(chosen.task),
    };
  });
}

/** `instructions`: the task's entrypoint, or an explicit schema mismatch (never an empty task). */
export function instructionsOperation(
  ctx: TaskContext,
  request: InstructionRequest,
): InstructionEntrypointResponse | JsonValue {
  return ctx.guard(ctx.actor, 'instructions', () => {
    if (!offersSupportedSchema(request.supported_schema_versions))
      return schemaMismatch(
        request.supported_schema_versions,
        TASK_CONTRACT_VERSION,
        SUPPORTED_SCHEMA_VERSIONS,
      ) as unknown as JsonValue;
    const { task } = locateTask(ctx, request.task_id);
    return { status: 'entrypoint', entrypoint: entrypointToJson(task.entrypoint) };
  });
}

/**
 * The task a reference read names, or the bounded answer when there is none: an id that is
 * neither retained nor a task of the current subject is `denied/not_in_task`, and a subject that
 * is no longer current is `uncertain/subject_changed` (spec "ReferenceFetchResponse": every
 * outcome distinct and bounded).
 */
function locateReferencedTask(
  ctx: TaskContext,
  request: ReferenceFetchRequest,
): { readonly found: { task: WorkflowTask; digest: string } } | { readonly answer: ReferenceFetchResponse } {
  try {
    return { found: locateTask(ctx, request.task_id) };
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'TASK_NOT_FOUND')
      return { answer: { status: 'denied', name: request.name, code: 'not_in_task' } };
    if (error instanceof AgentscmError && error.code === 'TASK_STALE')
      return { answer: { status: 'uncertain', name: request.name, code: 'subject_changed' } };
    throw error;
  }
}

/**
 * `reference`: one named reference of the stored canonical task. Repository, revision and path
 * come from the task, never from the caller; the stored size is checked against 128 KiB before
 * anything is read; the body's SHA-256 must equal both the stored reference and the request
 * (`denied/digest_mismatch` otherwise) and the body must be UTF-8 (`denied/not_utf8`): a retry
 * cannot change immutable bytes, so neither is `uncertain`.
 */
export function referenceOperation(
  ctx: TaskContext,
  request: ReferenceFetchRequest,
): ReferenceFetchResponse | JsonValue {
  const name = request.name;
  const denied = (code: 'not_authorized' | 'not_in_task' | 'digest_mismatch'): JsonValue => ({
    status: 'denied',
    name,
    code,
  });
  const uncertain = (code: 'source_unavailable' | 'store_busy' | 'subject_changed'): JsonValue => ({
    status: 'uncertain',
    name,
    code,
  });
  if (!sameAgent(request.agent, ctx.actor)) return denied('not_authorized');
  try {
    return ctx.guard(ctx.actor, 'reference', (): JsonValue => {
      if (!SUPPORTED_SCHEMA_VERSIONS.includes(request.expected_schema_version)) {
        return schemaMismatch(
          [request.expected_schema_version],
          TASK_CONTRACT_VERSION,
          SUPPORTED_SCHEMA_VERSIONS,
        ) as unknown as JsonValue;
      }
      const located = locateReferencedTask(ctx, request);
      if ('answer' in located) return located.answer as JsonValue;
      const { task, digest } = located.found;
      if (digest !== request.task_digest) return uncertain('subject_changed');
      const reference = task.entrypoint.references.find((r) => r.name === name);
      if (reference === undefined) return denied('not_in_task');
      if (reference.sha256 !== request.expected_sha256) return denied('digest_mismatch');
      return readAuthority(ctx, (auth): JsonValue => {
        const entry = statRevisionPath(auth, task.subject.repository, task.subject.revision, reference.path);
        if (entry === null || entry.mode === 'symlink') return { status: 'missing', name };
        if (entry.size > BigInt(REFERENCE_MAX_BYTES))
          return { status: 'limit', name, byte_length: Number(entry.size), limit_bytes: REFERENCE_MAX_BYTES };
        const bytes = readRevisionFile(auth, task.subject.repository, task.subject.revision, reference.path, {
          maxBytes: REFERENCE_MAX_BYTES,
        });
        return referenceResponseForBody(reference, request, bytes) as JsonValue;
      });
    });
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'TASK_NOT_AUTHORIZED') return denied('not_authorized');
    if (error instanceof AgentscmError && error.code === 'STORE_BUSY') return uncertain('store_busy');
    throw error;
  }
}

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
          `the workflow journal does not exist in ${ctx.dataDir}; nothing was created`,
          {
            hint: 'no task was ever claimed in this data directory',
          },
        );
      },
      body,
    );
}

// ---------------------------------------------------------------- claim

/** Deterministic attempt id of a claim (the service issues it; a retry gets the same one). */
export function attemptIdOf(taskDigestValue: string, actor: AgentRef, requestId: string, fence: bigint): string {
  return `a-${sha256Hex(encodeCanonical(['agentscm.agent-workflow-attempt-id.v1', taskDigestValue, actor.owner_id, actor.agent_id, requestId, fence])).slice(0, 40)}`;
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
 * `claim`: one fresh attempt for a claimable task of the current subject. Inside the serialized
 * transaction: subject and enrollment recheck, no current attempt, dependencies complete, the
 * bounded scan of older subjects, a fresh execution identity, then the next fence.
 */
/**
 * What a collector claim (src/tasks/collector/claim.ts) adds to a claim: the operation the guard
 * sees, the digest the request id is bound to (it covers the collector request, not only the
 * claim), a check of the derived task before anything is opened for writing, a recheck inside
 * the transition, and the rows and answer written in the same journal transaction.
 */
export interface ClaimExtension {
  readonly operation: TaskOperation;
  readonly digest: string;
  /**
   * A finite-review collector claim: the controller-only review task is claimed for the review
   * collector (spec "Operator-enrolled collector transfer"); no other claim reaches one.
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
    response: JsonObject,
  ): JsonObject;
}

export function claimOperation(ctx: TaskContext, request: TaskClaimRequest, extension?: ClaimExtension): JsonValue {
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
      `task ${entry.task.task_id} (${entry.task.action_kind} step "${entry.task.subject.step_id}") is controller-only and cannot be claimed`,
      {
        hint: 'the authority evaluates this step itself; claim a task whose progression is claim',
      },
    );
  }
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
          `more than ${MAX_SCOPE_SCAN} retained tasks share Change ${entry.task.subject.change_id}, profile ${entry.task.subject.profile} and step ${entry.task.subject.step_id}`,
          {
            hint: 'the claim fails closed; the operator must inspect the journal',
            details: { limit: MAX_SCOPE_SCAN },
          },
        );
      }
      if (unresolved.task_id !== null) {
        throw new AgentscmError(
          'TASK_PRIOR_SUBJECT_UNRESOLVED',
          `an older subject's task ${unresolved.task_id} for the same Change, profile and step has an unresolved attempt`,
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
      const response: JsonObject = {
        status: 'claimed',
        task_id: entry.task.task_id,
        task_digest: entry.digest,
        attempt: attemptToJson(attempt),
        attempt_digest: encoded.digest,
        fence,
        lease_expires_at_ms: expires,
      };
      const answer =
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

// ---------------------------------------------------------------- heartbeat, cancel, reconcile

/**
 * `heartbeat`, `cancel`, `reconcile` (spec "Identity and requests", "Phase-two local state
 * machine"): exact task/attempt/execution/executor/fence binding. A heartbeat renews a live
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
          `attempt ${retained.attempt.attempt_id} has execution operation ${retained.attempt.execution_operation_id}, not ${request.execution_operation_id}`,
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

// ---------------------------------------------------------------- result

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
