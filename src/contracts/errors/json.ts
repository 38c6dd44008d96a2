/**
 * Strict JSON decoding and schema validation (src/contracts/json/).
 * The rows of docs/errors.md "contracts: strict JSON decoding".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const JSON_ERRORS = {
  title: 'contracts: strict JSON decoding',
  codes: {
    INPUT_TOO_LARGE: {
      exit: EXIT.INVALID,
      summary: 'The input exceeds its byte limit; it was refused before parsing.',
    },
    JSON_BOM: { exit: EXIT.INVALID, summary: 'The input starts with a byte order mark.' },
    JSON_INVALID_UTF8: { exit: EXIT.INVALID, summary: 'The input is not valid UTF-8.' },
    JSON_LONE_SURROGATE: { exit: EXIT.INVALID, summary: 'A string contains an unpaired UTF-16 surrogate escape.' },
    JSON_SYNTAX: { exit: EXIT.INVALID, summary: 'The input is not well-formed JSON.' },
    JSON_DUPLICATE_KEY: { exit: EXIT.INVALID, summary: 'An object repeats a key.' },
    JSON_NUMBER_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'A number is not an unsigned integer up to 18446744073709551615 (no sign, fraction, exponent or leading zero).',
    },
    JSON_TOO_DEEP: { exit: EXIT.INVALID, summary: 'The input nests deeper than the decoder allows.' },
    SCHEMA_UNKNOWN_FIELD: { exit: EXIT.INVALID, summary: 'An object has a field the schema does not declare.' },
    SCHEMA_MISSING_FIELD: { exit: EXIT.INVALID, summary: 'A required field is missing.' },
    SCHEMA_TYPE: { exit: EXIT.INVALID, summary: 'A value has the wrong type or shape.' },
    SCHEMA_BOUND: { exit: EXIT.INVALID, summary: 'A collection, string or number is outside its bound.' },
    SCHEMA_VERSION_UNSUPPORTED: { exit: EXIT.INVALID, summary: 'The version or schema version is not supported.' },
    PATH_INVALID: { exit: EXIT.INVALID, summary: 'A path is not a canonical relative path.' },
    ID_INVALID: { exit: EXIT.INVALID, summary: 'An identifier or digest does not match its pattern.' },
  },
} as const satisfies ErrorSection;

/** Where strict JSON parsing stopped: the JSON Pointer of the value and the character offset. */
export interface JsonPosition {
  pointer: string;
  offset: number;
}

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface JsonErrorDetails {
  JSON_SYNTAX: JsonPosition;
  JSON_DUPLICATE_KEY: JsonPosition;
  JSON_LONE_SURROGATE: JsonPosition;
  JSON_NUMBER_INVALID: JsonPosition;
  JSON_TOO_DEEP: JsonPosition;
  ID_INVALID: { what: string };
  INPUT_TOO_LARGE: { limit: number; size?: number; path?: string };
  PATH_INVALID: { what: string; reason: string } | { pointer: string };
  SCHEMA_UNKNOWN_FIELD: { schema: string; pointer: string };
  SCHEMA_MISSING_FIELD: { schema: string; pointer: string };
  SCHEMA_TYPE: { pointer: string; schema?: string; value?: unknown };
  SCHEMA_BOUND: { pointer: string; schema?: string; size?: number; limit?: number } | { path: string };
  SCHEMA_VERSION_UNSUPPORTED: { schema: string; pointer: string; supported: string[] };
}
