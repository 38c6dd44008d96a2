/**
 * Operation inputs of the agent-task facade that have no type of their own in the contract
 * (docs/agent-tasks.md "State machine": recovery projections). A recovery read names the
 * request kind and carries the exact original request, so that the service can bind the
 * envelope to the request and execution identities even when the original response was lost.
 */
import { AgentscmError } from '../errors.js';
import type { JsonObject } from '../json/json-value.js';
import { defineTaskDecoder, VERSION_SCHEMA, type TaskDecoder } from './common.js';
import { RECOVERY_REQUEST_KINDS, type RecoveryRequestKind } from './recovery.js';
import {
  CLAIM_REQUEST_SCHEMA,
  claimRequestToJson,
  MAX_REQUEST_BYTES,
  MUTATION_REQUEST_SCHEMA,
  mutationRequestToJson,
  taskClaimRequestDecoder,
  taskMutationRequestDecoder,
  type TaskClaimRequest,
  type TaskMutationRequest,
} from './requests.js';
import {
  ASSERTION_SCHEMA,
  assertionToJson,
  MAX_ASSERTION_BYTES,
  taskResultAssertionDecoder,
  type TaskResultAssertion,
} from './result.js';

/** The original request a recovery read is about, typed by its kind. */
export type RecoveredRequest =
  | { readonly kind: 'claim'; readonly request: TaskClaimRequest }
  | { readonly kind: 'heartbeat' | 'cancel' | 'reconcile'; readonly request: TaskMutationRequest }
  | { readonly kind: 'result'; readonly request: TaskResultAssertion };

export interface TaskRecoveryRequest {
  readonly version: 1;
  readonly request_kind: RecoveryRequestKind;
  /** The exact original request (claim, mutation or result assertion). */
  readonly request: TaskClaimRequest | TaskMutationRequest | TaskResultAssertion;
}

export const RECOVERY_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'request_kind', 'request'],
  properties: {
    version: VERSION_SCHEMA,
    request_kind: { enum: [...RECOVERY_REQUEST_KINDS] },
    request: { anyOf: [CLAIM_REQUEST_SCHEMA, MUTATION_REQUEST_SCHEMA, ASSERTION_SCHEMA] },
  },
} as const;

/** Type the inner request by request_kind with its own strict decoder (the kind must fit the shape). */
export function recoveredRequestOf(value: TaskRecoveryRequest): RecoveredRequest {
  const kind = value.request_kind;
  if (kind === 'claim')
    return { kind, request: taskClaimRequestDecoder.validate(claimRequestToJson(value.request as TaskClaimRequest)) };
  if (kind === 'result')
    return {
      kind,
      request: taskResultAssertionDecoder.validate(assertionToJson(value.request as TaskResultAssertion)),
    };
  const request = taskMutationRequestDecoder.validate(mutationRequestToJson(value.request as TaskMutationRequest));
  if (request.action !== kind) {
    throw new AgentscmError(
      'TASK_BINDING_MISMATCH',
      `request_kind is ${kind} but the request's action is ${request.action}`,
      { hint: 'name the kind of the request you sent' },
    );
  }
  return { kind, request };
}

function checkRecoveryRequest(value: TaskRecoveryRequest): void {
  const inner = value.request as unknown as JsonObject;
  const shape = 'requested_lease_ms' in inner ? 'claim' : 'trust_class' in inner ? 'result' : 'mutation';
  const expected = value.request_kind === 'claim' || value.request_kind === 'result' ? value.request_kind : 'mutation';
  if (shape !== expected) {
    throw new AgentscmError(
      'TASK_BINDING_MISMATCH',
      `request_kind is ${value.request_kind} but the request is a ${shape} request`,
      { hint: 'name the kind of the request you sent' },
    );
  }
  recoveredRequestOf(value);
}

/**
 * Strict decoder of a recovery read (docs/agent-tasks.md "Status and recovery"; the size bound is
 * the assertion's plus the wrapper).
 */
export const taskRecoveryRequestDecoder: TaskDecoder<TaskRecoveryRequest> = defineTaskDecoder<TaskRecoveryRequest>(
  'agent-task.recovery-request',
  RECOVERY_REQUEST_SCHEMA,
  {
    maxBytes: MAX_ASSERTION_BYTES + MAX_REQUEST_BYTES,
    check: checkRecoveryRequest,
  },
);
