/**
 * The collector descriptor (docs/collector-transfer.md "Collector descriptor": the "server-derived
 * claimed descriptor matching that installed profile"; docs/wire.md "Collector descriptor"): the
 * answer of `collector_claim` and `collector_descriptor`, and the input of `agent-task collect`.
 * It names the authority, the installed collector profile, the claimed task and attempt with
 * its fence and lease, the exact subject, the originating actor and grant, the enrolled
 * executor, the complete recipe, the pinned runtime identity and the fresh upload request.
 * Pure: shape, strict decoding and the canonical encoding in declared order.
 */
import { AgentscmError } from '../errors.js';
import type { GrantOrigin } from '../grant.js';
import { encodeCanonical } from '../json/canonical-json.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { relativePathProblem } from '../paths.js';
import {
  EXECUTOR_SCHEMA,
  executorToJson,
  HEX64_SCHEMA,
  ID_SCHEMA,
  POSITIVE_U64_SCHEMA,
  REPOSITORY_SCHEMA,
  U64_SCHEMA,
  type ExecutorBinding,
} from '../task/common.js';
import { SUBJECT_BASE_FIELDS, SUBJECT_BASE_PROPERTIES, type TargetSubject } from '../task/subject.js';
import { COMMAND_RECIPE_SCHEMA, RECIPE_LIMITS, type CommandRecipe } from './command-recipe.js';

export const COLLECTOR_DESCRIPTOR_VERSION = 1;
/** A descriptor holds one recipe (at most 64 KiB) and a few hundred bytes of bindings. */
export const MAX_COLLECTOR_DESCRIPTOR_BYTES = RECIPE_LIMITS.maxRecipeBytes + 32 * 1024;

/** The originating actor and grant of a claim (docs/wire.md "Authority identity and grants"). */
export const ORIGIN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['owner_id', 'agent_id', 'grant_id', 'grant_generation'],
  properties: { owner_id: ID_SCHEMA, agent_id: ID_SCHEMA, grant_id: ID_SCHEMA, grant_generation: U64_SCHEMA },
} as const;

/** Canonical (declared-order) JSON of an origin. */
export function originToJson(origin: GrantOrigin): JsonObject {
  return {
    owner_id: origin.owner_id,
    agent_id: origin.agent_id,
    grant_id: origin.grant_id,
    grant_generation: origin.grant_generation,
  };
}

/** The authority's identity: 32 lowercase hex, like a repository id (docs/wire.md "Authority identity and grants"). */
export const AUTHORITY_ID_SCHEMA = REPOSITORY_SCHEMA;

// The recipe schema as it sits inside another document: its `$id` names the standalone file only.
const { $id: _recipeId, ...EMBEDDED_RECIPE_SCHEMA } = COMMAND_RECIPE_SCHEMA;

/** Canonical JSON of a recipe in the CommandRecipe declared order (env keeps its own key order). */
export function recipeToJson(recipe: CommandRecipe): JsonObject {
  const env: JsonObject = {};
  for (const key of Object.keys(recipe.env)) env[key] = recipe.env[key] ?? '';
  return {
    version: recipe.version,
    image: recipe.image,
    argv: [...recipe.argv],
    env,
    workdir: recipe.workdir,
    timeout_ms: recipe.timeout_ms,
    limits: {
      memory_bytes: recipe.limits.memory_bytes,
      pids: recipe.limits.pids,
      cpu_millis: recipe.limits.cpu_millis,
      output_bytes: recipe.limits.output_bytes,
      scratch_bytes: recipe.limits.scratch_bytes,
    },
    toolchain: recipe.toolchain,
    environment: recipe.environment,
  };
}

export interface DescriptorTask {
  readonly task_id: string;
  readonly task_digest: string;
}

export interface DescriptorAttempt {
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly fence: bigint;
  readonly execution_operation_id: string;
  /** When the claimed lease ends, in ms since the Unix epoch (an observation, not proof of termination). */
  readonly lease_expires_at_ms: bigint;
}

/** The descriptor's subject: the target subject, in declared order base fields first. */
export type DescriptorSubject = TargetSubject;

/** docs/wire.md "Collector descriptor", fields in declared (encoding) order. */
export interface CollectorDescriptor {
  readonly version: 1;
  readonly authority_id: string;
  readonly repository_id: string;
  readonly workflow_profile: string;
  readonly collector_profile_id: string;
  readonly task: DescriptorTask;
  readonly attempt: DescriptorAttempt;
  readonly subject: DescriptorSubject;
  readonly origin: GrantOrigin;
  readonly executor: ExecutorBinding;
  readonly recipe: CommandRecipe;
  readonly runtime_identity_digest: string;
  readonly upload_request_id: string;
}

