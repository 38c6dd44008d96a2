/**
 * The request bodies of the collector operations `collector_claim`, `collector_descriptor` and
 * `collector_finalize` (docs/agent-tasks.md "Collector claims", docs/collector-transfer.md
 * "Receipts and collector_finalize"): strict decoders, registered and published like every
 * other wire schema.
 */
import { AGENT_SCHEMA, defineTaskDecoder, HEX64_SCHEMA, ID_SCHEMA, type AgentRef } from '../task/common.js';
import { LEASE_MS_SCHEMA, MAX_REQUEST_BYTES } from '../task/requests.js';

/** The input of `collector_claim`: a claim that names an installed collector profile instead of an executor. */
export interface CollectorClaimRequest {
  readonly version: 1;
  readonly request_id: string;
  readonly agent: AgentRef;
  readonly collector_profile_id: string;
  readonly task_id: string;
  readonly task_digest: string;
  readonly execution_operation_id: string;
  readonly requested_lease_ms: bigint;
}

export const COLLECTOR_CLAIM_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'request_id',
    'agent',
    'collector_profile_id',
    'task_id',
    'task_digest',
    'execution_operation_id',
    'requested_lease_ms',
  ],
  properties: {
    version: { type: 'integer', const: 1 },
    request_id: ID_SCHEMA,
    agent: AGENT_SCHEMA,
    collector_profile_id: HEX64_SCHEMA,
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    execution_operation_id: ID_SCHEMA,
    requested_lease_ms: LEASE_MS_SCHEMA,
  },
} as const;

export const collectorClaimRequestDecoder = defineTaskDecoder<CollectorClaimRequest>(
  'agent-task.collector-claim-request',
  COLLECTOR_CLAIM_REQUEST_SCHEMA,
  { maxBytes: MAX_REQUEST_BYTES },
);

/** The input of `collector_descriptor`: the exact task and attempt of an earlier collector claim. */
export interface CollectorDescriptorRequest {
  readonly version: 1;
  readonly agent: AgentRef;
  readonly task_id: string;
  readonly attempt_id: string;
}

export const COLLECTOR_DESCRIPTOR_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'agent', 'task_id', 'attempt_id'],
  properties: {
    version: { type: 'integer', const: 1 },
    agent: AGENT_SCHEMA,
    task_id: ID_SCHEMA,
    attempt_id: ID_SCHEMA,
  },
} as const;

export const collectorDescriptorRequestDecoder = defineTaskDecoder<CollectorDescriptorRequest>(
  'agent-task.collector-descriptor-request',
  COLLECTOR_DESCRIPTOR_REQUEST_SCHEMA,
  { maxBytes: MAX_REQUEST_BYTES },
);

/** The input of `collector_finalize`: the actor; the subject is the context's (--change, --context). */
export interface CollectorFinalizeRequest {
  readonly version: 1;
  readonly agent: AgentRef;
}

export const collectorFinalizeRequestDecoder = defineTaskDecoder<CollectorFinalizeRequest>(
  'agent-task.collector-finalize-request',
  {
    type: 'object',
    additionalProperties: false,
    required: ['version', 'agent'],
    properties: { version: { type: 'integer', const: 1 }, agent: AGENT_SCHEMA },
  },
  { maxBytes: MAX_REQUEST_BYTES },
);
