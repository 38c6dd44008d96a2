/**
 * Offline verification of a receipt bundle (issue "Admission", "Offline verification";
 * docs/receipts.md "What verify checks"). Pure: bytes in, a typed answer or an AgentscmError out —
 * no store, no network, no clock — so `agentscm receipt verify`, the hub or a dashboard call the
 * same function. It proves that the receipt's evidence rows rest on transfers signed (strict
 * Ed25519) by the keys of the registrations in the bundle, that every signed header and record
 * says what the receipt says, and that every row's outcome is its signed record's (a passed row
 * rests on a passed record, an omission on the record that made it one); it does not prove that a
 * registration or grant is still current (that is the authority's business when it lands).
 *
 * The checks run in a fixed order and each failure has its own code (docs/errors.md "receipt
 * bundles"); the record checks are the import's own (checkTransferRecord), not a second copy.
 * Here: the receipt, the sets, the registrations and each transfer's envelope; what its signed
 * header and records say is checked in receipt-bundle-records.ts, the refusals are in
 * receipt-bundle-failures.ts.
 */
import {
  transferKindOf,
  verifyTransferEnvelope,
  type VerifiedTransferEnvelope,
} from '../../contracts/collector/transfer.js';
import { domainDigest, DOMAINS } from '../../contracts/digest.js';
import { isAgentscmError } from '../../contracts/errors.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { decodeReceiptBundle, type BundleRegistration } from '../../contracts/receipt/bundle.js';
import {
  decodeReceiptV2,
  encodeReceiptV2,
  receiptOutcomeOf,
  receiptTaskKind,
  receiptV2ToJson,
  type WorkflowReceiptV2,
} from '../../contracts/receipt/receipt-v2.js';
import { hexToBytes } from '../../contracts/task/common.js';
import { verificationKeyId } from '../../crypto/ed25519.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { fail, wrapped, type CollectorRow } from './receipt-bundle-failures.js';
import { checkHeaderBinding, commandOutcome, reviewOutcome } from './receipt-bundle-records.js';

/** The checks in the order they run; `checks` of a verified bundle lists them all. */
export const BUNDLE_CHECKS = [
  'receipt_decodes',
  'receipt_digest',
  'transfer_set',
  'registration_set',
  'registration_key',
  'public_key_pinned',
  'registration_binding',
  'transfer_digest',
  'envelope_framing',
  'envelope_signature',
  'header_binding',
  'record_digest',
  'request_binding',
  'record_valid',
  'record_outcome',
] as const;

export interface VerifyBundleOptions {
  /** Pinned public keys (64 lowercase hex): when given, every registration's key must be one of them. */
  readonly publicKeys?: readonly string[] | undefined;
}

/** One receipt row backed by a signed transfer. */
export interface VerifiedTransferRow extends JsonObject {
  task_id: string;
  step_id: string;
  required: boolean;
  transfer_digest: string;
  registration_id: string;
  verification_key_id: string;
  record_outcome: string;
}

/** What a verified bundle shows (the --json document of `receipt verify`). */
export interface ReceiptBundleVerification extends JsonObject {
  verified: true;
  receipt_digest: string;
  bundle_length: number;
  receipt: JsonObject;
  /** Rows whose evidence is a signed transfer, in receipt order. */
  transfers: VerifiedTransferRow[];
  /**
   * Rows without signed evidence (native source_paths results, capabilities, omitted optional steps): bound only by the
   * receipt digest.
   */
  unsigned_rows: { task_id: string; step_id: string; required: boolean; outcome: string; evidence: string }[];
  registrations: {
    registration_id: string;
    executor_id: string;
    registration_epoch: bigint;
    verification_key_id: string;
    /** The Ed25519 public key (64 hex) the registration signs with: the value to pin with --public-key. */
    public_key: string;
    pinned: boolean;
  }[];
  public_keys_pinned: boolean;
  /** The registrations' public keys no --public-key pinned, once each ([] when pinned). */
  unpinned_public_keys: string[];
  checks: string[];
}

