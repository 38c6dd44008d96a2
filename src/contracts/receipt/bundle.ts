/**
 * Over 400 lines: one wire format; the bundle, its manifest and their strict decoders belong together.
 *
 * Receipt bundle v1 (issue "Admission", offline verification; docs/receipts.md "Bundle format"):
 * everything a v2 receipt rests on, in one file that a verifier with no store and no network
 * checks — the receipt's canonical bytes, every collector transfer envelope it names (exact
 * signed bytes), and the executor registrations (public keys) they were checked against.
 *
 *     "AGSCMRB1" ‖ u32be manifest_length (≤ 65536) ‖ manifest ‖ receipt bytes ‖ envelope bytes…
 *
 * The manifest is canonical JSON (declared order, one byte form) naming the receipt's digest and
 * length, each transfer's task, digest and length in the receipt's row order, and each
 * registration. A frame, not one JSON document, because an envelope is up to 16 MiB of raw
 * signed bytes: base64 in JSON would hold a third more and a decoded copy, and the framing lets a
 * reader refuse an oversize declaration from the first 64 KiB, before the rest is read — the
 * same convention as the collector transfer envelope. Reading checks, in this order and before
 * holding anything proportional to the input: total size, magic, manifest length, the manifest
 * (version first), the declared total, exact framing. Parts are returned as views of the input.
 * Pure: no I/O.
 */
import { TRANSFER_LIMITS } from '../collector/transfer.js';
import { AgentscmError, isAgentscmError, type ErrorCode } from '../errors.js';
import { encodeCanonical } from '../json/canonical-json.js';
import type { JsonObject } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { HEX64_SCHEMA, ID_SCHEMA, REPOSITORY_SCHEMA, U64_SCHEMA } from '../task/common.js';
import { MAX_RECEIPT_BYTES, MAX_RECEIPT_TASKS } from './receipt-v2.js';

export const RECEIPT_BUNDLE_VERSION = 1;
/** The 8 ASCII bytes every bundle starts with. */
export const RECEIPT_BUNDLE_MAGIC = 'AGSCMRB1';
const MAGIC_BYTES = Buffer.from(RECEIPT_BUNDLE_MAGIC, 'ascii');

/** Bounds of a bundle (docs/receipts.md "Bounds"). */
export const RECEIPT_BUNDLE_LIMITS = {
  magicBytes: 8,
  /** Magic plus the u32be manifest length. */
  prefixBytes: 12,
  maxManifestBytes: 65_536,
  maxReceiptBytes: MAX_RECEIPT_BYTES,
  /** A receipt has at most 32 rows, so it names at most 32 transfers and 32 registrations. */
  maxTransfers: MAX_RECEIPT_TASKS,
  maxRegistrations: MAX_RECEIPT_TASKS,
  maxEnvelopeBytes: TRANSFER_LIMITS.maxEnvelopeBytes,
  /** 12 + 64 KiB + 64 KiB + 32 × 16 MiB = 537,001,996 bytes. */
  maxBundleBytes: 12 + 65_536 + MAX_RECEIPT_BYTES + MAX_RECEIPT_TASKS * TRANSFER_LIMITS.maxEnvelopeBytes,
} as const;

/** One transfer the receipt names: the row's task, the envelope's plain SHA-256 and its length. */
export interface BundleTransfer {
  readonly task_id: string;
  readonly transfer_digest: string;
  readonly length: bigint;
}

/** One executor registration as the authority held it when the bundle was exported. */
export interface BundleRegistration {
  readonly registration_id: string;
  readonly repository_id: string;
  readonly workflow_profile: string;
  readonly step_id: string;
  readonly executor_id: string;
  readonly registration_epoch: bigint;
  /** The enrolled Ed25519 public key, 64 lowercase hex. */
  readonly public_key: string;
  /** SHA-256 of the 32 raw public-key bytes. */
  readonly verification_key_id: string;
}

/** The manifest, fields in declared (encoding) order. */
export interface ReceiptBundleManifest {
  readonly version: 1;
  readonly receipt: { readonly receipt_digest: string; readonly length: bigint };
  readonly transfers: readonly BundleTransfer[];
  readonly registrations: readonly BundleRegistration[];
}

