/**
 * The native store: authority and journal databases (src/native/).
 * The rows of docs/errors.md "native store".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const STORE_ERRORS = {
  title: 'native store',
  codes: {
    STORE_NOT_INITIALIZED: {
      exit: EXIT.UNAVAILABLE,
      summary: 'The native store does not exist in --data-dir; nothing was created.',
    },
    STORE_SCHEMA_UNSUPPORTED: {
      exit: EXIT.UNAVAILABLE,
      summary: 'A database was written by a newer or unknown schema version.',
    },
    STORE_BUSY: { exit: EXIT.CONFLICT, summary: 'Another writer holds the database; retry after it finishes.' },
    REPOSITORY_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such repository in the native store.' },
    REPOSITORY_EXISTS: { exit: EXIT.CONFLICT, summary: 'A repository with that name already exists.' },
    REPOSITORY_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        '--repository names another repository than the one the workspace or collector descriptor is bound to; ' +
        'nothing was read, changed or run.',
    },
    REVISION_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such revision in the repository.' },
    PATH_NOT_FOUND: { exit: EXIT.INVALID, summary: 'The revision has no file at that path.' },
    CHANGE_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such Change.' },
    CHANGE_CONFLICT: { exit: EXIT.CONFLICT, summary: 'The Change moved on while this operation ran.' },
    TARGET_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such target.' },
    ID_PREFIX_AMBIGUOUS: {
      exit: EXIT.INVALID,
      summary: 'A revision or digest prefix matches more than one stored value; the message gives the count.',
    },
    POLICY_EPOCH_EXHAUSTED: {
      exit: EXIT.FAILED,
      summary: 'The policy epoch is at the u64 maximum and cannot be bumped.',
    },
    STORE_CORRUPT: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'Stored data is damaged: a database file is not SQLite, malformed, or empty although its store is ' +
        'initialized, or stored bytes do not match their recorded digest or size; nothing was re-initialized, ' +
        'changed or returned.',
    },
    DATABASE_ACCESS_DENIED: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'A database, its -wal/-shm files or its directory cannot be opened or written by this user; nothing was ' +
        'changed.',
    },
  },
} as const satisfies ErrorSection;