function decodeReceipt(bytes: Uint8Array): WorkflowReceiptV2 {
  let receipt: WorkflowReceiptV2;
  try {
    receipt = decodeReceiptV2(bytes);
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    return wrapped(
      'RECEIPT_BUNDLE_RECEIPT_INVALID',
      error,
      'the bundled receipt is not a valid v2 receipt',
      'the receipt bytes must be the canonical v2 receipt the authority wrote',
      {},
    );
  }
  if (!encodeReceiptV2(receipt).equals(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
    fail(
      'RECEIPT_BUNDLE_RECEIPT_INVALID',
      'the bundled receipt is valid JSON but not its canonical encoding',
      'a receipt has exactly one byte form; export the bundle again',
      { cause_code: 'NOT_CANONICAL' },
    );
  }
  return receipt;
}

/** Registration ↔ key, pinning, and registration ↔ receipt row (scope, epoch, key). */
function checkRegistrations(
  receipt: WorkflowReceiptV2,
  rows: readonly CollectorRow[],
  registrations: readonly BundleRegistration[],
  pinned: ReadonlySet<string> | null,
): Map<string, BundleRegistration> {
  const named = [...new Set(rows.map((row) => row.registration_id))];
  const given = registrations.map((r) => r.registration_id);
  if (named.length !== given.length || named.some((id, index) => id !== given[index])) {
    fail(
      'RECEIPT_BUNDLE_REGISTRATION_SET_MISMATCH',
      `the bundle holds registrations [${given.join(', ')}]; the receipt names [${named.join(', ')}] (each once, ` +
        `in first-row order)`,
      'a bundle holds exactly the registrations its receipt rows name',
      {
        named,
        given,
      },
    );
  }
  const byId = new Map<string, BundleRegistration>();
  registrations.forEach((registration, index) => {
    const keyId = verificationKeyId(hexToBytes(registration.public_key));
    if (keyId !== registration.verification_key_id) {
      fail(
        'RECEIPT_BUNDLE_REGISTRATION_KEY_MISMATCH',
        `registration ${registration.registration_id} gives verification_key_id ` +
          `${registration.verification_key_id}, but its public key's SHA-256 is ${keyId}`,
        'a verification_key_id is the SHA-256 of the 32 raw public-key bytes',
        {
          index,
          registration_id: registration.registration_id,
        },
      );
    }
    if (pinned !== null && !pinned.has(registration.public_key)) {
      fail(
        'RECEIPT_BUNDLE_KEY_NOT_PINNED',
        `registration ${registration.registration_id} has public key ${registration.public_key}, which is not ` +
          `among the --public-key values`,
        'pin the enrolled key you expect with --public-key HEX (agentscm agent-task registration list shows them)',
        {
          registration_id: registration.registration_id,
          verification_key_id: keyId,
        },
      );
    }
    byId.set(registration.registration_id, registration);
  });
  for (const row of rows) {
    const registration = byId.get(row.registration_id) as BundleRegistration;
    const expected: [string, unknown, unknown][] = [
      ['repository_id', registration.repository_id, receipt.repository_id],
      ['workflow_profile', registration.workflow_profile, receipt.workflow_profile],
      ['step_id', registration.step_id, row.step_id],
      ['registration_epoch', registration.registration_epoch, row.registration_epoch],
      ['verification_key_id', registration.verification_key_id, row.verification_key_id],
    ];
    const wrong = expected.find(([, got, want]) => got !== want);
    if (wrong !== undefined) {
      fail(
        'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
        `registration ${registration.registration_id} has ${wrong[0]} ${String(wrong[1])}; task ${row.task_id}'s ` +
          `receipt row needs ${String(wrong[2])}`,
        "the registration must be the one the authority enrolled for the row's repository, workflow profile and step",
        {
          task_id: row.task_id,
          registration_id: registration.registration_id,
          field: wrong[0],
        },
      );
    }
  }
  return byId;
}

/** One transfer: bytes ↔ digest, framing, signature, header binding, record digests, request, record, outcome. */
function checkTransfer(
  receipt: WorkflowReceiptV2,
  row: CollectorRow,
  registration: BundleRegistration,
  bytes: Uint8Array,
): VerifiedTransferRow {
  const actual = sha256Hex(bytes);
  if (actual !== row.transfer_digest) {
    fail(
      'RECEIPT_BUNDLE_TRANSFER_DIGEST_MISMATCH',
      `the envelope bundled for task ${row.task_id} has SHA-256 ${actual}; the receipt names transfer_digest ` +
        `${row.transfer_digest}`,
      'the envelope bytes must be exactly the transfer the authority imported',
      {
        task_id: row.task_id,
        actual,
      },
    );
  }
  const details = { task_id: row.task_id, transfer_digest: row.transfer_digest };
  let envelope: VerifiedTransferEnvelope;
  try {
    // Size, magic, header and exact framing first (their own refusals), then the strict
    // signature under the registration's key, then the record digests.
    envelope = verifyTransferEnvelope(bytes, hexToBytes(registration.public_key));
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    if (
      error.code === 'TRANSFER_SIGNATURE_INVALID' ||
      error.code === 'TRANSFER_KEY_MISMATCH' ||
      error.code === 'PUBLIC_KEY_INVALID'
    ) {
      return wrapped(
        'RECEIPT_BUNDLE_SIGNATURE_INVALID',
        error,
        `task ${row.task_id}'s transfer is not signed by registration ${registration.registration_id}'s key`,
        'the header or signature changed after signing, or another key signed it',
        details,
      );
    }
    if (error.code === 'TRANSFER_RECORD_DIGEST_MISMATCH') {
      return wrapped(
        'RECEIPT_BUNDLE_RECORD_DIGEST_MISMATCH',
        error,
        `a record of task ${row.task_id}'s transfer is not the one its signed header names`,
        'the record bytes changed after signing',
        details,
      );
    }
    return wrapped(
      'RECEIPT_BUNDLE_TRANSFER_INVALID',
      error,
      `task ${row.task_id}'s transfer is not a well-formed envelope`,
      'the envelope must be a collector transfer envelope v1 exactly as it was imported',
      details,
    );
  }
  checkHeaderBinding(receipt, row, registration, envelope.header);
  const outcome =
    transferKindOf(envelope.header.records) === 'review'
      ? reviewOutcome(receipt, row, envelope)
      : commandOutcome(receipt, row, envelope);
  // The row's outcome is the record's, mapped as the authority maps it when it writes the row
  // (a passed row needs a passed record; an omission names the record that made it one).
  if (receiptOutcomeOf(outcome) !== row.outcome) {
    fail(
      'RECEIPT_BUNDLE_OUTCOME_MISMATCH',
      `the signed record of task ${row.task_id} (step "${row.step_id}"${row.required ? ', required' : ''}) has ` +
        `outcome ${outcome}; the receipt says ${row.outcome}`,
      "a receipt row with a transfer names its signed record's outcome",
      {
        ...details,
        record_outcome: outcome,
      },
    );
  }
  return {
    task_id: row.task_id,
    step_id: row.step_id,
    required: row.required,
    transfer_digest: row.transfer_digest,
    registration_id: row.registration_id,
    verification_key_id: row.verification_key_id,
    record_outcome: outcome,
  };
}

/**
 * Verify a receipt bundle's bytes (docs/receipts.md "What verify checks"): the frame and manifest
 * (exit 2 codes), then the receipt, its digest, the transfer and registration sets, each
 * registration's key (and pinning), each registration against its rows, and for each transfer in
 * receipt order its digest, framing, strict Ed25519 signature, header binding, record digests,
 * request binding, record checks and outcome (exit 1 codes). Returns what was verified.
 */
export function verifyReceiptBundle(bytes: Uint8Array, options: VerifyBundleOptions = {}): ReceiptBundleVerification {
  const parts = decodeReceiptBundle(bytes);
  const { manifest } = parts;
  const receipt = decodeReceipt(parts.receiptBytes);
  const digest = domainDigest(DOMAINS.receipt, parts.receiptBytes);
  if (digest !== manifest.receipt.receipt_digest) {
    fail(
      'RECEIPT_BUNDLE_RECEIPT_DIGEST_MISMATCH',
      `the bundled receipt has digest ${digest}; the manifest names ${manifest.receipt.receipt_digest}`,
      'the receipt bytes changed after export; compare the digest with the one the authority reported',
      {
        receipt_digest: manifest.receipt.receipt_digest,
        actual: digest,
      },
    );
  }
  const rows = receipt.tasks.filter((task): task is CollectorRow => receiptTaskKind(task) === 'collector');
  const given = manifest.transfers;
  const setProblem =
    rows.length === 0
      ? 'the receipt names no transfer, so nothing in it is signed'
      : given.length !== rows.length
        ? `the bundle holds ${given.length} transfers; the receipt names ${rows.length}`
        : (() => {
            const index = given.findIndex(
              (t, i) => t.task_id !== rows[i]?.task_id || t.transfer_digest !== rows[i]?.transfer_digest,
            );
            return index < 0
              ? null
              : `manifest transfer ${index} names task ${given[index]?.task_id ?? ''} and digest ` +
                  `${given[index]?.transfer_digest ?? ''}; receipt row ${rows[index]?.task_id ?? ''} names ` +
                  `${rows[index]?.transfer_digest ?? ''}`;
          })();
  if (setProblem !== null) {
    fail(
      'RECEIPT_BUNDLE_TRANSFER_SET_MISMATCH',
      setProblem,
      'a bundle holds exactly the transfers its receipt names, in receipt row order',
      { named: rows.length, given: given.length },
    );
  }
  const pinned =
    options.publicKeys === undefined || options.publicKeys.length === 0 ? null : new Set(options.publicKeys);
  const registrations = checkRegistrations(receipt, rows, manifest.registrations, pinned);
  const transfers = rows.map((row, index) =>
    checkTransfer(
      receipt,
      row,
      registrations.get(row.registration_id) as BundleRegistration,
      parts.envelopes[index] as Uint8Array,
    ),
  );
  return {
    verified: true,
    receipt_digest: digest,
    bundle_length: parts.length,
    receipt: receiptV2ToJson(receipt),
    transfers,
    unsigned_rows: receipt.tasks
      .filter((task) => receiptTaskKind(task) !== 'collector')
      .map((task) => ({
        task_id: task.task_id,
        step_id: task.step_id,
        required: task.required,
        outcome: task.outcome,
        evidence: receiptTaskKind(task) === 'source_paths' ? 'result_digest' : 'none',
      })),
    registrations: manifest.registrations.map((r) => ({
      registration_id: r.registration_id,
      executor_id: r.executor_id,
      registration_epoch: r.registration_epoch,
      verification_key_id: r.verification_key_id,
      public_key: r.public_key,
      pinned: pinned !== null,
    })),
    public_keys_pinned: pinned !== null,
    unpinned_public_keys: pinned !== null ? [] : [...new Set(manifest.registrations.map((r) => r.public_key))],
    checks: [...BUNDLE_CHECKS],
  };
}
