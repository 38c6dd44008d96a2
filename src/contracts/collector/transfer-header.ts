/**
 * The collector transfer header (docs/collector-transfer.md "Header"): its record kinds and limits,
 * schema, canonical encoding and digests, and the strict decoding of its bytes. The framing, reading
 * and signing of a whole envelope are in ./transfer.ts. Pure: no I/O.
 */
import { SIGNATURE_BYTES } from '../../crypto/ed25519.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { domainDigest, DOMAINS } from '../digest.js';
import { AgentscmError, isAgentscmError, type ErrorCode } from '../errors.js';
import type { GrantOrigin } from '../grant.js';
import { encodeCanonical } from '../json/canonical-json.js';
import type { JsonObject } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { REVIEW_LIMITS } from '../review/policy.js';
import {
  EXECUTOR_SCHEMA,
  executorToJson,
  HEX64_SCHEMA,
  ID_SCHEMA,
  POSITIVE_U64_SCHEMA,
  REPOSITORY_SCHEMA,
  type ExecutorBinding,
} from '../task/common.js';
import { AUTHORITY_ID_SCHEMA, ORIGIN_SCHEMA, originToJson } from './descriptor.js';

export const TRANSFER_VERSION = 1;
/** The 8 ASCII bytes every envelope starts with. */
export const TRANSFER_MAGIC = 'AGSCMTR1';
/** Bounds of docs/wire.md "Collector transfer envelope v1". */
export const TRANSFER_LIMITS = {
  magicBytes: 8,
  /** Magic plus the u32be header length. */
  prefixBytes: 12,
  maxHeaderBytes: 65_536,
  signatureBytes: SIGNATURE_BYTES,
  maxEnvelopeBytes: 16 * 1024 * 1024,
} as const;

/** Record kinds the header may name: a command collection's or a finite review's. */
export const TRANSFER_RECORD_KINDS = [
  'execution_request',
  'execution_record',
  'review_request',
  'review_record',
  'command_output_tail',
] as const;
export type TransferRecordKind = (typeof TRANSFER_RECORD_KINDS)[number];
/** The record sequence of a command collection: the collector's ExecutionRequest, then its ExecutionRecord. */
export const ACCEPTED_RECORD_SEQUENCE: readonly TransferRecordKind[] = ['execution_request', 'execution_record'];
/**
 * The diagnostic record a command collection may add after its ExecutionRecord (at most one; never in a review
 * transfer): the tails of stdout and stderr (./output-tail.ts).
 */
export const OUTPUT_TAIL_RECORD_KIND: TransferRecordKind = 'command_output_tail';
/**
 * A finite review's sequence: one review_request per recorded model call, in call order (none
 * when the review stopped before its first call), then the one review_record.
 */
export const MAX_REVIEW_TRANSFER_REQUESTS = REVIEW_LIMITS.maxModelCalls;
/** What a transfer carries, read from its record sequence. */
export type TransferKind = 'command' | 'review';

export interface TransferRecordEntry {
  readonly kind: TransferRecordKind;
  /** Exact length of the record's bytes. */
  readonly length: bigint;
  /** Plain SHA-256 of the record's bytes, lowercase hex. */
  readonly digest: string;
}

export interface TransferCollector {
  readonly agentscm_version: string;
  readonly runtime_identity_digest: string;
}

/** The signed header, fields in declared (encoding) order. */
export interface TransferHeader {
  readonly version: 1;
  /** The authority_id of the store the transfer is meant for. */
  readonly audience: string;
  readonly repository_id: string;
  readonly collector_profile_id: string;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly execution_operation_id: string;
  readonly fence: bigint;
  readonly origin: GrantOrigin;
  readonly executor: ExecutorBinding;
  /** Digest of the ExecutionRequest record, as the collector computes it. */
  readonly request_digest: string;
  readonly collector: TransferCollector;
  readonly upload_request_id: string;
  readonly records: readonly TransferRecordEntry[];
}

