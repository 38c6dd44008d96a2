/**
 * Receipt bundles (src/contracts/receipt/).
 * The rows of docs/errors.md "receipt bundles".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const BUNDLE_ERRORS = {
  title: 'receipt bundles',
  codes: {
    RECEIPT_NOT_FOUND: {
      exit: EXIT.INVALID,
      summary: 'No retained v2 receipt has that digest (or a digest starting with that prefix).',
    },
    RECEIPT_BUNDLE_EXISTS: {
      exit: EXIT.CONFLICT,
      summary: 'The --out file of receipt export already exists; it is never overwritten and nothing was written.',
    },
    RECEIPT_BUNDLE_TOO_LARGE: {
      exit: EXIT.INVALID,
      summary:
        'The bundle, or the total its manifest declares, exceeds 537001996 bytes (32 transfers of 16 MiB with ' +
        'manifest and receipt); it was refused before its parts were read.',
    },
    RECEIPT_BUNDLE_MAGIC_INVALID: {
      exit: EXIT.INVALID,
      summary: 'The input does not start with the 8 bytes AGSCMRB1 of a receipt bundle v1.',
    },
    RECEIPT_BUNDLE_TRUNCATED: {
      exit: EXIT.INVALID,
      summary: 'The bundle ends before the prefix, manifest, receipt or envelopes its framing declares.',
    },
    RECEIPT_BUNDLE_TRAILING_BYTES: {
      exit: EXIT.INVALID,
      summary: 'Bytes follow the last envelope the manifest declares.',
    },
    RECEIPT_BUNDLE_MANIFEST_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The bundle manifest is longer than 64 KiB, not strict JSON of its schema, or not its canonical encoding ' +
        '(details.cause_code names the rule).',
    },
    RECEIPT_BUNDLE_VERSION_UNSUPPORTED: {
      exit: EXIT.INVALID,
      summary: 'The bundle manifest has a version this build does not read.',
    },
    RECEIPT_BUNDLE_RECEIPT_INVALID: {
      exit: EXIT.FAILED,
      summary: 'Check receipt_decodes: the bundled receipt is not a valid v2 receipt in its canonical encoding.',
    },
    RECEIPT_BUNDLE_RECEIPT_DIGEST_MISMATCH: {
      exit: EXIT.FAILED,
      summary: 'Check receipt_digest: the bundled receipt bytes do not have the receipt digest the manifest names.',
    },
    RECEIPT_BUNDLE_TRANSFER_SET_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        'Check transfer_set: the manifest does not list exactly the transfers the receipt rows name (task and ' +
        'digest, in row order), or the receipt names none.',
    },
    RECEIPT_BUNDLE_REGISTRATION_SET_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        'Check registration_set: the bundle does not hold exactly the registrations the receipt rows name, once ' +
        'each in first-row order.',
    },
    RECEIPT_BUNDLE_REGISTRATION_KEY_MISMATCH: {
      exit: EXIT.FAILED,
      summary: "Check registration_key: a registration's verification_key_id is not the SHA-256 of its public key.",
    },
    RECEIPT_BUNDLE_KEY_NOT_PINNED: {
      exit: EXIT.FAILED,
      summary:
        "Check public_key_pinned: --public-key was given and a registration's public key is not one of those values.",
    },
    RECEIPT_BUNDLE_SIGNER_NOT_PINNED: {
      exit: EXIT.FAILED,
      summary:
        'Every check passed but no --public-key pinned the signer, so the bundle is not accepted; pass the ' +
        'expected key with --public-key, or --allow-unpinned to accept any signer.',
    },
    RECEIPT_BUNDLE_REGISTRATION_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        'Check registration_binding: a registration is not scoped to the row it backs (repository, workflow ' +
        'profile, step) or has another epoch or key than the row names.',
    },
    RECEIPT_BUNDLE_TRANSFER_DIGEST_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        'Check transfer_digest: a bundled envelope does not have the transfer_digest (SHA-256) its receipt row names.',
    },
    RECEIPT_BUNDLE_TRANSFER_INVALID: {
      exit: EXIT.FAILED,
      summary:
        'Check envelope_framing: a bundled envelope is not a well-formed collector transfer envelope v1 ' +
        '(details.cause_code is the TRANSFER_* code).',
    },
    RECEIPT_BUNDLE_SIGNATURE_INVALID: {
      exit: EXIT.FAILED,
      summary:
        'Check envelope_signature: an envelope signature does not verify under strict Ed25519 with its ' +
        "registration's public key.",
    },
    RECEIPT_BUNDLE_HEADER_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        'Check header_binding: a signed transfer header field differs from what the receipt says (details.field ' +
        'names it).',
    },
    RECEIPT_BUNDLE_RECORD_DIGEST_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        'Check record_digest: a record of a bundled envelope does not have the length and SHA-256 its signed ' +
        'header names.',
    },
    RECEIPT_BUNDLE_REQUEST_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        "Check request_binding: a signed ExecutionRequest is not the request of the receipt's subject, task and " +
        'attempt, or not the one its header names (details.field).',
    },
    RECEIPT_BUNDLE_RECORD_INVALID: {
      exit: EXIT.FAILED,
      summary:
        "Check record_valid: a signed ExecutionRecord fails the import's record checks (attempt, request, " +
        'outcome flags, output bound, isolation, cleanup, image; details.cause_code).',
    },
    RECEIPT_BUNDLE_OUTCOME_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        "Check record_outcome: a signed record's outcome is not the outcome its receipt row names (a passed row " +
        'needs a passed record).',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface BundleErrorDetails {
  RECEIPT_BUNDLE_SIGNER_NOT_PINNED: {
    receipt_digest: string;
    public_keys_pinned: false;
    unpinned_public_keys: string[];
    checks: string[];
  };
  RECEIPT_BUNDLE_MANIFEST_INVALID: { cause_code: string; cause_details?: Readonly<Record<string, unknown>> };
  RECEIPT_BUNDLE_VERSION_UNSUPPORTED: { cause_code: string; supported: string[] };
}
