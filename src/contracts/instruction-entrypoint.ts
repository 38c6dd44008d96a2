/**
 * InstructionEntrypoint and its response (docs/agent-task-contract.md "Types (declared field order)"): the
 * capability and schema version, workflow and policy digests, every criterion inline, the named
 * references and the one permitted workflow progression. Progressive loading cannot hide an
 * obligation: every criterion, required or not, is carried here.
 */
import { AgentscmError } from './errors.js';
import type { JsonObject } from './json/json-value.js';
import {
  checkNamedReferences,
  MAX_OFFERED_SCHEMA_VERSIONS,
  MAX_REFERENCES,
  NAMED_REFERENCE_SCHEMA,
  namedReferenceToJson,
  SCHEMA_MISMATCH_SCHEMA,
  schemaMismatch,
  type NamedReference,
  type ReferenceSchemaMismatch,
} from './named-reference.js';
import {
  checkUnique,
  checkUtf8Bound,
  defineTaskDecoder,
  HEX64_SCHEMA,
  ID_SCHEMA,
  SUPPORTED_SCHEMA_VERSIONS,
  TASK_CAPABILITY,
  TASK_CONTRACT_VERSION,
  type TaskDecoder,
} from './task/common.js';

/** At most this many criteria per task (the same bound as a result assertion). */
export const MAX_CRITERIA = 64;
/** Criterion descriptions and the entrypoint summary: at most this many UTF-8 bytes. */
export const MAX_TEXT_BYTES = 4096;

/**
 * One criterion of a task. `controller_only` rows can be satisfied only by the controller's own
 * collection (independent review); an agent or registered executor must report them not_claimed.
 */
export interface TaskCriterion {
  readonly criterion: string;
  readonly required: boolean;
  readonly controller_only: boolean;
  readonly description: string;
}

/**
 * The one workflow progression a task permits: an ordinary claim (agent or registered executor),
 * a collector claim (phase three), or none (controller-only work; the task can only be read).
 */
export type TaskProgression = 'claim' | 'collector_claim' | 'none';
export const TASK_PROGRESSIONS: readonly TaskProgression[] = ['claim', 'collector_claim', 'none'];

export interface InstructionEntrypoint {
  readonly capability: typeof TASK_CAPABILITY;
  readonly schema_version: 1;
  readonly task_id: string;
  readonly step_id: string;
  /** Digest of the compiled plan (workflow). */
  readonly workflow_digest: string;
  /** Digest of the operator policy that installed this workflow (the installed requirement). */
  readonly policy_digest: string;
  /** Short operator-authored text; data, never an instruction that relaxes policy. */
  readonly summary: string;
  readonly criteria: readonly TaskCriterion[];
  readonly references: readonly NamedReference[];
  readonly progression: TaskProgression;
}

export const CRITERION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['criterion', 'required', 'controller_only', 'description'],
  properties: {
    criterion: ID_SCHEMA,
    required: { type: 'boolean' },
    controller_only: { type: 'boolean' },
    description: { type: 'string', maxUtf8Bytes: MAX_TEXT_BYTES },
  },
} as const;

export const ENTRYPOINT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'capability',
    'schema_version',
    'task_id',
    'step_id',
    'workflow_digest',
    'policy_digest',
    'summary',
    'criteria',
    'references',
    'progression',
  ],
  properties: {
    capability: { const: TASK_CAPABILITY },
    schema_version: { type: 'integer', const: TASK_CONTRACT_VERSION },
    task_id: ID_SCHEMA,
    step_id: ID_SCHEMA,
    workflow_digest: HEX64_SCHEMA,
    policy_digest: HEX64_SCHEMA,
    summary: { type: 'string', maxUtf8Bytes: MAX_TEXT_BYTES },
    criteria: { type: 'array', minItems: 1, maxItems: MAX_CRITERIA, items: CRITERION_SCHEMA },
    references: { type: 'array', maxItems: MAX_REFERENCES, items: NAMED_REFERENCE_SCHEMA },
    progression: { enum: [...TASK_PROGRESSIONS] },
  },
} as const;

