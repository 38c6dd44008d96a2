/**
 * Over 400 lines: one wire format; header, digests, signature and envelope decoding are read together.
 *
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
 * are returned as views of the input, never copied. The header itself (schema, encoding, digests,
 * decoding) is ./transfer-header.ts, re-exported here for importers. Pure: no I/O.
 */
import {
  DIGEST_BYTES,
  publicKeyOf,
  publicKeyProblem,
  signDigest,
  verificationKeyId,
  verifyDigestStrict,
} from '../../crypto/ed25519.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { AgentscmError } from '../errors.js';
import { hexToBytes } from '../task/common.js';
import {
  decodeTransferHeader,
  encodeTransferHeader,
  refuse,
  TRANSFER_LIMITS,
  TRANSFER_MAGIC,
  transferHeaderDigest,
  validateTransferHeader,
  type TransferHeader,
  type TransferRecordEntry,
} from './transfer-header.js';

export {
  TRANSFER_VERSION,
  TRANSFER_MAGIC,
  TRANSFER_LIMITS,
  TRANSFER_RECORD_KINDS,
  ACCEPTED_RECORD_SEQUENCE,
  OUTPUT_TAIL_RECORD_KIND,
  MAX_REVIEW_TRANSFER_REQUESTS,
  TRANSFER_HEADER_SCHEMA,
  transferHeaderToJson,
  encodeTransferHeader,
  transferHeaderDigest,
  transferDigest,
  transferRecordEntry,
  transferKindOf,
  decodeTransferHeader,
  validateTransferHeader,
} from './transfer-header.js';
export type {
  TransferRecordKind,
  TransferKind,
  TransferRecordEntry,
  TransferCollector,
  TransferHeader,
  TransferErrorCode,
} from './transfer-header.js';

const MAGIC_BYTES = Buffer.from(TRANSFER_MAGIC, 'ascii');

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
