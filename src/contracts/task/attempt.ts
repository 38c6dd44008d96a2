/**
 * WorkflowTaskAttempt (docs/agent-task-contract.md "Types (declared field order)"): one fresh execution of a task —
 * task id and digest, fresh attempt id, immutable claim_request_id and execution operation id, the
 * authenticated owner and agent, the executor registration, a positive bounded lease and the
 * fence. The attempt is immutable: lease renewals are journal state, not part of its digest.
 */
import { DOMAINS, encodedOncePerValue, type CanonicalEncoding } from '../digest.js';
import { AgentscmError } from '../errors.js';
import type { JsonObject } from '../json/json-value.js';
import {
  AGENT_SCHEMA,
  agentToJson,
  defineTaskDecoder,
  executorToJson,
  HEX64_SCHEMA,
  ID_SCHEMA,
  NULLABLE_EXECUTOR_SCHEMA,
  POSITIVE_U64_SCHEMA,
  sameAgent,
  sameExecutor,
  VERSION_SCHEMA,
  type AgentRef,
  type ExecutorBinding,
  type TaskDecoder,
} from './common.js';
import { checkFence, checkLeaseMs, LEASE_MS_SCHEMA, type TaskClaimRequest } from './requests.js';

export interface WorkflowTaskAttempt {
  readonly version: 1;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly claim_request_id: string;
  readonly execution_operation_id: string;
  readonly agent: AgentRef;
  readonly executor: ExecutorBinding | null;
  /** The issued lease interval (≤ the claim's requested_lease_ms). */
  readonly lease_ms: bigint;
  readonly fence: bigint;
}

export const ATTEMPT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'task_id',
    'task_digest',
    'attempt_id',
    'claim_request_id',
    'execution_operation_id',
    'agent',
    'executor',
    'lease_ms',
    'fence',
  ],
  properties: {
    version: VERSION_SCHEMA,
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    attempt_id: ID_SCHEMA,
    claim_request_id: ID_SCHEMA,
    execution_operation_id: ID_SCHEMA,
    agent: AGENT_SCHEMA,
    executor: NULLABLE_EXECUTOR_SCHEMA,
    lease_ms: LEASE_MS_SCHEMA,
    fence: POSITIVE_U64_SCHEMA,
  },
} as const;

/** Positive bounded lease and positive fence. */
export function checkAttempt(attempt: WorkflowTaskAttempt): void {
  checkLeaseMs(attempt.lease_ms, '/lease_ms');
  checkFence(attempt.fence, '/fence');
}

/** Canonical (declared-order) JSON of an attempt. */
export function attemptToJson(attempt: WorkflowTaskAttempt): JsonObject {
  return {
    version: attempt.version,
    task_id: attempt.task_id,
    task_digest: attempt.task_digest,
    attempt_id: attempt.attempt_id,
    claim_request_id: attempt.claim_request_id,
    execution_operation_id: attempt.execution_operation_id,
    agent: agentToJson(attempt.agent),
    executor: executorToJson(attempt.executor),
    lease_ms: attempt.lease_ms,
    fence: attempt.fence,
  };
}

/**
 * The attempt's canonical bytes and their domain digest (attemptDigest), encoded once for both
 * and remembered for the same attempt object (attempts are immutable): the journal stores the
 * bytes the digest covers, and each later transition checks its binding against the same
 * attempt again. Callers must not modify the returned bytes.
 */
export const encodeAttempt: (attempt: WorkflowTaskAttempt) => CanonicalEncoding = encodedOncePerValue(
  DOMAINS.attempt,
  attemptToJson,
);

/** Attempt digest (docs/wire.md domain agentscm.agent-workflow-attempt.v1). */
export function attemptDigest(attempt: WorkflowTaskAttempt): string {
  return encodeAttempt(attempt).digest;
}

function mismatch(field: string, attemptValue: string, requestValue: string): never {
  throw new AgentscmError(
    'TASK_BINDING_MISMATCH',
    `the attempt's ${field} (${attemptValue}) is not the claim's (${requestValue})`,
    {
      details: { field },
    },
  );
}

/**
 * validate_for_claim (docs/agent-task-contract.md "Types (declared field order)"): the attempt is bound to the exact
 * claim request — its request_id, task, execution identity, actor and executor — and its issued lease
 * is positive and at most the claim's requested_lease_ms; the fence is positive.
 */
export function validateForClaim(attempt: WorkflowTaskAttempt, claim: TaskClaimRequest): void {
  checkAttempt(attempt);
  checkLeaseMs(claim.requested_lease_ms, '/requested_lease_ms');
  if (attempt.claim_request_id !== claim.request_id)
    mismatch('claim_request_id', attempt.claim_request_id, claim.request_id);
  if (attempt.task_id !== claim.task_id) mismatch('task_id', attempt.task_id, claim.task_id);
  if (attempt.task_digest !== claim.task_digest) mismatch('task_digest', attempt.task_digest, claim.task_digest);
  if (attempt.execution_operation_id !== claim.execution_operation_id)
    mismatch('execution_operation_id', attempt.execution_operation_id, claim.execution_operation_id);
  if (!sameAgent(attempt.agent, claim.agent))
    mismatch(
      'agent',
      `${attempt.agent.owner_id}/${attempt.agent.agent_id}`,
      `${claim.agent.owner_id}/${claim.agent.agent_id}`,
    );
  if (!sameExecutor(attempt.executor, claim.executor))
    mismatch('executor', attempt.executor?.registration_id ?? 'null', claim.executor?.registration_id ?? 'null');
  if (attempt.lease_ms > claim.requested_lease_ms) {
    throw new AgentscmError(
      'LEASE_INVALID',
      `the issued lease of ${attempt.lease_ms} ms is longer than the requested ${claim.requested_lease_ms} ms`,
      {
        details: { lease_ms: attempt.lease_ms.toString(), requested_lease_ms: claim.requested_lease_ms.toString() },
      },
    );
  }
}

/** Strict decoder of an attempt (positive bounded lease, positive fence). */
export const workflowTaskAttemptDecoder: TaskDecoder<WorkflowTaskAttempt> = defineTaskDecoder<WorkflowTaskAttempt>(
  'agent-task.workflow-task-attempt',
  ATTEMPT_SCHEMA,
  {
    maxBytes: 16 * 1024,
    check: checkAttempt,
  },
);
