/**
 * Schema discovery (docs/hub.md "MCP": capabilities needs no subject and
 * returns {"capability","supported_schema_versions":[1],"operations":[...sorted...]}).
 */
import { defineTaskDecoder, SUPPORTED_SCHEMA_VERSIONS, TASK_CAPABILITY, type TaskDecoder } from './common.js';

/** The phase-two operations, sorted (the facade serves these and more: FACADE_OPERATIONS of src/tasks/facade.ts). */
export const TASK_OPERATIONS: readonly string[] = [
  'cancel',
  'capabilities',
  'claim',
  'heartbeat',
  'instructions',
  'next',
  'reconcile',
  'recovery',
  'reference',
  'requirements',
  'result',
  'status',
].sort();

export interface CapabilitiesResponse {
  readonly capability: typeof TASK_CAPABILITY;
  readonly supported_schema_versions: readonly number[];
  readonly operations: readonly string[];
}

/** The capabilities answer for a facade serving `operations` (sorted here, so callers need not). */
export function capabilitiesResponse(operations: readonly string[] = TASK_OPERATIONS): CapabilitiesResponse {
  return {
    capability: TASK_CAPABILITY,
    supported_schema_versions: [...SUPPORTED_SCHEMA_VERSIONS],
    operations: [...operations].sort(),
  };
}

export const CAPABILITIES_RESPONSE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['capability', 'supported_schema_versions', 'operations'],
  properties: {
    capability: { const: TASK_CAPABILITY },
    supported_schema_versions: {
      type: 'array',
      minItems: 1,
      maxItems: 8,
      items: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    },
    operations: { type: 'array', maxItems: 64, items: { type: 'string', pattern: '^[a-z_]{1,64}$' } },
  },
} as const;

/** Strict decoder of a capabilities answer (clients). */
export const capabilitiesResponseDecoder: TaskDecoder<CapabilitiesResponse> = defineTaskDecoder<CapabilitiesResponse>(
  'agent-task.capabilities-response',
  CAPABILITIES_RESPONSE_SCHEMA,
  {
    maxBytes: 8 * 1024,
    versionField: null,
  },
);
