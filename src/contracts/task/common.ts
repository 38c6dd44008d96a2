/**
 * Pieces shared by every agent-task v1 contract type (docs/agent-task-contract.md "Types (declared field order)";
 * docs/wire.md "Identifiers"): identifier and digest schema fragments, the agent and executor bindings, the
 * strict decoder wrapper, and UTF-8 byte-bound checks for values built in code rather than decoded.
 */
import { AgentscmError } from '../errors.js';
import {
  DIGEST_SCHEMA,
  ID_SCHEMA as IDS_ID_SCHEMA,
  U64_SCHEMA as IDS_U64_SCHEMA,
  REPOSITORY_ID_SCHEMA,
  SIGNATURE_SCHEMA,
} from '../ids.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';

/** The capability name of the agent-owned task contract. */
export const TASK_CAPABILITY = 'agentscm.agent-workflow-tasks/v1';
/** The one supported contract and schema version. */
export const TASK_CONTRACT_VERSION = 1;
export const SUPPORTED_SCHEMA_VERSIONS: readonly number[] = [TASK_CONTRACT_VERSION];

// The identifier schemas of docs/wire.md "Identifiers", under the names the task modules use.
export const ID_SCHEMA = IDS_ID_SCHEMA;
export const REPOSITORY_SCHEMA = REPOSITORY_ID_SCHEMA;
export const HEX64_SCHEMA = DIGEST_SCHEMA;
export const HEX128_SCHEMA = SIGNATURE_SCHEMA;
export const U64_SCHEMA = IDS_U64_SCHEMA;
/** A positive u64 (fences). */
export const POSITIVE_U64_SCHEMA = { u64: { minimum: '1' } } as const;
export const VERSION_SCHEMA = { type: 'integer', const: TASK_CONTRACT_VERSION } as const;

/** The authenticated actor a request acts for (spec: "authenticated owner and agent"). */
export interface AgentRef {
  readonly owner_id: string;
  readonly agent_id: string;
}

export const AGENT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['owner_id', 'agent_id'],
  properties: { owner_id: ID_SCHEMA, agent_id: ID_SCHEMA },
} as const;

/** Canonical (declared-order) JSON of an agent reference. */
export function agentToJson(agent: AgentRef): JsonObject {
  return { owner_id: agent.owner_id, agent_id: agent.agent_id };
}

/** The enrolled executor an attempt, request or observation is bound to (docs/wire.md TaskResultAssertion.executor). */
export interface ExecutorBinding {
  readonly registration_id: string;
  readonly executor_id: string;
  readonly registration_epoch: bigint;
  readonly verification_key_id: string;
}

export const EXECUTOR_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['registration_id', 'executor_id', 'registration_epoch', 'verification_key_id'],
  properties: {
    registration_id: ID_SCHEMA,
    executor_id: ID_SCHEMA,
    registration_epoch: U64_SCHEMA,
    verification_key_id: HEX64_SCHEMA,
  },
} as const;

export const NULLABLE_EXECUTOR_SCHEMA = { anyOf: [{ type: 'null' }, EXECUTOR_SCHEMA] } as const;

/** Canonical (declared-order) JSON of an executor binding, or null. */
export function executorToJson(executor: ExecutorBinding | null): JsonValue {
  if (executor === null) return null;
  return {
    registration_id: executor.registration_id,
    executor_id: executor.executor_id,
    registration_epoch: executor.registration_epoch,
    verification_key_id: executor.verification_key_id,
  };
}

/** Two agent references name the same actor. */
export function sameAgent(a: AgentRef, b: AgentRef): boolean {
  return a.owner_id === b.owner_id && a.agent_id === b.agent_id;
}

/** Two executor bindings (or two nulls) are identical in every field. */
export function sameExecutor(a: ExecutorBinding | null, b: ExecutorBinding | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.registration_id === b.registration_id &&
    a.executor_id === b.executor_id &&
    a.registration_epoch === b.registration_epoch &&
    a.verification_key_id === b.verification_key_id
  );
}

/** UTF-8 length of a string without allocating its encoding. */
export function utf8Length(value: string): number {
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) length += 1;
    else if (code < 0x800) length += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      length += 4;
      i++;
    } else length += 3;
  }
  return length;
}

/** Refuse a string longer than `maxBytes` UTF-8 bytes (SCHEMA_BOUND), naming where it sits. */
export function checkUtf8Bound(value: string, maxBytes: number, where: string): void {
  const length = utf8Length(value);
  if (length > maxBytes) {
    throw new AgentscmError('SCHEMA_BOUND', `${where} is ${length} UTF-8 bytes, more than ${maxBytes}`, {
      hint: `shorten it to at most ${maxBytes} UTF-8 bytes`,
      details: { pointer: where, size: length, limit: maxBytes },
    });
  }
}

/** Refuse a repeated value in a list that must be unique (SCHEMA_BOUND is not right: it is a shape error). */
export function checkUnique(values: readonly string[], where: string): void {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) {
      throw new AgentscmError('SCHEMA_TYPE', `${where} lists ${JSON.stringify(value)} twice`, {
        hint: 'list every entry once',
        details: { pointer: where, value },
      });
    }
    seen.add(value);
  }
}

/** Raw bytes of a lowercase hex string (already schema-checked). */
export function hexToBytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** A strict decoder of one agent-task contract type: bytes or an already parsed value in, a checked value out. */
export interface TaskDecoder<T> {
  /** Schema id, as published under docs/schemas/. */
  readonly id: string;
  readonly schema: object;
  /** Largest accepted input in bytes (checked before parsing). */
  readonly maxBytes: number;
  /** Size, strict parse, version, schema, then the type's own rules. */
  decode(bytes: Uint8Array): T;
  /** Version, schema and the type's own rules over an already parsed value (the input is not modified). */
  validate(value: JsonValue): T;
}

export interface TaskDecoderOptions<T> {
  readonly maxBytes: number;
  /** The version field checked first (default `version`); null for answers that carry none at the top. */
  readonly versionField?: 'version' | 'schema_version' | null;
  /** Rules JSON Schema cannot express (uniqueness, cross-field equalities, canonical paths). */
  readonly check?: (value: T) => void;
}

/**
 * Strict decoding in the order of docs/strict-json.md "Order of checks": size, UTF-8, strict parse, version
 * (SCHEMA_VERSION_UNSUPPORTED before anything else), schema (unknown fields, types, bounds; u64
 * to bigint), then the type's own rules.
 */
export function defineTaskDecoder<T>(id: string, schema: object, options: TaskDecoderOptions<T>): TaskDecoder<T> {
  const versionField = options.versionField === undefined ? 'version' : options.versionField;
  const decoder = defineDecoder<T>(
    id,
    schema,
    versionField === null ? {} : { versionField, supportedVersions: SUPPORTED_SCHEMA_VERSIONS },
  );
  const checked = (typed: T): T => {
    options.check?.(typed);
    return typed;
  };
  return {
    id,
    schema,
    maxBytes: options.maxBytes,
    decode: (bytes: Uint8Array): T => checked(decoder.decode(bytes, options.maxBytes)),
    validate: (value: JsonValue): T => checked(decoder.validate(value)),
  };
}
