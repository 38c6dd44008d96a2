/**
 * Collector transfer envelopes and receipts.
 * The rows of docs/errors.md "collector transfer and receipts".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const TRANSFER_ERRORS = {
  title: 'collector transfer and receipts',
  codes: {
    TRANSFER_TOO_LARGE: {
      exit: EXIT.INVALID,
      summary:
        'A collector transfer envelope, or the total its header declares, exceeds 16 MiB; it was refused before ' +
        'its records were read.',
    },
    TRANSFER_MAGIC_INVALID: {
      exit: EXIT.INVALID,
      summary: 'The input does not start with the 8 bytes AGSCMTR1 of a collector transfer envelope v1.',
    },
    TRANSFER_HEADER_TOO_LARGE: {
      exit: EXIT.INVALID,
      summary: 'The envelope declares a header longer than 65536 bytes; the header was not read.',
    },
    TRANSFER_TRUNCATED: {
      exit: EXIT.INVALID,
      summary: 'The envelope ends before the prefix, header, signature or records its framing declares.',
    },
    TRANSFER_TRAILING_BYTES: { exit: EXIT.INVALID, summary: 'Bytes follow the last record the header declares.' },
    TRANSFER_HEADER_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The transfer header is not strict JSON of the header schema (details.cause_code names the decoding rule).',
    },
    TRANSFER_HEADER_NOT_CANONICAL: {
      exit: EXIT.INVALID,
      summary: 'The transfer header is valid but not its canonical encoding (declared order, compact, exact escapes).',
    },
    TRANSFER_RECORDS_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The header does not list exactly an execution_request record followed by an execution_record, or the ' +
        'records given do not match the list.',
    },
    TRANSFER_SIGNATURE_INVALID: {
      exit: EXIT.INVALID,
      summary: 'The envelope signature does not verify under strict Ed25519 over the header digest with the given key.',
    },
    TRANSFER_KEY_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'The envelope verifies under the given key but its header names another verification_key_id.',
    },
    TRANSFER_RECORD_DIGEST_MISMATCH: {
      exit: EXIT.INVALID,
      summary: "A record's bytes do not have the length and SHA-256 its header entry names.",
    },
    RECEIPT_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'A v2 receipt breaks a rule beyond its schema: a row shape, a repeated task or step, or a state its task ' +
        'outcomes do not give.',
    },
    QUALIFICATION_ANSWER_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'A qualification answer breaks a rule beyond its schema: qualified without a current subject, a receipt ' +
        'or with failures, a receipt digest when not qualified, a superseded subject with tasks, or a task ' +
        'listed twice.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface TransferErrorDetails {
  RECEIPT_INVALID: { pointer: string };
  TRANSFER_HEADER_INVALID: { cause_code: string; cause_details?: Readonly<Record<string, unknown>> };
  TRANSFER_TRAILING_BYTES: { declared_length: number; length?: number };
  TRANSFER_TRUNCATED: { length: number; declared_length: number };
}
