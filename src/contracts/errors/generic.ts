/**
 * Generic failures: usage, internal, file I/O.
 * The rows of docs/errors.md "generic".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const GENERIC_ERRORS = {
  title: 'generic',
  codes: {
    USAGE: { exit: EXIT.INVALID, summary: 'The command line is malformed (unknown flag, missing argument).' },
    INTERNAL: {
      exit: EXIT.FAILED,
      summary: 'An unexpected internal failure; nothing was classified as valid or invalid.',
    },
    IO_ERROR: { exit: EXIT.UNAVAILABLE, summary: 'A file or directory could not be read or written.' },
    INPUT_NOT_FOUND: {
      exit: EXIT.INVALID,
      summary: 'A file argument names no existing file; nothing was read or changed.',
    },
    INPUT_NOT_REGULAR_FILE: {
      exit: EXIT.INVALID,
      summary: 'A file argument names a directory, FIFO, socket or device instead of a regular file; it was not read.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface GenericErrorDetails {
  IO_ERROR: { errno: string | null };
}
