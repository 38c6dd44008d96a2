/**
 * `agentscm agent-task transfer show`: read one collector transfer envelope file (or stdin for
 * `-`) through the bounded reader, at most 16 MiB, refuse it with its TRANSFER_* code when the
 * framing or a record digest is wrong, check the signature only against a key the operator
 * names, and describe it. Nothing is uploaded, imported or written.
 */
import {
  readTransferEnvelope,
  TRANSFER_LIMITS,
  transferDigest,
  transferHeaderToJson,
  verifyTransferEnvelope,
  type TransferEnvelope,
} from '../../../contracts/collector/transfer.js';
import type { JsonObject } from '../../../contracts/json/json-value.js';
import { parsePublicKeyHex } from '../../../contracts/key-file.js';
import { readBoundedInput } from '../../../native/bounded-input.js';

/** One record as `transfer show` prints it. */
export interface TransferRecordRow extends JsonObject {
  kind: string;
  length: bigint;
  digest: string;
}

/** What `transfer show` prints (--json), fields in this order. */
export interface TransferShowResult extends JsonObject {
  /** Envelope length in bytes. */
  length: number;
  /** Plain SHA-256 of the whole envelope: the transfer_digest a v2 receipt names. */
  transfer_digest: string;
  /** Domain digest of the header bytes: what the signature covers. */
  header_digest: string;
  header: JsonObject;
  records: TransferRecordRow[];
  signature: {
    hex: string;
    /** `valid` under --public-key, or `not_checked` without it (an invalid signature is an error). */
    check: 'valid' | 'not_checked';
    verification_key_id: string | null;
  };
}

/** Describe the envelope in FILE; with a public key (64 hex), also verify its signature strictly. */
export function showTransferEnvelopeFile(file: string, publicKeyHex: string | undefined): TransferShowResult {
  // The key is checked before the file is read, so a mistyped key fails the same way for every file.
  const publicKey = publicKeyHex === undefined ? undefined : parsePublicKeyHex(publicKeyHex);
  const bytes = readBoundedInput(file, {
    limit: TRANSFER_LIMITS.maxEnvelopeBytes,
    what: 'the transfer envelope',
    missingHint: 'pass the envelope file `agentscm agent-task collect` wrote, or - to read it from stdin',
    tooLargeHint: 'a collector transfer envelope is at most 16 MiB',
    stdin: true,
  });
  let envelope: TransferEnvelope;
  let keyId: string | null = null;
  if (publicKey === undefined) {
    envelope = readTransferEnvelope(bytes);
  } else {
    const verified = verifyTransferEnvelope(bytes, publicKey);
    envelope = verified;
    keyId = verified.verification_key_id;
  }
  return {
    length: envelope.length,
    transfer_digest: transferDigest(bytes),
    header_digest: envelope.headerDigest,
    header: transferHeaderToJson(envelope.header),
    records: envelope.records.map((record) => ({ kind: record.kind, length: record.length, digest: record.digest })),
    signature: {
      hex: Buffer.from(envelope.signature).toString('hex'),
      check: keyId === null ? 'not_checked' : 'valid',
      verification_key_id: keyId,
    },
  };
}
