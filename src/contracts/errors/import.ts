/**
 * Collector import of uploaded transfers (src/tasks/collector/).
 * The rows of docs/errors.md "collector import".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const IMPORT_ERRORS = {
  title: 'collector import',
  codes: {
    COLLECTOR_CLAIM_PROFILE_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'The collector profile is not for the task: another repository, workflow profile or step, a step that is ' +
        "not a command step, or a recipe the task's plan does not bind.",
    },
    COLLECTOR_ATTEMPT_NOT_FOUND: {
      exit: EXIT.INVALID,
      summary:
        'No collector claim is retained for that task and attempt (or upload request): the attempt was claimed ' +
        'with `claim`, not `collector_claim`, or never existed.',
    },
    COLLECTOR_ATTEMPT_RESULT_REFUSED: {
      exit: EXIT.INVALID,
      summary:
        'The attempt was claimed with collector_claim: only its imported transfer finishes it, never a result ' +
        'assertion.',
    },
    IMPORT_AUDIENCE_MISMATCH: {
      exit: EXIT.INVALID,
      summary: "The transfer header's audience is not this authority's authority_id.",
    },
    IMPORT_UPLOAD_UNKNOWN: {
      exit: EXIT.INVALID,
      summary: "The transfer's upload_request_id names no collector claim of this authority.",
    },
    IMPORT_UPLOAD_CONFLICT: {
      exit: EXIT.CONFLICT,
      summary:
        'Other bytes were already imported under the same upload_request_id; an upload is retried only with its ' +
        'identical retained bytes.',
    },
    IMPORT_REPOSITORY_MISMATCH: {
      exit: EXIT.INVALID,
      summary: "The transfer names another repository than the claimed task's.",
    },
    IMPORT_PROFILE_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'The transfer names another collector profile than the claim.',
    },
    IMPORT_TASK_MISMATCH: {
      exit: EXIT.INVALID,
      summary: "The transfer's task_id or task_digest is not the claimed task's.",
    },
    IMPORT_ATTEMPT_MISMATCH: {
      exit: EXIT.INVALID,
      summary: "The transfer's attempt_id or attempt_digest is not the claimed attempt's.",
    },
    IMPORT_EXECUTION_MISMATCH: {
      exit: EXIT.INVALID,
      summary: "The transfer's execution_operation_id is not the claimed attempt's.",
    },
    IMPORT_FENCE_STALE: {
      exit: EXIT.CONFLICT,
      summary:
        "The transfer's fence is not the attempt's, or the attempt was superseded by a reconcile; its evidence " +
        'can no longer count.',
    },
    IMPORT_ORIGIN_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        "The transfer's origin (actor, grant, generation) is not the one the claim recorded, or the uploading " +
        'grant is another.',
    },
    IMPORT_ORIGIN_NOT_LIVE: {
      exit: EXIT.CONFLICT,
      summary: 'The originating grant was revoked or rotated since the claim; nothing was imported.',
    },
    IMPORT_EXECUTOR_MISMATCH: {
      exit: EXIT.INVALID,
      summary: "The transfer's executor binding is not the claimed attempt's (registration, executor, epoch or key).",
    },
    IMPORT_REGISTRATION_NOT_CURRENT: {
      exit: EXIT.CONFLICT,
      summary:
        'The executor registration the transfer names is revoked or superseded by a newer epoch; nothing was imported.',
    },
    IMPORT_REQUEST_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        "The ExecutionRequest record, or the header's request_digest, is not the request the authority " +
        "regenerates from the profile's recipe, the exact revision and the context.",
    },
    IMPORT_RUNTIME_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        "The runtime identity the transfer or its request names does not have the profile's runtime_identity_digest.",
    },
    IMPORT_RECORD_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The ExecutionRecord does not decode, names another attempt or request, or its outcome, exit status or ' +
        'output bounds are inconsistent.',
    },
    IMPORT_ISOLATION_VIOLATED: {
      exit: EXIT.INVALID,
      summary:
        'The ExecutionRecord does not show the pinned isolation (network none, read-only source, non-root, no ' +
        "capabilities, the recipe's limits).",
    },
    IMPORT_CLEANUP_UNCONFIRMED: {
      exit: EXIT.INVALID,
      summary: 'The ExecutionRecord does not confirm that the container and snapshot were removed.',
    },
    IMPORT_ATTEMPT_NOT_ACTIVE: {
      exit: EXIT.CONFLICT,
      summary:
        'The claimed attempt is finished, cancelled or replaced by another import or transition; nothing was imported.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface ImportErrorDetails {
  COLLECTOR_ATTEMPT_NOT_FOUND: { task_id: string; attempt_id: string };
  COLLECTOR_CLAIM_PROFILE_MISMATCH: { collector_profile_id: string; task_id: string };
  IMPORT_AUDIENCE_MISMATCH: { audience: string };
  IMPORT_ISOLATION_VIOLATED: { expected: Readonly<Record<string, unknown>>; got: unknown };
  IMPORT_RECORD_INVALID: { field: string; limit?: number };
  IMPORT_REGISTRATION_NOT_CURRENT: { registration_id: string };
  IMPORT_RUNTIME_MISMATCH: { field: string };
  IMPORT_UPLOAD_UNKNOWN: { upload_request_id: string };
}
