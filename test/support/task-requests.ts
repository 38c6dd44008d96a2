/** Request builders and a facade caller for agent-task tests (plain JSON, as a client sends it). */
import { signObservation } from '../../src/contracts/collector/observation.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import {
  assertionToJson,
  taskResultAssertionDecoder,
  type TaskResultAssertion,
} from '../../src/contracts/task/result.js';
import type { TaskContext } from '../../src/tasks/context.js';
import { callTaskOperation, taskStoreMode } from '../../src/tasks/facade.js';
import { withStore } from '../../src/tasks/store.js';
import { PER_CALL_STORES, type Executor } from './tasks.js';

/** Call the facade with a JSON value (encoded canonically, bigints exact). */
export function call(ctx: TaskContext, operation: string, input: JsonValue | null = null): JsonObject {
  const bytes = input === null ? null : encodeCanonical(input);
  if (!PER_CALL_STORES.has(ctx.store)) return callTaskOperation(ctx, operation, bytes) as JsonObject;
  return withStore(
    ctx.store.dataDir,
    taskStoreMode(operation),
    (store) => callTaskOperation({ ...ctx, store }, operation, bytes) as JsonObject,
  );
}

export function agentJson(actor: AgentRef): JsonObject {
  return { owner_id: actor.owner_id, agent_id: actor.agent_id };
}

export function executorJson(executor: Executor | null): JsonValue {
  if (executor === null) return null;
  const e = executor.enrollment;
  return {
    registration_id: e.registration_id,
    executor_id: e.executor_id,
    registration_epoch: e.registration_epoch,
    verification_key_id: e.verification_key_id,
  };
}

export interface TaskRef {
  readonly task_id: string;
  readonly task_digest: string;
}

export function claimRequest(
  actor: AgentRef,
  task: TaskRef,
  requestId: string,
  executionId: string,
  options: { leaseMs?: bigint; executor?: Executor | null } = {},
): JsonObject {
  return {
    version: 1,
    request_id: requestId,
    task_id: task.task_id,
    task_digest: task.task_digest,
    execution_operation_id: executionId,
    agent: agentJson(actor),
    executor: executorJson(options.executor ?? null),
    requested_lease_ms: options.leaseMs ?? 60_000n,
  };
}

/** What a claim answered, as the client keeps it. */
export interface Claimed {
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt: JsonObject;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly execution_operation_id: string;
  readonly fence: bigint;
  readonly executor: JsonValue;
}

export function claimedOf(response: JsonObject): Claimed {
  const attempt = response.attempt as JsonObject;
  return {
    task_id: response.task_id as string,
    task_digest: response.task_digest as string,
    attempt,
    attempt_id: attempt.attempt_id as string,
    attempt_digest: response.attempt_digest as string,
    execution_operation_id: attempt.execution_operation_id as string,
    fence: BigInt(attempt.fence as number | bigint),
    executor: attempt.executor ?? null,
  };
}

export function mutationRequest(
  actor: AgentRef,
  claimed: Claimed,
  action: 'heartbeat' | 'cancel' | 'reconcile',
  requestId: string,
  overrides: JsonObject = {},
): JsonObject {
  return {
    version: 1,
    request_id: requestId,
    action,
    task_id: claimed.task_id,
    task_digest: claimed.task_digest,
    attempt_id: claimed.attempt_id,
    attempt_digest: claimed.attempt_digest,
    execution_operation_id: claimed.execution_operation_id,
    agent: agentJson(actor),
    executor: claimed.executor,
    fence: claimed.fence,
    reason: action === 'heartbeat' ? null : `${action} by test`,
    ...overrides,
  };
}

export function statusRequest(claimed: Claimed): JsonObject {
  return {
    version: 1,
    task_id: claimed.task_id,
    task_digest: claimed.task_digest,
    attempt_id: claimed.attempt_id,
    attempt_digest: claimed.attempt_digest,
  };
}

/** An agent assertion for the default command task (one criterion "command"). */
export function assertionRequest(
  actor: AgentRef,
  claimed: Claimed,
  requestId: string,
  outcome: 'passed' | 'failed' | 'uncertain' = 'failed',
  criteria?: JsonValue,
): JsonObject {
  return {
    version: 1,
    task_id: claimed.task_id,
    task_digest: claimed.task_digest,
    attempt_id: claimed.attempt_id,
    attempt_digest: claimed.attempt_digest,
    request_id: requestId,
    execution_operation_id: claimed.execution_operation_id,
    agent: agentJson(actor),
    executor: null,
    fence: claimed.fence,
    trust_class: 'agent_assertion',
    outcome,
    criteria: criteria ?? [
      {
        criterion: 'command',
        outcome: outcome === 'passed' ? 'passed' : outcome,
        findings: outcome === 'passed' ? [] : ['exit status 1'],
        evidence_digests: [],
      },
    ],
    executor_provenance: null,
  };
}

/** A signed registered observation of an executor attempt. */
export function observationRequest(
  actor: AgentRef,
  claimed: Claimed,
  executor: Executor,
  requestId: string,
  outcome: 'passed' | 'failed' = 'passed',
): JsonObject {
  const unsigned = {
    ...assertionRequest(actor, claimed, requestId, outcome),
    trust_class: 'registered_executor_observation',
    executor: executorJson(executor),
  };
  const typed: TaskResultAssertion = taskResultAssertionDecoder.decode(encodeCanonical(unsigned));
  return assertionToJson(signObservation(typed, executor.privateKey));
}

export function recoveryRequest(kind: string, request: JsonObject): JsonObject {
  return { version: 1, request_kind: kind, request };
}

/** The claimable tasks of the default requirement from a requirements answer. */
export function taskRef(requirements: JsonObject, step: string): TaskRef {
  const row = (requirements.tasks as JsonObject[]).find((t) => t.step_id === step);
  if (row === undefined) throw new Error(`no task for step ${step}`);
  return { task_id: row.task_id as string, task_digest: row.task_digest as string };
}
