/**
 * Task requests (docs/agent-task-contract.md "Types (declared field order)"): TaskClaimRequest (new execution identity
 * and requested bounded lease), TaskMutationRequest (heartbeat, cancel, reconcile — exact task and
 * attempt digests, execution identity, actor, executor and fence) and TaskStatusRequest (an
 * exact-attempt read with no idempotency key). Every mutation has its own request_id; its
 * canonical digest is domain-separated by action.
 */
import { digestCanonical, mutationDomain } from '../digest.js';
import { AgentscmError } from '../errors.js';
import type { JsonObject } from '../json/json-value.js';
import {
  AGENT_SCHEMA,
  agentToJson,
  checkUtf8Bound,
  defineTaskDecoder,
  executorToJson,
  HEX64_SCHEMA,
  ID_SCHEMA,
  NULLABLE_EXECUTOR_SCHEMA,
  POSITIVE_U64_SCHEMA,
  VERSION_SCHEMA,
  type AgentRef,
  type ExecutorBinding,
  type TaskDecoder,
} from './common.js';

/** Longest lease a claim may request or be issued: 24 hours. */
export const MAX_LEASE_MS = 24n * 60n * 60n * 1000n;
/** Longest mutation reason in UTF-8 bytes. */
export const MAX_REASON_BYTES = 1024;
/** Request documents are small; anything larger is refused before parsing. */
export const MAX_REQUEST_BYTES = 16 * 1024;

/** A lease interval in ms: 1 .. MAX_LEASE_MS. */
export const LEASE_MS_SCHEMA = { u64: { minimum: '1', maximum: MAX_LEASE_MS.toString() } } as const;

/** Refuse a lease of 0 or above MAX_LEASE_MS. */
export function checkLeaseMs(value: bigint, where: string): void {
  if (value < 1n || value > MAX_LEASE_MS) {
    throw new AgentscmError(
      'LEASE_INVALID',
      `${where} is ${value} ms; a lease is between 1 and ${MAX_LEASE_MS} ms (24 h)`,
      {
        hint: 'request a positive lease of at most 24 hours and renew it with heartbeats',
        details: { pointer: where, value: value.toString(), limit: MAX_LEASE_MS.toString() },
      },
    );
  }
}

/**
 * The lease interval to issue for a claim (spec: validate_for_claim "limits the issued lease
 * interval to requested_lease_ms"): the request, capped by the service's own maximum.
 */
export function issuedLeaseMs(requested: bigint, serviceMaxMs: bigint = MAX_LEASE_MS): bigint {
  checkLeaseMs(requested, '/requested_lease_ms');
  const cap = serviceMaxMs < MAX_LEASE_MS ? serviceMaxMs : MAX_LEASE_MS;
  return requested < cap ? requested : cap;
}

/** Refuse fence 0: fences are positive and only grow. */
export function checkFence(value: bigint, where: string): void {
  if (value < 1n) {
    throw new AgentscmError('SCHEMA_BOUND', `${where} is 0; fences are positive`, { details: { pointer: where } });
  }
}

// ---------------------------------------------------------------- claim

export interface TaskClaimRequest {
  readonly version: 1;
  readonly request_id: string;
  readonly task_id: string;
  readonly task_digest: string;
  /** The fresh execution identity this claim creates. */
  readonly execution_operation_id: string;
  /** Must equal the authenticated actor; the facade refuses a different one. */
  readonly agent: AgentRef;
  /** The enrolled executor that will observe, or null for an ordinary agent claim. */
  readonly executor: ExecutorBinding | null;
  readonly requested_lease_ms: bigint;
}

export const CLAIM_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'request_id',
    'task_id',
    'task_digest',
    'execution_operation_id',
    'agent',
    'executor',
    'requested_lease_ms',
  ],
  properties: {
    version: VERSION_SCHEMA,
    request_id: ID_SCHEMA,
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    execution_operation_id: ID_SCHEMA,
    agent: AGENT_SCHEMA,
    executor: NULLABLE_EXECUTOR_SCHEMA,
    requested_lease_ms: LEASE_MS_SCHEMA,
  },
} as const;

export function claimRequestToJson(request: TaskClaimRequest): JsonObject {
  return {
    version: request.version,
    request_id: request.request_id,
    task_id: request.task_id,
    task_digest: request.task_digest,
    execution_operation_id: request.execution_operation_id,
    agent: agentToJson(request.agent),
    executor: executorToJson(request.executor),
    requested_lease_ms: request.requested_lease_ms,
  };
}

/** Claim request identity (docs/wire.md mutation domain, action `claim`). */
export function claimRequestDigest(request: TaskClaimRequest): string {
  return digestCanonical(mutationDomain('claim'), claimRequestToJson(request));
}

