/**
 * Named references and their fetch (docs/agent-task-contract.md "Types (declared field order)"): a reference is
 * only a name, an expected SHA-256 and a canonical relative path; a fetch names the exact task
 * and reference, never a path, and its answer keeps available, missing, denied, uncertain and
 * limit apart — there is no partial success.
 */
import { sha256Hex } from '../crypto/sha256.js';
import { AgentscmError } from './errors.js';
import type { JsonObject } from './json/json-value.js';
import { validateRelativePath } from './paths.js';
import {
  AGENT_SCHEMA,
  agentToJson,
  checkUnique,
  defineTaskDecoder,
  HEX64_SCHEMA,
  ID_SCHEMA,
  TASK_CAPABILITY,
  utf8Length,
  VERSION_SCHEMA,
  type AgentRef,
  type TaskDecoder,
} from './task/common.js';

/** A reference body is refused above this many bytes, before it is read (spec: 128 KiB). */
export const REFERENCE_MAX_BYTES = 128 * 1024;
/** Longest reference path in UTF-8 bytes (paths are ASCII; same as skill package paths). */
export const REFERENCE_PATH_MAX_BYTES = 512;
/** At most this many named references per task. */
export const MAX_REFERENCES = 32;
/** At most this many schema versions offered by a caller. */
export const MAX_OFFERED_SCHEMA_VERSIONS = 8;

export interface NamedReference {
  readonly name: string;
  /** Expected SHA-256 (plain, not domain-separated) of the reference body. */
  readonly sha256: string;
  /** Canonical relative path inside the task's immutable revision. */
  readonly path: string;
}

export const NAMED_REFERENCE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'sha256', 'path'],
  properties: {
    name: ID_SCHEMA,
    sha256: HEX64_SCHEMA,
    path: { type: 'string', minLength: 1, maxLength: REFERENCE_PATH_MAX_BYTES },
  },
} as const;

/** Path rules of the spec for one reference (ASCII, `/` only, no empty/./.. parts, no control, no drive). */
export function checkNamedReference(reference: NamedReference, where: string): void {
  validateRelativePath(reference.path);
  if (utf8Length(reference.path) > REFERENCE_PATH_MAX_BYTES) {
    throw new AgentscmError('PATH_INVALID', `${where}.path is longer than ${REFERENCE_PATH_MAX_BYTES} bytes`);
  }
}

/** Check a list of references: every path canonical, every name unique. */
export function checkNamedReferences(references: readonly NamedReference[], where: string): void {
  references.forEach((reference, index) => checkNamedReference(reference, `${where}/${index}`));
  checkUnique(
    references.map((reference) => reference.name),
    `${where} (names)`,
  );
}

export function namedReferenceToJson(reference: NamedReference): JsonObject {
  return { name: reference.name, sha256: reference.sha256, path: reference.path };
}

/** ReferenceFetchRequest: exact task id and digest, reference name, expected digest and schema, and the actor. */
export interface ReferenceFetchRequest {
  readonly version: 1;
  readonly task_id: string;
  readonly task_digest: string;
  readonly name: string;
  readonly expected_sha256: string;
  /** Schema versions the caller can read; an unsupported set answers schema_mismatch. */
  readonly expected_schema_version: number;
  readonly agent: AgentRef;
}

export const REFERENCE_FETCH_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'task_id', 'task_digest', 'name', 'expected_sha256', 'expected_schema_version', 'agent'],
  properties: {
    version: VERSION_SCHEMA,
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    name: ID_SCHEMA,
    expected_sha256: HEX64_SCHEMA,
    expected_schema_version: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    agent: AGENT_SCHEMA,
  },
} as const;

export function referenceFetchRequestToJson(request: ReferenceFetchRequest): JsonObject {
  return {
    version: request.version,
    task_id: request.task_id,
    task_digest: request.task_digest,
    name: request.name,
    expected_sha256: request.expected_sha256,
    expected_schema_version: request.expected_schema_version,
    agent: agentToJson(request.agent),
  };
}