export const TRANSFER_HEADER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'audience',
    'repository_id',
    'collector_profile_id',
    'task_id',
    'task_digest',
    'attempt_id',
    'attempt_digest',
    'execution_operation_id',
    'fence',
    'origin',
    'executor',
    'request_digest',
    'collector',
    'upload_request_id',
    'records',
  ],
  properties: {
    version: { type: 'integer', const: TRANSFER_VERSION },
    audience: AUTHORITY_ID_SCHEMA,
    repository_id: REPOSITORY_SCHEMA,
    collector_profile_id: HEX64_SCHEMA,
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    attempt_id: ID_SCHEMA,
    attempt_digest: HEX64_SCHEMA,
    execution_operation_id: ID_SCHEMA,
    fence: POSITIVE_U64_SCHEMA,
    origin: ORIGIN_SCHEMA,
    executor: EXECUTOR_SCHEMA,
    request_digest: HEX64_SCHEMA,
    collector: {
      type: 'object',
      additionalProperties: false,
      required: ['agentscm_version', 'runtime_identity_digest'],
      properties: {
        agentscm_version: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[0-9A-Za-z][0-9A-Za-z.+-]*$' },
        runtime_identity_digest: HEX64_SCHEMA,
      },
    },
    upload_request_id: ID_SCHEMA,
    records: {
      type: 'array',
      maxItems: MAX_REVIEW_TRANSFER_REQUESTS + 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'length', 'digest'],
        properties: {
          kind: { type: 'string', enum: [...TRANSFER_RECORD_KINDS] },
          length: { u64: { minimum: '1' } },
          digest: HEX64_SCHEMA,
        },
      },
    },
  },
} as const;

const headerDecoder = defineDecoder<TransferHeader>('agent-task.collector-transfer-header', TRANSFER_HEADER_SCHEMA, {
  versionField: 'version',
  supportedVersions: [TRANSFER_VERSION],
});

/** Canonical (declared-order) JSON of a header. */
export function transferHeaderToJson(header: TransferHeader): JsonObject {
  return {
    version: header.version,
    audience: header.audience,
    repository_id: header.repository_id,
    collector_profile_id: header.collector_profile_id,
    task_id: header.task_id,
    task_digest: header.task_digest,
    attempt_id: header.attempt_id,
    attempt_digest: header.attempt_digest,
    execution_operation_id: header.execution_operation_id,
    fence: header.fence,
    origin: originToJson(header.origin),
    executor: executorToJson(header.executor),
    request_digest: header.request_digest,
    collector: {
      agentscm_version: header.collector.agentscm_version,
      runtime_identity_digest: header.collector.runtime_identity_digest,
    },
    upload_request_id: header.upload_request_id,
    records: header.records.map((record) => ({ kind: record.kind, length: record.length, digest: record.digest })),
  };
}

/** The canonical header bytes (what is framed and digested). */
export function encodeTransferHeader(header: TransferHeader): Buffer {
  return encodeCanonical(transferHeaderToJson(header));
}

/** The header digest: domain `agentscm.collector-transfer.v1` over the exact header bytes. */
export function transferHeaderDigest(headerBytes: Uint8Array): string {
  return domainDigest(DOMAINS.collectorTransfer, headerBytes);
}

/** The transfer digest a receipt names: the plain SHA-256 of the whole envelope. */
export function transferDigest(envelope: Uint8Array): string {
  return sha256Hex(envelope);
}

/** The header entry of one record: its kind, exact length and plain SHA-256. */
export function transferRecordEntry(kind: TransferRecordKind, bytes: Uint8Array): TransferRecordEntry {
  return { kind, length: BigInt(bytes.byteLength), digest: sha256Hex(bytes) };
}

/** The codes of this format (docs/errors.md "collector transfer and receipts"). */
export type TransferErrorCode = Extract<ErrorCode, `TRANSFER_${string}`>;

/** Throw a transfer refusal: one TRANSFER_* code, a message, a hint and bounded details. */
export function refuse(
  code: TransferErrorCode,
  message: string,
  hint: string,
  details: Record<string, unknown> = {},
): never {
  throw new AgentscmError(code, message, { hint, details });
}

