/**
 * Finite review: controller, transports, replay (src/collector/review/).
 * The rows of docs/errors.md "review (finite review controller, transports, replay)".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const REVIEW_ERRORS = {
  title: 'review (finite review controller, transports, replay)',
  codes: {
    REVIEW_COVERAGE_OUTSIDE_POLICY: {
      exit: EXIT.INVALID,
      summary:
        'A coverage path of the review action lies outside every exposure prefix of its review policy; nothing ' +
        'was reserved or called.',
    },
    REVIEW_TRANSPORT_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The review transport cannot be built: the executable is not an absolute path to a regular executable ' +
        'file, the working directory is not owner-private, an environment name is malformed, or the model or ' +
        'provider scope is invalid.',
    },
    REVIEW_TRANSPORT_NOT_QUALIFIED: {
      exit: EXIT.INVALID,
      summary:
        'The review transport basis is fixture (tests only) or not the claude-code identity that is pinned; ' +
        'installation, import and admission refuse it.',
    },
    REVIEW_JOURNAL_MISMATCH: {
      exit: EXIT.FAILED,
      summary:
        'The review journal retains, for this review and call index, another request or ticket than the ' +
        'controller derives now; nothing was called.',
    },
    REVIEW_REPLAY_REQUEST_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'Replay: a request the controller derives differs from the recorded request of the same call (changed, ' +
        'reordered or missing call); the record is refused.',
    },
    REVIEW_REPLAY_RESPONSE_TAMPERED: {
      exit: EXIT.INVALID,
      summary: 'Replay: a recorded response does not have its recorded SHA-256 or byte length; the record is refused.',
    },
    REVIEW_REPLAY_TRACE_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'Replay: the record holds more or fewer calls than the controller makes, or its requests do not match ' +
        'its calls; the record is refused.',
    },
    REVIEW_REPLAY_RECORD_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'Replay: the record the controller derives from the recorded responses is not byte-identical to the ' +
        'imported record (coverage, findings, outcome or usage differ); the record is refused.',
    },
    REVIEW_PROFILE_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'A review record names another transport (basis, executable digest, provider scope, model), policy, ' +
        'coverage, budget or repository than its finite-review profile pins (details.field names it).',
    },
    REVIEW_STEP_INVALID: {
      exit: EXIT.INVALID,
      summary: 'A review step names a policy that is not a declared skill resource; no plan was compiled.',
    },
    ADMISSION_REVIEW_REQUIRED: {
      exit: EXIT.FAILED,
      summary:
        'A required review step of the subject has no passed review record in a completed server-executed run of ' +
        'its exact plan (missing, failed, incomplete or uncertain); nothing was approved or landed.',
    },
    REVIEW_RUNTIME_NOT_CONFIGURED: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'A review step is reachable but no review transport was configured (--review-executable, --review-model, ' +
        '--review-provider-scope, --review-state-dir); a new run is refused before anything is created.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface ReviewErrorDetails {
  ADMISSION_REVIEW_REQUIRED: { task_id: string; step_id: string };
  REVIEW_COVERAGE_OUTSIDE_POLICY: { paths: string[] };
  REVIEW_JOURNAL_MISMATCH: { review_id: string; call_index: number };
  REVIEW_PROFILE_MISMATCH: { field: string };
  REVIEW_REPLAY_REQUEST_MISMATCH: { call_index: number };
  REVIEW_REPLAY_RESPONSE_TAMPERED: { call_index?: number };
  REVIEW_REPLAY_TRACE_MISMATCH: { call_index?: number };
  REVIEW_REPLAY_RECORD_MISMATCH: { call_index?: number };
  REVIEW_RUNTIME_NOT_CONFIGURED: { step: string } | { task_id: string };
  REVIEW_STEP_INVALID: { step: string; policy_path: string };
  REVIEW_TRANSPORT_NOT_QUALIFIED: { basis: string; pointer?: string };
}