export const COLLECTOR_DESCRIPTOR_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'authority_id',
    'repository_id',
    'workflow_profile',
    'collector_profile_id',
    'task',
    'attempt',
    'subject',
    'origin',
    'executor',
    'recipe',
    'runtime_identity_digest',
    'upload_request_id',
  ],
  properties: {
    version: { type: 'integer', const: COLLECTOR_DESCRIPTOR_VERSION },
    authority_id: AUTHORITY_ID_SCHEMA,
    repository_id: REPOSITORY_SCHEMA,
    workflow_profile: ID_SCHEMA,
    collector_profile_id: HEX64_SCHEMA,
    task: {
      type: 'object',
      additionalProperties: false,
      required: ['task_id', 'task_digest'],
      properties: { task_id: ID_SCHEMA, task_digest: HEX64_SCHEMA },
    },
    attempt: {
      type: 'object',
      additionalProperties: false,
      required: ['attempt_id', 'attempt_digest', 'fence', 'execution_operation_id', 'lease_expires_at_ms'],
      properties: {
        attempt_id: ID_SCHEMA,
        attempt_digest: HEX64_SCHEMA,
        fence: POSITIVE_U64_SCHEMA,
        execution_operation_id: ID_SCHEMA,
        lease_expires_at_ms: U64_SCHEMA,
      },
    },
    subject: {
      type: 'object',
      additionalProperties: false,
      required: [...SUBJECT_BASE_FIELDS, 'target', 'requirement_digest'],
      properties: {
        ...SUBJECT_BASE_PROPERTIES,
        target: ID_SCHEMA,
        requirement_digest: HEX64_SCHEMA,
      },
    },
    origin: ORIGIN_SCHEMA,
    executor: EXECUTOR_SCHEMA,
    recipe: EMBEDDED_RECIPE_SCHEMA,
    runtime_identity_digest: HEX64_SCHEMA,
    upload_request_id: ID_SCHEMA,
  },
} as const;

const descriptorDecoder = defineDecoder<CollectorDescriptor>(
  'agent-task.collector-descriptor',
  COLLECTOR_DESCRIPTOR_SCHEMA,
  {
    versionField: 'version',
    supportedVersions: [COLLECTOR_DESCRIPTOR_VERSION],
  },
);

/** The recipe's working directory is "." or a canonical relative path, as for a standalone recipe. */
function checkDescriptor(descriptor: CollectorDescriptor): CollectorDescriptor {
  const workdir = descriptor.recipe.workdir;
  const problem = workdir === '.' ? undefined : relativePathProblem(workdir);
  if (problem !== undefined) {
    throw new AgentscmError(
      'PATH_INVALID',
      `descriptor recipe workdir ${JSON.stringify(workdir.slice(0, 80))} is not "." or a canonical relative path: ` +
        `${problem}`,
      {
        hint: 'the descriptor carries the recipe of the installed collector profile; claim again to get it unchanged',
        details: { pointer: '/recipe/workdir' },
      },
    );
  }
  return descriptor;
}

/** Strict decoding of a descriptor (docs/wire.md "Collector descriptor"): u64 fields come out as bigint. */
export function decodeCollectorDescriptor(bytes: Uint8Array): CollectorDescriptor {
  return checkDescriptor(descriptorDecoder.decode(bytes, MAX_COLLECTOR_DESCRIPTOR_BYTES));
}

/** Strict validation of an already parsed descriptor (the input is not modified). */
export function validateCollectorDescriptor(value: JsonValue): CollectorDescriptor {
  return checkDescriptor(descriptorDecoder.validate(value));
}

/**
 * The bindings every kind of descriptor starts with, from `version` to `executor`, in declared
 * order (the command and the review descriptor add their own members after them).
 */
export function descriptorBindingsToJson(
  descriptor: Omit<CollectorDescriptor, 'recipe' | 'runtime_identity_digest' | 'upload_request_id'>,
): JsonObject {
  const { task, attempt, subject } = descriptor;
  return {
    version: descriptor.version,
    authority_id: descriptor.authority_id,
    repository_id: descriptor.repository_id,
    workflow_profile: descriptor.workflow_profile,
    collector_profile_id: descriptor.collector_profile_id,
    task: { task_id: task.task_id, task_digest: task.task_digest },
    attempt: {
      attempt_id: attempt.attempt_id,
      attempt_digest: attempt.attempt_digest,
      fence: attempt.fence,
      execution_operation_id: attempt.execution_operation_id,
      lease_expires_at_ms: attempt.lease_expires_at_ms,
    },
    subject: {
      change_id: subject.change_id,
      change_version: subject.change_version,
      revision: subject.revision,
      context_digest: subject.context_digest,
      policy_epoch: subject.policy_epoch,
      target: subject.target,
      requirement_digest: subject.requirement_digest,
    },
    origin: originToJson(descriptor.origin),
    executor: executorToJson(descriptor.executor),
  };
}

/** Canonical (declared-order) JSON of a descriptor (docs/wire.md "Collector descriptor"). */
export function collectorDescriptorToJson(descriptor: CollectorDescriptor): JsonObject {
  return {
    ...descriptorBindingsToJson(descriptor),
    recipe: recipeToJson(descriptor.recipe),
    runtime_identity_digest: descriptor.runtime_identity_digest,
    upload_request_id: descriptor.upload_request_id,
  };
}

/** The canonical bytes of a descriptor (what `agent-task claim --out` writes). */
export function encodeCollectorDescriptor(descriptor: CollectorDescriptor): Buffer {
  return encodeCanonical(collectorDescriptorToJson(descriptor));
}