/**
 * The record kinds are exactly execution_request then execution_record, optionally followed by one
 * command_output_tail (a command collection), or 0–32 review_request then one review_record (a
 * finite review); nothing else.
 */
export function transferKindOf(records: readonly Pick<TransferRecordEntry, 'kind'>[]): TransferKind | null {
  const kinds = records.map((record) => record.kind);
  const commandKinds = kinds.at(-1) === OUTPUT_TAIL_RECORD_KIND ? kinds.slice(0, -1) : kinds;
  if (
    commandKinds.length === ACCEPTED_RECORD_SEQUENCE.length &&
    commandKinds.every((kind, index) => kind === ACCEPTED_RECORD_SEQUENCE[index])
  )
    return 'command';
  const last = kinds.length - 1;
  if (
    last >= 0 &&
    last <= MAX_REVIEW_TRANSFER_REQUESTS &&
    kinds[last] === 'review_record' &&
    kinds.slice(0, last).every((kind) => kind === 'review_request')
  )
    return 'review';
  return null;
}

function checkRecordKinds(header: TransferHeader): void {
  if (transferKindOf(header.records) === null) {
    const kinds = header.records.map((record) => record.kind);
    refuse(
      'TRANSFER_RECORDS_INVALID',
      `the header lists records [${kinds.join(', ')}]; a transfer carries exactly ` +
        `[${ACCEPTED_RECORD_SEQUENCE.join(', ')}] (then at most one ${OUTPUT_TAIL_RECORD_KIND}) or ` +
        `0–${MAX_REVIEW_TRANSFER_REQUESTS} review_request then one ` +
        `review_record`,
      'send the ExecutionRequest and then the ExecutionRecord of one collection, or the ReviewRequests and then the ' +
        'ReviewRecord of one review',
      { kinds },
    );
  }
}

/**
 * Decode the exact header bytes strictly (docs/wire.md "Collector transfer envelope v1"): strict JSON
 * and schema (TRANSFER_HEADER_INVALID, with the decoder's own code in details.cause_code), the
 * canonical encoding byte for byte (TRANSFER_HEADER_NOT_CANONICAL), then the record sequence.
 */
export function decodeTransferHeader(headerBytes: Uint8Array): TransferHeader {
  if (headerBytes.byteLength > TRANSFER_LIMITS.maxHeaderBytes) {
    refuse(
      'TRANSFER_HEADER_TOO_LARGE',
      `the header is ${headerBytes.byteLength} bytes, more than ${TRANSFER_LIMITS.maxHeaderBytes}`,
      'a transfer header is at most 64 KiB',
      {
        header_length: headerBytes.byteLength,
        limit: TRANSFER_LIMITS.maxHeaderBytes,
      },
    );
  }
  let header: TransferHeader;
  try {
    header = headerDecoder.decode(headerBytes, TRANSFER_LIMITS.maxHeaderBytes);
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    throw new AgentscmError(
      'TRANSFER_HEADER_INVALID',
      `the transfer header is invalid: [${error.code}] ${error.message}`,
      {
        hint:
          'the header must be the canonical JSON of docs/wire.md "Collector transfer envelope v1" ' +
          '(docs/collector-transfer.md)',
        cause: error,
        details: { cause_code: error.code, ...(error.details === undefined ? {} : { cause_details: error.details }) },
      },
    );
  }
  const canonical = encodeTransferHeader(header);
  if (!canonical.equals(headerBytes)) {
    refuse(
      'TRANSFER_HEADER_NOT_CANONICAL',
      'the transfer header is valid JSON but not its canonical encoding (declared field order, compact, exact escapes)',
      'encode the header with the canonical encoder; a header has exactly one byte form',
      {
        header_length: headerBytes.byteLength,
        canonical_length: canonical.byteLength,
      },
    );
  }
  checkRecordKinds(header);
  return header;
}

/** Validate a header built in code (the same rules as decoding its canonical bytes). */
export function validateTransferHeader(header: TransferHeader): TransferHeader {
  return decodeTransferHeader(encodeTransferHeader(header));
}

/** What the first bytes of an envelope declare, checked before the rest is read or held. */
