/**
 * The collector transfer envelope v1 (docs/collector-transfer.md "Transfer envelope v1": "a distinct
 * signed capability with a 16 MiB envelope limit"; docs/wire.md "Collector transfer envelope v1"):
 *
 *     "AGSCMTR1" ‖ u32be header_length (≤ 65536) ‖ header ‖ signature (64) ‖ record bytes…
 *
 * The header is canonical JSON that commits to the audience, repository, profile, exact task
 * and attempt, execution operation, fence, origin, executor, request digest, collector identity,
 * upload request and the ordered records' kinds, lengths and plain SHA-256 digests. The
 * signature is strict Ed25519 over the 32 raw bytes of the header's domain digest
 * (`agentscm.collector-transfer.v1`). Reading checks, in this order and before holding anything
 * proportional to the input: total size, magic, header length, the header, the declared total,
 * exact framing; then the signature (when a key is given) and each record's digest. Records
 * are returned as views of the input, never copied. Pure: no I/O.
 */
import {
  DIGEST_BYTES,
  publicKeyOf,
  publicKeyProblem,
  SIGNATURE_BYTES,
  signDigest,
  verificationKeyId,
  verifyDigestStrict,
} from '../../crypto/ed25519.js';
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
  hexToBytes,
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

const MAGIC_BYTES = Buffer.from(TRANSFER_MAGIC, 'ascii');

/** Record kinds the header may name: a command collection's or a finite review's. */
export const TRANSFER_RECORD_KINDS = [
  'execution_request',
  'execution_record',
  'review_request',
  'review_record',
] as const;
export type TransferRecordKind = (typeof TRANSFER_RECORD_KINDS)[number];
/** The record sequence of a command collection: the collector's ExecutionRequest, then its ExecutionRecord. */
export const ACCEPTED_RECORD_SEQUENCE: readonly TransferRecordKind[] = ['execution_request', 'execution_record'];
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

function refuse(code: TransferErrorCode, message: string, hint: string, details: Record<string, unknown> = {}): never {
  throw new AgentscmError(code, message, { hint, details });
}

/**
 * The record kinds are exactly execution_request then execution_record (a command collection),
 * or 0–32 review_request then one review_record (a finite review); nothing else.
 */