/** Strict decoder of a reference fetch (docs/agent-task-contract.md "Types (declared field order)"). */
export const referenceFetchRequestDecoder: TaskDecoder<ReferenceFetchRequest> =
  defineTaskDecoder<ReferenceFetchRequest>('agent-task.reference-fetch-request', REFERENCE_FETCH_REQUEST_SCHEMA, {
    maxBytes: 8 * 1024,
  });

/** Why a reference is not available; fixed codes, never server text. */
export type ReferenceDeniedCode = 'not_authorized' | 'not_in_task' | 'digest_mismatch' | 'not_utf8';
export type ReferenceUncertainCode = 'source_unavailable' | 'store_busy' | 'subject_changed';

export type ReferenceFetchResponse =
  | {
      readonly status: 'available';
      readonly name: string;
      readonly sha256: string;
      readonly byte_length: number;
      /** The exact UTF-8 body; its SHA-256 equals both the stored reference and the request. */
      readonly content: string;
    }
  | { readonly status: 'missing'; readonly name: string }
  | { readonly status: 'denied'; readonly name: string; readonly code: ReferenceDeniedCode }
  | { readonly status: 'uncertain'; readonly name: string; readonly code: ReferenceUncertainCode }
  | { readonly status: 'limit'; readonly name: string; readonly byte_length: number; readonly limit_bytes: number }
  | ReferenceSchemaMismatch;

/** The explicit schema mismatch of docs/hub.md "MCP" (never an empty answer). */
export interface ReferenceSchemaMismatch {
  readonly status: 'schema_mismatch';
  readonly capability: typeof TASK_CAPABILITY;
  readonly required_schema_version: number;
  /** Echo of the versions the caller offered. */
  readonly supported_schema_versions: readonly number[];
  readonly server_schema_versions: readonly number[];
  readonly action: string;
}

/** The fixed retry hint of a schema mismatch (data, never a command). */
export const SCHEMA_MISMATCH_ACTION =
  'reinstall a client that supports one of server_schema_versions, then call capabilities';

const SCHEMA_VERSIONS_SCHEMA = {
  type: 'array',
  maxItems: MAX_OFFERED_SCHEMA_VERSIONS,
  items: { type: 'integer', minimum: 1, maximum: 1_000_000 },
} as const;

export const SCHEMA_MISMATCH_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'status',
    'capability',
    'required_schema_version',
    'supported_schema_versions',
    'server_schema_versions',
    'action',
  ],
  properties: {
    status: { const: 'schema_mismatch' },
    capability: { const: TASK_CAPABILITY },
    required_schema_version: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    supported_schema_versions: SCHEMA_VERSIONS_SCHEMA,
    server_schema_versions: { ...SCHEMA_VERSIONS_SCHEMA, minItems: 1 },
    action: { type: 'string', minLength: 1, maxLength: 256 },
  },
} as const;

export const REFERENCE_FETCH_RESPONSE_SCHEMA = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'name', 'sha256', 'byte_length', 'content'],
      properties: {
        status: { const: 'available' },
        name: ID_SCHEMA,
        sha256: HEX64_SCHEMA,
        byte_length: { type: 'integer', minimum: 0, maximum: REFERENCE_MAX_BYTES },
        content: { type: 'string', maxUtf8Bytes: REFERENCE_MAX_BYTES },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'name'],
      properties: { status: { const: 'missing' }, name: ID_SCHEMA },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'name', 'code'],
      properties: {
        status: { const: 'denied' },
        name: ID_SCHEMA,
        code: { enum: ['not_authorized', 'not_in_task', 'digest_mismatch', 'not_utf8'] },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'name', 'code'],
      properties: {
        status: { const: 'uncertain' },
        name: ID_SCHEMA,
        code: { enum: ['source_unavailable', 'store_busy', 'subject_changed'] },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'name', 'byte_length', 'limit_bytes'],
      properties: {
        status: { const: 'limit' },
        name: ID_SCHEMA,
        byte_length: { type: 'integer', minimum: 0 },
        limit_bytes: { const: REFERENCE_MAX_BYTES },
      },
    },
    SCHEMA_MISMATCH_SCHEMA,
  ],
} as const;