/** Strict decoder of a claim (lease 1 ms .. 24 h). */
export const taskClaimRequestDecoder: TaskDecoder<TaskClaimRequest> = defineTaskDecoder<TaskClaimRequest>(
  'agent-task.claim-request',
  CLAIM_REQUEST_SCHEMA,
  {
    maxBytes: MAX_REQUEST_BYTES,
    check: (request) => checkLeaseMs(request.requested_lease_ms, '/requested_lease_ms'),
  },
);

// ---------------------------------------------------------------- mutation

export type MutationAction = 'heartbeat' | 'cancel' | 'reconcile';
export const MUTATION_ACTIONS: readonly MutationAction[] = ['heartbeat', 'cancel', 'reconcile'];

export interface TaskMutationRequest {
  readonly version: 1;
  readonly request_id: string;
  readonly action: MutationAction;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly execution_operation_id: string;
  readonly agent: AgentRef;
  readonly executor: ExecutorBinding | null;
  readonly fence: bigint;
  /** Operator/agent reason (cancel, reconcile); bounded, data only. */
  readonly reason: string | null;
}

export const MUTATION_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'request_id',
    'action',
    'task_id',
    'task_digest',
    'attempt_id',
    'attempt_digest',
    'execution_operation_id',
    'agent',
    'executor',
    'fence',
    'reason',
  ],
  properties: {
    version: VERSION_SCHEMA,
    request_id: ID_SCHEMA,
    action: { enum: [...MUTATION_ACTIONS] },
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    attempt_id: ID_SCHEMA,
    attempt_digest: HEX64_SCHEMA,
    execution_operation_id: ID_SCHEMA,
    agent: AGENT_SCHEMA,
    executor: NULLABLE_EXECUTOR_SCHEMA,
    fence: POSITIVE_U64_SCHEMA,
    reason: { type: ['null', 'string'], maxUtf8Bytes: MAX_REASON_BYTES },
  },
} as const;

export function mutationRequestToJson(request: TaskMutationRequest): JsonObject {
  return {
    version: request.version,
    request_id: request.request_id,
    action: request.action,
    task_id: request.task_id,
    task_digest: request.task_digest,
    attempt_id: request.attempt_id,
    attempt_digest: request.attempt_digest,
    execution_operation_id: request.execution_operation_id,
    agent: agentToJson(request.agent),
    executor: executorToJson(request.executor),
    fence: request.fence,
    reason: request.reason,
  };
}

/**
 * Mutation request identity, domain-separated by action (docs/agent-task-contract.md "Types
 * (declared field order)").
 */
export function mutationRequestDigest(request: TaskMutationRequest): string {
  return digestCanonical(mutationDomain(request.action), mutationRequestToJson(request));
}

/** Strict decoder of a heartbeat, cancel or reconcile request. */
export const taskMutationRequestDecoder: TaskDecoder<TaskMutationRequest> = defineTaskDecoder<TaskMutationRequest>(
  'agent-task.mutation-request',
  MUTATION_REQUEST_SCHEMA,
  {
    maxBytes: MAX_REQUEST_BYTES,
    check: (request) => {
      checkFence(request.fence, '/fence');
      if (request.reason !== null) checkUtf8Bound(request.reason, MAX_REASON_BYTES, '/reason');
    },
  },
);

// ---------------------------------------------------------------- status

/** An exact-attempt read: no idempotency key, no side effect. */
export interface TaskStatusRequest {
  readonly version: 1;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
}

export const STATUS_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'task_id', 'task_digest', 'attempt_id', 'attempt_digest'],
  properties: {
    version: VERSION_SCHEMA,
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    attempt_id: ID_SCHEMA,
    attempt_digest: HEX64_SCHEMA,
  },
} as const;

export function statusRequestToJson(request: TaskStatusRequest): JsonObject {
  return {
    version: request.version,
    task_id: request.task_id,
    task_digest: request.task_digest,
    attempt_id: request.attempt_id,
    attempt_digest: request.attempt_digest,
  };
}

/** Strict decoder of a status read. */
export const taskStatusRequestDecoder: TaskDecoder<TaskStatusRequest> = defineTaskDecoder<TaskStatusRequest>(
  'agent-task.status-request',
  STATUS_REQUEST_SCHEMA,
  {
    maxBytes: MAX_REQUEST_BYTES,
  },
);

export interface SubjectRequest {
  readonly change_id: string;
}

/** `subject` (docs/hub.md "The `subject` tool"): `{"change_id"}` and nothing else (no version field). */
export const subjectRequestDecoder: TaskDecoder<SubjectRequest> = defineTaskDecoder<SubjectRequest>(
  'agent-task.subject-request',
  { type: 'object', additionalProperties: false, required: ['change_id'], properties: { change_id: ID_SCHEMA } },
  { maxBytes: MAX_REQUEST_BYTES, versionField: null },
);