/** Rules beyond the schema: ≥ 1 criterion, unique criteria and reference names, byte bounds, canonical paths. */
export function checkEntrypoint(entrypoint: InstructionEntrypoint, where = '/entrypoint'): void {
  if (entrypoint.criteria.length === 0) {
    throw new AgentscmError('SCHEMA_BOUND', `${where} has no criterion; every offered task has at least one`);
  }
  checkUtf8Bound(entrypoint.summary, MAX_TEXT_BYTES, `${where}/summary`);
  entrypoint.criteria.forEach((row, index) =>
    checkUtf8Bound(row.description, MAX_TEXT_BYTES, `${where}/criteria/${index}/description`),
  );
  checkUnique(
    entrypoint.criteria.map((row) => row.criterion),
    `${where}/criteria`,
  );
  checkNamedReferences(entrypoint.references, `${where}/references`);
}

export function criterionToJson(row: TaskCriterion): JsonObject {
  return {
    criterion: row.criterion,
    required: row.required,
    controller_only: row.controller_only,
    description: row.description,
  };
}

/** Canonical (declared-order) JSON of an entrypoint. */
export function entrypointToJson(entrypoint: InstructionEntrypoint): JsonObject {
  return {
    capability: entrypoint.capability,
    schema_version: entrypoint.schema_version,
    task_id: entrypoint.task_id,
    step_id: entrypoint.step_id,
    workflow_digest: entrypoint.workflow_digest,
    policy_digest: entrypoint.policy_digest,
    summary: entrypoint.summary,
    criteria: entrypoint.criteria.map(criterionToJson),
    references: entrypoint.references.map(namedReferenceToJson),
    progression: entrypoint.progression,
  };
}

/** Strict decoder of an entrypoint (docs/agent-task-contract.md "Types (declared field order)"). */
export const instructionEntrypointDecoder: TaskDecoder<InstructionEntrypoint> =
  defineTaskDecoder<InstructionEntrypoint>('agent-task.instruction-entrypoint', ENTRYPOINT_SCHEMA, {
    maxBytes: 512 * 1024,
    versionField: 'schema_version',
    check: (value) => checkEntrypoint(value, ''),
  });

/** An instructions read: the task and the schema versions the caller can read. */
export interface InstructionRequest {
  readonly version: 1;
  readonly task_id: string;
  readonly supported_schema_versions: readonly number[];
}

export const INSTRUCTION_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'task_id', 'supported_schema_versions'],
  properties: {
    version: { type: 'integer', const: TASK_CONTRACT_VERSION },
    task_id: ID_SCHEMA,
    supported_schema_versions: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_OFFERED_SCHEMA_VERSIONS,
      items: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    },
  },
} as const;

/** Strict decoder of an instructions request. */
export const instructionRequestDecoder: TaskDecoder<InstructionRequest> = defineTaskDecoder<InstructionRequest>(
  'agent-task.instruction-request',
  INSTRUCTION_REQUEST_SCHEMA,
  {
    maxBytes: 4096,
  },
);

/** InstructionEntrypointResponse: an entrypoint, or an explicit schema mismatch (never an empty task). */
export type InstructionEntrypointResponse =
  { readonly status: 'entrypoint'; readonly entrypoint: InstructionEntrypoint } | ReferenceSchemaMismatch;

export const ENTRYPOINT_RESPONSE_SCHEMA = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'entrypoint'],
      properties: { status: { const: 'entrypoint' }, entrypoint: ENTRYPOINT_SCHEMA },
    },
    SCHEMA_MISMATCH_SCHEMA,
  ],
} as const;

/** Strict decoder of an instructions answer (a client reads it). */
export const instructionEntrypointResponseDecoder: TaskDecoder<InstructionEntrypointResponse> =
  defineTaskDecoder<InstructionEntrypointResponse>(
    'agent-task.instruction-entrypoint-response',
    ENTRYPOINT_RESPONSE_SCHEMA,
    {
      maxBytes: 512 * 1024,
      versionField: null,
      check: (value) => {
        if (value.status === 'entrypoint') checkEntrypoint(value.entrypoint);
      },
    },
  );

/** Whether a caller offering `offered` can read this server's entrypoint. */
export function offersSupportedSchema(offered: readonly number[]): boolean {
  return offered.includes(TASK_CONTRACT_VERSION);
}

/**
 * The instructions answer: the entrypoint when the caller reads schema 1, else an explicit mismatch (never an empty
 * task).
 */
export function instructionsResponse(
  entrypoint: InstructionEntrypoint,
  offered: readonly number[],
): InstructionEntrypointResponse {
  if (offersSupportedSchema(offered)) return { status: 'entrypoint', entrypoint };
  return schemaMismatch(offered, TASK_CONTRACT_VERSION, SUPPORTED_SCHEMA_VERSIONS);
}