function checkReferenceFetchResponse(response: ReferenceFetchResponse): void {
  if (response.status === 'available') {
    const length = utf8Length(response.content);
    if (length !== response.byte_length) {
      throw new AgentscmError(
        'SCHEMA_TYPE',
        `the available reference says byte_length ${response.byte_length} but its content is ${length} UTF-8 bytes`,
      );
    }
  }
  if (response.status === 'limit' && response.byte_length <= response.limit_bytes) {
    throw new AgentscmError(
      'SCHEMA_TYPE',
      `a limit answer must report a body larger than ${response.limit_bytes} bytes`,
    );
  }
}

/** Strict decoder of a reference fetch response (a client reads it; the service builds it). */
export const referenceFetchResponseDecoder: TaskDecoder<ReferenceFetchResponse> =
  defineTaskDecoder<ReferenceFetchResponse>(
    'agent-task.reference-fetch-response',
    REFERENCE_FETCH_RESPONSE_SCHEMA,
    // The body is bounded at 128 KiB; JSON escaping can at most sextuple it (\u00xx).
    { maxBytes: 6 * REFERENCE_MAX_BYTES + 4096, versionField: null, check: checkReferenceFetchResponse },
  );

/** The schema mismatch answer for a caller that offered `offered` but this server needs `required`. */
export function schemaMismatch(
  offered: readonly number[],
  required: number,
  serverVersions: readonly number[],
): ReferenceSchemaMismatch {
  return {
    status: 'schema_mismatch',
    capability: TASK_CAPABILITY,
    required_schema_version: required,
    supported_schema_versions: offered.slice(0, MAX_OFFERED_SCHEMA_VERSIONS),
    server_schema_versions: [...serverVersions],
    action: SCHEMA_MISMATCH_ACTION,
  };
}

const FATAL_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The answer for a reference whose stored size is known before reading (spec: bodies above 128 KiB
 * are refused before allocation): `limit` when too large, otherwise null (go on and read it).
 */
export function referenceLimit(name: string, storedSize: number | bigint): ReferenceFetchResponse | null {
  const size = BigInt(storedSize);
  if (size <= BigInt(REFERENCE_MAX_BYTES)) return null;
  return {
    status: 'limit',
    name,
    byte_length: size > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(size),
    limit_bytes: REFERENCE_MAX_BYTES,
  };
}

/**
 * The answer for a body read from the task's immutable revision (docs/agent-task-contract.md "Types (declared field
 * order)"): available only when the request names the stored reference's digest, the body is within
 * 128 KiB, its SHA-256 equals that digest and it is UTF-8. No partial success.
 */
export function referenceResponseForBody(
  reference: NamedReference,
  request: Pick<ReferenceFetchRequest, 'name' | 'expected_sha256'>,
  body: Uint8Array,
): ReferenceFetchResponse {
  if (request.name !== reference.name)
    throw new AgentscmError('INTERNAL', 'the body belongs to another reference than the request names');
  if (request.expected_sha256 !== reference.sha256)
    return { status: 'denied', name: reference.name, code: 'digest_mismatch' };
  const limit = referenceLimit(reference.name, body.byteLength);
  if (limit !== null) return limit;
  if (sha256Hex(body) !== reference.sha256) return { status: 'denied', name: reference.name, code: 'digest_mismatch' };
  let content: string;
  try {
    content = FATAL_UTF8.decode(body);
  } catch {
    return { status: 'denied', name: reference.name, code: 'not_utf8' };
  }
  return { status: 'available', name: reference.name, sha256: reference.sha256, byte_length: body.byteLength, content };
}