export function transferKindOf(records: readonly Pick<TransferRecordEntry, 'kind'>[]): TransferKind | null {
  const kinds = records.map((record) => record.kind);
  if (
    kinds.length === ACCEPTED_RECORD_SEQUENCE.length &&
    kinds.every((kind, index) => kind === ACCEPTED_RECORD_SEQUENCE[index])
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
        `[${ACCEPTED_RECORD_SEQUENCE.join(', ')}] or 0–${MAX_REVIEW_TRANSFER_REQUESTS} review_request then one ` +
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
export interface TransferPrefix {
  readonly header: TransferHeader;
  /** The exact header bytes (a view of the input). */
  readonly headerBytes: Uint8Array;
  /** Magic, length, header, signature and every declared record: the exact envelope length. */
  readonly declaredLength: number;
}

/**
 * Read the prefix of an envelope: magic (TRANSFER_MAGIC_INVALID), header length at most 64 KiB
 * (TRANSFER_HEADER_TOO_LARGE, before the header is read), the header (TRANSFER_TRUNCATED if its
 * bytes are not all there), and the declared total at most 16 MiB (TRANSFER_TOO_LARGE), all
 * from the first 12 + header_length bytes: an uploader can refuse an oversize envelope before it
 * reads or buffers the records. `bytes` may be the prefix alone or the whole envelope.
 */
export function readTransferPrefix(bytes: Uint8Array): TransferPrefix {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magicSeen = Math.min(view.byteLength, TRANSFER_LIMITS.magicBytes);
  if (!view.subarray(0, magicSeen).equals(MAGIC_BYTES.subarray(0, magicSeen))) {
    refuse(
      'TRANSFER_MAGIC_INVALID',
      'the input does not start with the 8 bytes "AGSCMTR1"; it is not a collector transfer envelope v1',
      'pass the envelope file exactly as agent-task collect retained it',
      {
        first_bytes_hex: view.subarray(0, magicSeen).toString('hex'),
      },
    );
  }
  if (view.byteLength < TRANSFER_LIMITS.prefixBytes) {
    refuse(
      'TRANSFER_TRUNCATED',
      `the envelope ends after ${view.byteLength} bytes, inside its ${TRANSFER_LIMITS.prefixBytes}-byte prefix`,
      'the envelope was cut short; resend the retained bytes',
      {
        length: view.byteLength,
      },
    );
  }
  const headerLength = view.readUInt32BE(TRANSFER_LIMITS.magicBytes);
  if (headerLength > TRANSFER_LIMITS.maxHeaderBytes) {
    refuse(
      'TRANSFER_HEADER_TOO_LARGE',
      `the envelope declares a header of ${headerLength} bytes, more than ${TRANSFER_LIMITS.maxHeaderBytes}; it was ` +
        `not read`,
      'a transfer header is at most 64 KiB',
      {
        header_length: headerLength,
        limit: TRANSFER_LIMITS.maxHeaderBytes,
      },
    );
  }
  const headerEnd = TRANSFER_LIMITS.prefixBytes + headerLength;
  if (view.byteLength < headerEnd) {
    refuse(
      'TRANSFER_TRUNCATED',
      `the envelope declares a ${headerLength}-byte header but ends after ${view.byteLength} bytes`,
      'the envelope was cut short; resend the retained bytes',
      {
        length: view.byteLength,
        header_length: headerLength,
      },
    );
  }
  const headerBytes = view.subarray(TRANSFER_LIMITS.prefixBytes, headerEnd);
  const header = decodeTransferHeader(headerBytes);
  let declared = BigInt(headerEnd + TRANSFER_LIMITS.signatureBytes);
  for (const record of header.records) declared += record.length;
  if (declared > BigInt(TRANSFER_LIMITS.maxEnvelopeBytes)) {
    refuse(
      'TRANSFER_TOO_LARGE',
      `the header declares an envelope of ${declared} bytes, more than ${TRANSFER_LIMITS.maxEnvelopeBytes} (16 MiB); ` +
        `it was refused before its records were read`,
      'a transfer is at most 16 MiB in all',
      {
        declared_length: declared.toString(),
        limit: TRANSFER_LIMITS.maxEnvelopeBytes,
      },
    );
  }
  return { header, headerBytes, declaredLength: Number(declared) };
}

/** One record of a read envelope: its header entry and its bytes (a view of the input). */
export interface TransferRecord extends TransferRecordEntry {
  readonly bytes: Uint8Array;
}

/** A framed envelope whose records matched their digests; `signature` is not yet checked. */
export interface TransferEnvelope {
  readonly header: TransferHeader;
  readonly headerBytes: Uint8Array;
  /** Domain digest of the header bytes: what the signature covers. */
  readonly headerDigest: string;
  /** The 64 signature bytes (a view of the input). */
  readonly signature: Uint8Array;
  readonly records: readonly TransferRecord[];
  /** Total length in bytes. */
  readonly length: number;
}

/** A TransferEnvelope whose signature verified under a given key. */
export interface VerifiedTransferEnvelope extends TransferEnvelope {
  readonly verification_key_id: string;
}

/** Framing: the whole input has exactly the declared length (the prefix checks come first). */
function frame(
  bytes: Uint8Array,
): Omit<TransferEnvelope, 'records'> & { readonly recordViews: readonly TransferRecord[] } {
  if (bytes.byteLength > TRANSFER_LIMITS.maxEnvelopeBytes) {
    refuse(
      'TRANSFER_TOO_LARGE',
      `the envelope is ${bytes.byteLength} bytes, more than ${TRANSFER_LIMITS.maxEnvelopeBytes} (16 MiB)`,
      'a transfer is at most 16 MiB in all',
      {
        length: bytes.byteLength,
        limit: TRANSFER_LIMITS.maxEnvelopeBytes,
      },
    );
  }
  const { header, headerBytes, declaredLength } = readTransferPrefix(bytes);
  if (bytes.byteLength < declaredLength) {
    refuse(
      'TRANSFER_TRUNCATED',
      `the header declares an envelope of ${declaredLength} bytes but it ends after ${bytes.byteLength}`,
      'the envelope was cut short; resend the retained bytes',
      {
        length: bytes.byteLength,
        declared_length: declaredLength,
      },
    );
  }
  if (bytes.byteLength > declaredLength) {
    refuse(
      'TRANSFER_TRAILING_BYTES',
      `the envelope has ${bytes.byteLength - declaredLength} bytes after its last record (declared ` +
        `${declaredLength}, got ${bytes.byteLength})`,
      'nothing may follow the last record; send the envelope exactly as it was framed',
      {
        length: bytes.byteLength,
        declared_length: declaredLength,
      },
    );
  }
  const signatureStart = TRANSFER_LIMITS.prefixBytes + headerBytes.byteLength;
  let offset = signatureStart + TRANSFER_LIMITS.signatureBytes;
  const recordViews = header.records.map((entry) => {
    const length = Number(entry.length);
    const view = bytes.subarray(offset, offset + length);
    offset += length;
    return { ...entry, bytes: view };
  });
  return {
    header,
    headerBytes,
    headerDigest: transferHeaderDigest(headerBytes),
    signature: bytes.subarray(signatureStart, signatureStart + TRANSFER_LIMITS.signatureBytes),
    recordViews,
    length: bytes.byteLength,
  };
}

function checkRecordDigests(records: readonly TransferRecord[]): void {
  records.forEach((record, index) => {
    const actual = sha256Hex(record.bytes);
    if (actual !== record.digest) {
      refuse(
        'TRANSFER_RECORD_DIGEST_MISMATCH',
        `record ${index} (${record.kind}) has SHA-256 ${actual}; the header says ${record.digest}`,
        'the record bytes changed after signing; resend the retained envelope',
        {
          index,
          kind: record.kind,
          digest: record.digest,
          actual,
        },
      );
    }
  });
}

/**
 * Read an envelope without checking its signature (for display): size, magic, header, exact
 * framing and every record digest. Nothing read this way is evidence: importing needs
 * verifyTransferEnvelope with the key of the current registration.
 */
export function readTransferEnvelope(bytes: Uint8Array): TransferEnvelope {
  const { recordViews, ...framed } = frame(bytes);
  checkRecordDigests(recordViews);
  return { ...framed, records: recordViews };
}

function usablePublicKey(publicKey: Uint8Array): string {
  const problem = publicKeyProblem(publicKey);
  if (problem !== undefined) {
    throw new AgentscmError('PUBLIC_KEY_INVALID', `the public key is unusable: ${problem}`, {
      hint: 'pass the 64-hex public key of the enrolled registration',
    });
  }
  return verificationKeyId(publicKey);
}

/**
 * The signature check of a framed envelope: strict Ed25519 (RFC 8032, small-order keys refused)
 * over the 32 raw bytes of the header digest (TRANSFER_SIGNATURE_INVALID), then the header's
 * executor must name this key (TRANSFER_KEY_MISMATCH). Returns the key's verification_key_id.
 */
export function checkTransferSignature(
  envelope: Pick<TransferEnvelope, 'header' | 'headerDigest' | 'signature'>,
  publicKey: Uint8Array,
): string {
  const keyId = usablePublicKey(publicKey);
  if (!verifyDigestStrict(envelope.signature, hexToBytes(envelope.headerDigest), publicKey)) {
    refuse(
      'TRANSFER_SIGNATURE_INVALID',
      `the envelope signature does not verify under key ${keyId} over header digest ${envelope.headerDigest} (strict ` +
        `Ed25519)`,
      'the header or signature changed after signing, or another key signed it',
      {
        header_digest: envelope.headerDigest,
        verification_key_id: keyId,
      },
    );
  }
  if (envelope.header.executor.verification_key_id !== keyId) {
    refuse(
      'TRANSFER_KEY_MISMATCH',
      `the envelope verifies under key ${keyId} but its header names verification key ` +
        `${envelope.header.executor.verification_key_id}`,
      'the collector signed with a key other than the one its header names',
      {
        verification_key_id: keyId,
        header_verification_key_id: envelope.header.executor.verification_key_id,
      },
    );
  }
  return keyId;
}

/**
 * Read and verify an envelope (docs/collector-transfer.md "Reading order and refusals"): size, magic,
 * header, exact framing, the signature under `publicKey` and the header's key, then each
 * record's digest. Every refusal has its own code (docs/collector-transfer.md).
 */
export function verifyTransferEnvelope(bytes: Uint8Array, publicKey: Uint8Array): VerifiedTransferEnvelope {
  const { recordViews, ...framed } = frame(bytes);
  const keyId = checkTransferSignature(framed, publicKey);
  checkRecordDigests(recordViews);
  return { ...framed, records: recordViews, verification_key_id: keyId };
}

/**
 * Frame an envelope from its parts as they are (magic, u32be length, header, signature,
 * records): sizes are checked, contents are not. encodeTransferEnvelope is the checked path.
 */
export function frameTransferEnvelope(
  headerBytes: Uint8Array,
  signature: Uint8Array,
  records: readonly Uint8Array[],
): Buffer {
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
  if (signature.byteLength !== TRANSFER_LIMITS.signatureBytes)
    throw new AgentscmError(
      'INTERNAL',
      `a transfer signature is ${TRANSFER_LIMITS.signatureBytes} bytes, not ${signature.byteLength}`,
    );
  let total = TRANSFER_LIMITS.prefixBytes + headerBytes.byteLength + TRANSFER_LIMITS.signatureBytes;
  for (const record of records) total += record.byteLength;
  if (total > TRANSFER_LIMITS.maxEnvelopeBytes) {
    refuse(
      'TRANSFER_TOO_LARGE',
      `the envelope would be ${total} bytes, more than ${TRANSFER_LIMITS.maxEnvelopeBytes} (16 MiB)`,
      'a transfer is at most 16 MiB in all; the collector bounds its output below that',
      {
        length: total,
        limit: TRANSFER_LIMITS.maxEnvelopeBytes,
      },
    );
  }
  const out = Buffer.allocUnsafe(total);
  let offset = out.write(TRANSFER_MAGIC, 0, 'ascii');
  offset = out.writeUInt32BE(headerBytes.byteLength, offset);
  out.set(headerBytes, offset);
  offset += headerBytes.byteLength;
  out.set(signature, offset);
  offset += signature.byteLength;
  for (const record of records) {
    out.set(record, offset);
    offset += record.byteLength;
  }
  return out;
}

/** The header digest's 32 raw bytes signed with a 32-byte seed whose key the header's executor names. */
export function signTransferHeader(header: TransferHeader, privateKey: Uint8Array): Uint8Array {
  const keyId = verificationKeyId(publicKeyOf(privateKey));
  if (header.executor.verification_key_id !== keyId) {
    throw new AgentscmError(
      'SIGNING_KEY_MISMATCH',
      `the key ${keyId} is not the verification key ${header.executor.verification_key_id} the transfer header names`,
      {
        hint: 'sign with the key file whose public key was enrolled for this registration',
      },
    );
  }
  const digest = hexToBytes(transferHeaderDigest(encodeTransferHeader(header)));
  if (digest.byteLength !== DIGEST_BYTES) throw new AgentscmError('INTERNAL', 'a header digest is 32 bytes');
  return signDigest(digest, privateKey);
}

/**
 * Encode and sign an envelope (docs/wire.md "Collector transfer envelope v1"): the header is
 * validated as a reader would decode it, each record's bytes must match its header entry
 * (TRANSFER_RECORD_DIGEST_MISMATCH), and the signing key must be the one the header names.
 */
export function encodeTransferEnvelope(
  header: TransferHeader,
  records: readonly Uint8Array[],
  privateKey: Uint8Array,
): Buffer {
  validateTransferHeader(header);
  if (records.length !== header.records.length) {
    refuse(
      'TRANSFER_RECORDS_INVALID',
      `the header lists ${header.records.length} records but ${records.length} were given`,
      'give the bytes of every record the header lists, in its order',
    );
  }
  records.forEach((bytes, index) => {
    const entry = header.records[index] as TransferRecordEntry;
    if (BigInt(bytes.byteLength) !== entry.length || sha256Hex(bytes) !== entry.digest) {
      refuse(
        'TRANSFER_RECORD_DIGEST_MISMATCH',
        `record ${index} (${entry.kind}) is not the ${entry.length}-byte record with SHA-256 ${entry.digest} its ` +
          `header entry names`,
        'build the header entries from the record bytes (transferRecordEntry)',
        {
          index,
          kind: entry.kind,
        },
      );
    }
  });
  return frameTransferEnvelope(encodeTransferHeader(header), signTransferHeader(header, privateKey), records);
}
