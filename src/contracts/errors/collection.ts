/**
 * Collection of check results.
 * The rows of docs/errors.md "collection".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const COLLECTION_ERRORS = {
  title: 'collection',
  codes: {
    COLLECT_DESCRIPTOR_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'A field of the collector descriptor differs from what the authority holds (details.field names it); ' +
        'nothing ran.',
    },
    COLLECT_ORIGIN_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'The token file authenticates another grant, generation or actor than the origin the descriptor names; ' +
        'nothing ran.',
    },
    COLLECT_KEY_MISMATCH: {
      exit: EXIT.INVALID,
      summary: "The key file's key is not the verification key of the registration the descriptor names; nothing ran.",
    },
    COLLECT_RUNTIME_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        "The runtime identity observed now does not have the collector profile's runtime_identity_digest; " +
        'nothing was reserved or run.',
    },
    COLLECT_STATE_UNSAFE: {
      exit: EXIT.INVALID,
      summary:
        'The collector state directory or key file is inside a workspace or overlaps the data directory, or the ' +
        'state directory is not an owner-private (0700, no symlink) directory.',
    },
    COLLECT_STATE_CONFLICT: {
      exit: EXIT.CONFLICT,
      summary: 'The state directory already holds another descriptor or envelope under the same upload request id.',
    },
    COLLECT_STATE_CORRUPT: {
      exit: EXIT.FAILED,
      summary: 'A file of the collector state directory is larger than it can be.',
    },
    COLLECT_INTERRUPTED: {
      exit: EXIT.FAILED,
      summary:
        'The collection was reserved but retains no signed envelope (an earlier collect stopped while the ' +
        'command ran or before it signed); it is never run again.',
    },
    COLLECT_NOT_RETAINED: {
      exit: EXIT.INVALID,
      summary: 'The state directory retains no signed envelope for that upload request id.',
    },
    UPLOAD_ENDPOINT_INVALID: {
      exit: EXIT.INVALID,
      summary: '--endpoint is not an http(s) URL of a hub agent-tasks route without credentials, query or fragment.',
    },
    UPLOAD_ROUTE_MISSING: {
      exit: EXIT.UNAVAILABLE,
      summary: 'The hub answered 404 for its collector upload route; the envelope stays retained.',
    },
    UPLOAD_UNAVAILABLE: {
      exit: EXIT.UNAVAILABLE,
      summary: 'The hub could not be reached or did not answer in time; the envelope stays retained.',
    },
    UPLOAD_REFUSED: {
      exit: EXIT.FAILED,
      summary:
        'The hub refused the upload with a status and no error code this build knows; the envelope stays retained.',
    },
    UPLOAD_ANSWER_INVALID: {
      exit: EXIT.FAILED,
      summary: "The hub's answer to an upload is larger than 512 KiB or not strict JSON.",
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface CollectionErrorDetails {
  COLLECT_DESCRIPTOR_MISMATCH: { field: string };
  COLLECT_INTERRUPTED: { upload_request_id: string };
  COLLECT_KEY_MISMATCH: { registration_id: string };
  COLLECT_NOT_RETAINED: { upload_request_id: string };
  COLLECT_RUNTIME_MISMATCH: { observed: string | null };
  COLLECT_STATE_CONFLICT: { upload_request_id: string };
  UPLOAD_ROUTE_MISSING: { http_status: number };
}