export const RECEIPT_BUNDLE_MANIFEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'receipt', 'transfers', 'registrations'],
  properties: {
    version: { type: 'integer', const: RECEIPT_BUNDLE_VERSION },
    receipt: {
      type: 'object',
      additionalProperties: false,
      required: ['receipt_digest', 'length'],
      properties: {
        receipt_digest: HEX64_SCHEMA,
        length: { u64: { minimum: '1', maximum: String(MAX_RECEIPT_BYTES) } },
      },
    },
    transfers: {
      type: 'array',
      maxItems: MAX_RECEIPT_TASKS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['task_id', 'transfer_digest', 'length'],
        properties: {
          task_id: ID_SCHEMA,
          transfer_digest: HEX64_SCHEMA,
          length: { u64: { minimum: '1', maximum: String(TRANSFER_LIMITS.maxEnvelopeBytes) } },
        },
      },
    },
    registrations: {
      type: 'array',
      maxItems: MAX_RECEIPT_TASKS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: [
          'registration_id',
          'repository_id',
          'workflow_profile',
          'step_id',
          'executor_id',
          'registration_epoch',
          'public_key',
          'verification_key_id',
        ],
        properties: {
          registration_id: ID_SCHEMA,
          repository_id: REPOSITORY_SCHEMA,
          workflow_profile: ID_SCHEMA,
          step_id: ID_SCHEMA,
          executor_id: ID_SCHEMA,
          registration_epoch: U64_SCHEMA,
          public_key: HEX64_SCHEMA,
          verification_key_id: HEX64_SCHEMA,
        },
      },
    },
  },
} as const;

const manifestDecoder = defineDecoder<ReceiptBundleManifest>('receipt-bundle', RECEIPT_BUNDLE_MANIFEST_SCHEMA, {
  versionField: 'version',
  supportedVersions: [RECEIPT_BUNDLE_VERSION],
});

/** The codes of this format (docs/errors.md "receipt bundles"). */
export type ReceiptBundleErrorCode = Extract<ErrorCode, `RECEIPT_BUNDLE_${string}`>;

function refuse(
  code: ReceiptBundleErrorCode,
  message: string,
  hint: string,
  details: Record<string, unknown> = {},
): never {
  throw new AgentscmError(code, message, { hint, details });
}

/** Canonical (declared-order) JSON of a manifest. */
export function bundleManifestToJson(manifest: ReceiptBundleManifest): JsonObject {
  return {
    version: manifest.version,
    receipt: { receipt_digest: manifest.receipt.receipt_digest, length: manifest.receipt.length },
    transfers: manifest.transfers.map((t) => ({
      task_id: t.task_id,
      transfer_digest: t.transfer_digest,
      length: t.length,
    })),
    registrations: manifest.registrations.map((r) => ({
      registration_id: r.registration_id,
      repository_id: r.repository_id,
      workflow_profile: r.workflow_profile,
      step_id: r.step_id,
      executor_id: r.executor_id,
      registration_epoch: r.registration_epoch,
      public_key: r.public_key,
      verification_key_id: r.verification_key_id,
    })),
  };
}

/** The canonical manifest bytes. */
export function encodeBundleManifest(manifest: ReceiptBundleManifest): Buffer {
  return encodeCanonical(bundleManifestToJson(manifest));
}

/**
 * Strict decoding of a manifest's exact bytes: an unsupported version is
 * RECEIPT_BUNDLE_VERSION_UNSUPPORTED, any other decoding failure RECEIPT_BUNDLE_MANIFEST_INVALID
 * (details.cause_code names the rule), and bytes that are not the canonical encoding are
 * RECEIPT_BUNDLE_MANIFEST_INVALID too: a manifest has one byte form.
 */
