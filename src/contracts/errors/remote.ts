/**
 * Collectors on other hosts: fetching the trees and blobs of a claimed revision from the hub by
 * digest (docs/wire.md "Fetching a claimed revision"). The rows of docs/errors.md "remote".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const REMOTE_ERRORS = {
  title: 'remote',
  codes: {
    REMOTE_BATCH_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'A blob batch request is not a whole number of 32-byte SHA-256 digests, is empty, or names more digests ' +
        'than a batch holds; nothing was read.',
    },
    REMOTE_CLAIM_NOT_HELD: {
      exit: EXIT.CONFLICT,
      summary:
        'The attempt the object request names is not a live collector claim of the calling grant (unknown, ' +
        "another grant's, or no longer active); no object was served.",
    },
    REMOTE_HUB_UNAVAILABLE: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'The hub could not be reached, or the connection broke, while fetching the claimed revision (retried ' +
        'from what is missing); the verified objects fetched so far stay cached and nothing ran.',
    },
    REMOTE_OBJECT_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        'The hub answered an object whose digest is not the one asked for (a changed byte, a wrong tree, a batch ' +
        'truncated, reordered or padded); nothing of it was cached and nothing ran.',
    },
    REMOTE_OBJECT_NOT_REACHABLE: {
      exit: EXIT.INVALID,
      summary:
        'The tree or blob asked for is not reachable from the revision of the claim named; no object was served.',
    },
    REMOTE_STORE_MISSING: {
      exit: EXIT.INVALID,
      summary:
        'A collection has neither a local store (--data-dir) nor a hub to fetch the claimed revision from ' +
        '(--endpoint); nothing ran.',
    },
  },
} as const satisfies ErrorSection;