export function decodeBundleManifest(bytes: Uint8Array): ReceiptBundleManifest {
  if (bytes.byteLength > RECEIPT_BUNDLE_LIMITS.maxManifestBytes) {
    refuse(
      'RECEIPT_BUNDLE_MANIFEST_INVALID',
      `the manifest is ${bytes.byteLength} bytes, more than ${RECEIPT_BUNDLE_LIMITS.maxManifestBytes}`,
      'a bundle manifest is at most 64 KiB',
      {
        cause_code: 'INPUT_TOO_LARGE',
      },
    );
  }
  let manifest: ReceiptBundleManifest;
  try {
    manifest = manifestDecoder.decode(bytes, RECEIPT_BUNDLE_LIMITS.maxManifestBytes);
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    if (error.code === 'SCHEMA_VERSION_UNSUPPORTED') {
      throw new AgentscmError(
        'RECEIPT_BUNDLE_VERSION_UNSUPPORTED',
        `the bundle manifest has an unsupported version: ${error.message}`,
        {
          hint:
            `this build reads receipt bundle version ${RECEIPT_BUNDLE_VERSION}; export the bundle again with ` +
            `this build`,
          cause: error,
          details: { cause_code: error.code, supported: [String(RECEIPT_BUNDLE_VERSION)] },
        },
      );
    }
    throw new AgentscmError(
      'RECEIPT_BUNDLE_MANIFEST_INVALID',
      `the bundle manifest is invalid: [${error.code}] ${error.message}`,
      {
        hint: 'the manifest must be the canonical JSON of docs/receipts.md "Bundle format"',
        cause: error,
        details: { cause_code: error.code, ...(error.details === undefined ? {} : { cause_details: error.details }) },
      },
    );
  }
  if (!encodeBundleManifest(manifest).equals(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
    refuse(
      'RECEIPT_BUNDLE_MANIFEST_INVALID',
      'the bundle manifest is valid JSON but not its canonical encoding (declared field order, compact, exact escapes)',
      'a manifest has exactly one byte form; export the bundle again',
      {
        cause_code: 'NOT_CANONICAL',
      },
    );
  }
  return manifest;
}

/** A framed bundle: the manifest and views of the receipt and envelope bytes (nothing verified yet). */
export interface ReceiptBundleParts {
  readonly manifest: ReceiptBundleManifest;
  readonly manifestBytes: Uint8Array;
  readonly receiptBytes: Uint8Array;
  /** One envelope per manifest transfer, in its order. */
  readonly envelopes: readonly Uint8Array[];
  readonly length: number;
}

/**
 * Read a bundle's frame: total size (RECEIPT_BUNDLE_TOO_LARGE), magic
 * (RECEIPT_BUNDLE_MAGIC_INVALID), manifest length and bytes (RECEIPT_BUNDLE_MANIFEST_INVALID,
 * RECEIPT_BUNDLE_TRUNCATED), the manifest, then the declared total against the input
 * (RECEIPT_BUNDLE_TRUNCATED, RECEIPT_BUNDLE_TRAILING_BYTES). Nothing is copied.
 */
export function decodeReceiptBundle(bytes: Uint8Array): ReceiptBundleParts {
  const L = RECEIPT_BUNDLE_LIMITS;
  if (bytes.byteLength > L.maxBundleBytes) {
    refuse(
      'RECEIPT_BUNDLE_TOO_LARGE',
      `the bundle is ${bytes.byteLength} bytes, more than ${L.maxBundleBytes}`,
      'a receipt bundle is at most 32 transfers of 16 MiB plus its manifest and receipt',
      {
        length: bytes.byteLength,
        limit: L.maxBundleBytes,
      },
    );
  }
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magicSeen = Math.min(view.byteLength, L.magicBytes);
  if (!view.subarray(0, magicSeen).equals(MAGIC_BYTES.subarray(0, magicSeen))) {
    refuse(
      'RECEIPT_BUNDLE_MAGIC_INVALID',
      `the input does not start with the 8 bytes "${RECEIPT_BUNDLE_MAGIC}"; it is not a receipt bundle v1`,
      'pass the file `agentscm receipt export` wrote',
      {
        first_bytes_hex: view.subarray(0, magicSeen).toString('hex'),
      },
    );
  }
  if (view.byteLength < L.prefixBytes) {
    refuse(
      'RECEIPT_BUNDLE_TRUNCATED',
      `the bundle ends after ${view.byteLength} bytes, inside its ${L.prefixBytes}-byte prefix`,
      'the bundle was cut short; export it again',
      { length: view.byteLength },
    );
  }
  const manifestLength = view.readUInt32BE(L.magicBytes);
  if (manifestLength > L.maxManifestBytes) {
    refuse(
      'RECEIPT_BUNDLE_MANIFEST_INVALID',
      `the bundle declares a manifest of ${manifestLength} bytes, more than ${L.maxManifestBytes}; it was not read`,
      'a bundle manifest is at most 64 KiB',
      {
        cause_code: 'INPUT_TOO_LARGE',
        manifest_length: manifestLength,
      },
    );
  }
  const manifestEnd = L.prefixBytes + manifestLength;
  if (view.byteLength < manifestEnd) {
    refuse(
      'RECEIPT_BUNDLE_TRUNCATED',
      `the bundle declares a ${manifestLength}-byte manifest but ends after ${view.byteLength} bytes`,
      'the bundle was cut short; export it again',
      {
        length: view.byteLength,
        manifest_length: manifestLength,
      },
    );
  }
  const manifestBytes = view.subarray(L.prefixBytes, manifestEnd);
  const manifest = decodeBundleManifest(manifestBytes);
  // Each length is bounded by the schema, so the sum stays far below 2^53.
  let declared = manifestEnd + Number(manifest.receipt.length);
  for (const transfer of manifest.transfers) declared += Number(transfer.length);
  if (declared > L.maxBundleBytes) {
    refuse(
      'RECEIPT_BUNDLE_TOO_LARGE',
      `the manifest declares a bundle of ${declared} bytes, more than ${L.maxBundleBytes}`,
      'a receipt bundle is at most 32 transfers of 16 MiB plus its manifest and receipt',
      {
        declared_length: declared,
        limit: L.maxBundleBytes,
      },
    );
  }
  if (view.byteLength < declared) {
    refuse(
      'RECEIPT_BUNDLE_TRUNCATED',
      `the manifest declares a bundle of ${declared} bytes but it ends after ${view.byteLength}`,
      'the bundle was cut short; export it again',
      {
        length: view.byteLength,
        declared_length: declared,
      },
    );
  }
  if (view.byteLength > declared) {
    refuse(
      'RECEIPT_BUNDLE_TRAILING_BYTES',
      `the bundle has ${view.byteLength - declared} bytes after its last envelope (declared ${declared}, got ` +
        `${view.byteLength})`,
      'nothing may follow the last envelope; export the bundle again',
      {
        length: view.byteLength,
        declared_length: declared,
      },
    );
  }
  let offset = manifestEnd;
  const receiptBytes = view.subarray(offset, offset + Number(manifest.receipt.length));
  offset += receiptBytes.byteLength;
  const envelopes = manifest.transfers.map((transfer) => {
    const envelope = view.subarray(offset, offset + Number(transfer.length));
    offset += envelope.byteLength;
    return envelope;
  });
  return { manifest, manifestBytes, receiptBytes, envelopes, length: view.byteLength };
}

/** Frame a bundle from its parts; lengths in the manifest must be the parts' lengths. */
export function encodeReceiptBundle(
  manifest: ReceiptBundleManifest,
  receiptBytes: Uint8Array,
  envelopes: readonly Uint8Array[],
): Buffer {
  const manifestBytes = encodeBundleManifest(manifest);
  decodeBundleManifest(manifestBytes);
  if (BigInt(receiptBytes.byteLength) !== manifest.receipt.length || envelopes.length !== manifest.transfers.length) {
    throw new AgentscmError('INTERNAL', 'the bundle manifest does not describe the receipt and envelopes given');
  }
  envelopes.forEach((envelope, index) => {
    if (BigInt(envelope.byteLength) !== manifest.transfers[index]?.length)
      throw new AgentscmError(
        'INTERNAL',
        `the bundle manifest gives transfer ${index} another length than its envelope`,
      );
  });
  const total =
    RECEIPT_BUNDLE_LIMITS.prefixBytes +
    manifestBytes.byteLength +
    receiptBytes.byteLength +
    envelopes.reduce((sum, e) => sum + e.byteLength, 0);
  if (total > RECEIPT_BUNDLE_LIMITS.maxBundleBytes) {
    refuse(
      'RECEIPT_BUNDLE_TOO_LARGE',
      `the bundle would be ${total} bytes, more than ${RECEIPT_BUNDLE_LIMITS.maxBundleBytes}`,
      'a receipt bundle is at most 32 transfers of 16 MiB plus its manifest and receipt',
      { length: total },
    );
  }
  const out = Buffer.allocUnsafe(total);
  let offset = out.write(RECEIPT_BUNDLE_MAGIC, 0, 'ascii');
  offset = out.writeUInt32BE(manifestBytes.byteLength, offset);
  for (const part of [manifestBytes, receiptBytes, ...envelopes]) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
