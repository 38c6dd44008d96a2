/**
 * Agent-owned tasks: contract, registry, state machine (src/tasks/).
 * The rows of docs/errors.md "agent-owned tasks (contract, registry, state machine)".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const TASK_ERRORS = {
  title: 'agent-owned tasks (contract, registry, state machine)',
  codes: {
    TASK_BINDING_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'A request, attempt or assertion names a different task, attempt, actor, executor or fence than the one ' +
        'it is bound to.',
    },
    LEASE_INVALID: {
      exit: EXIT.INVALID,
      summary: 'A lease is zero, longer than the maximum, or longer than the requested lease.',
    },
    CRITERION_DUPLICATE: { exit: EXIT.INVALID, summary: 'A result assertion reports one criterion twice.' },
    CRITERION_UNKNOWN: {
      exit: EXIT.INVALID,
      summary: 'A result assertion reports a criterion the task does not have.',
    },
    CRITERION_MISSING: { exit: EXIT.INVALID, summary: 'A result assertion omits a criterion of the task.' },
    CRITERION_CONTROLLER_ONLY: {
      exit: EXIT.INVALID,
      summary: 'A controller-only criterion is reported as anything but not_claimed.',
    },
    ASSERTION_PASS_INELIGIBLE: {
      exit: EXIT.INVALID,
      summary: 'A passed assertion has no eligible required criterion, or a row that did not pass.',
    },
    TRUST_CLASS_INVALID: {
      exit: EXIT.INVALID,
      summary: 'The trust class does not fit the assertion (executor, provenance) or is not accepted here.',
    },
    RECOVERY_ENVELOPE_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'A recovery envelope breaks a rule of the Recovery section (disposition, effects, supersession or actions).',
    },
    PUBLIC_KEY_INVALID: {
      exit: EXIT.INVALID,
      summary: 'A public key is not 32 bytes of a valid Ed25519 point, or is of small order.',
    },
    SIGNING_KEY_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'The signing key does not match the verification_key_id the observation names.',
    },
    REGISTRATION_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such executor registration.' },
    REGISTRATION_NOT_CURRENT: {
      exit: EXIT.CONFLICT,
      summary: 'The executor registration is revoked, superseded by re-enrollment, or bound differently.',
    },
    // state machine (src/tasks/)
    TASK_OPERATION_UNKNOWN: {
      exit: EXIT.INVALID,
      summary: 'The agent-task operation name is not one of the capabilities operations.',
    },
    TASK_ACTOR_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'The request names another owner/agent than the authenticated actor.',
    },
    TASK_INPUT_CONFLICT: {
      exit: EXIT.INVALID,
      summary:
        'A flag of agent-task call would fill a request field that the document already holds with another ' +
        'value; nothing was run.',
    },
    TASK_NOT_AUTHORIZED: {
      exit: EXIT.INVALID,
      summary: 'The authorization guard refused the actor for this operation; nothing was read or changed.',
    },
    TASK_SUBJECT_REQUIRED: {
      exit: EXIT.INVALID,
      summary: 'The operation derives tasks and needs the Change and review context of the subject.',
    },
    TASK_NOT_FOUND: {
      exit: EXIT.INVALID,
      summary: 'No task with that id (and digest) is derived for the current subject or retained in the journal.',
    },
    TASK_STALE: {
      exit: EXIT.CONFLICT,
      summary:
        'The task or attempt is bound to a subject that is no longer current (Change, context, policy, target or ' +
        'requirement moved).',
    },
    TASK_CONTROLLER_ONLY: {
      exit: EXIT.INVALID,
      summary: 'The task is controller-only (its progression is none); it can be read but never claimed or reported.',
    },
    TASK_COLLECTOR_CLAIM_REQUIRED: {
      exit: EXIT.INVALID,
      summary:
        "The task's step has an installed collector profile: claim it with collector_claim (`agent-task claim`), " +
        'never a plain claim; no lease was taken.',
    },
    TASK_ALREADY_CLAIMED: {
      exit: EXIT.CONFLICT,
      summary: 'The task already has an attempt that is not replaced; reconcile it before a fresh claim.',
    },
    TASK_DEPENDENCY_INCOMPLETE: {
      exit: EXIT.CONFLICT,
      summary:
        'A step the task needs is not complete; only the authority or a valid registered observation completes it.',
    },
    TASK_PRIOR_SUBJECT_UNRESOLVED: {
      exit: EXIT.CONFLICT,
      summary: 'An older subject of the same Change, profile and step has an unresolved attempt; reconcile it first.',
    },
    TASK_SCAN_LIMIT: {
      exit: EXIT.CONFLICT,
      summary: 'More than 4096 retained task identities share the scope of the fresh claim; the claim fails closed.',
    },
    TASK_ATTEMPT_LIMIT: { exit: EXIT.CONFLICT, summary: 'The task reached its bound of retained attempts.' },
    TASK_ATTEMPT_NOT_FOUND: {
      exit: EXIT.INVALID,
      summary: 'No retained attempt with that id (and digest) for the task.',
    },
    TASK_FENCE_STALE: {
      exit: EXIT.CONFLICT,
      summary: "The request's fence is not the current fence of the task: the attempt was superseded.",
    },
    TASK_ATTEMPT_NOT_ACTIVE: {
      exit: EXIT.CONFLICT,
      summary: 'The attempt is finished, cancelled or replaced; the operation needs a live attempt.',
    },
    TASK_LEASE_EXPIRED: {
      exit: EXIT.CONFLICT,
      summary: "The attempt's lease expired; it stays uncertain until explicitly reconciled.",
    },
    TASK_EXECUTION_ID_REUSED: {
      exit: EXIT.CONFLICT,
      summary:
        'The execution operation id was already used by an attempt of the task; a fresh claim needs a fresh one.',
    },
    TASK_REQUEST_CONFLICT: {
      exit: EXIT.CONFLICT,
      summary: 'The request id was already used by this actor with other bytes or another kind.',
    },
    TASK_JOURNAL_INCONSISTENT: {
      exit: EXIT.FAILED,
      summary: 'A retained task, attempt or outcome does not match its stored digest.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface TaskErrorDetails {
  CRITERION_CONTROLLER_ONLY: { criterion: string };
  CRITERION_DUPLICATE: { criterion: string };
  CRITERION_MISSING: { missing: string[] };
  CRITERION_UNKNOWN: { criterion: string };
  LEASE_INVALID: { lease_ms: string; requested_lease_ms: string } | { pointer: string; value: string; limit: string };
  REGISTRATION_NOT_CURRENT: {
    registration_id: string;
    repository?: string;
    profile?: string;
    step?: string;
    executor_id?: string;
  };
  TASK_ALREADY_CLAIMED: { attempt_id: string; state: string };
  TASK_ATTEMPT_NOT_ACTIVE: { state: string };
  TASK_ATTEMPT_NOT_FOUND: { attempt_id: string };
  TASK_BINDING_MISMATCH: { field: string };
  TASK_COLLECTOR_CLAIM_REQUIRED: { task_id: string; collector_profile_id: string };
  TASK_DEPENDENCY_INCOMPLETE: { step_id: string };
  TASK_FENCE_STALE: { fence: string; new_fence: string } | { fence: string; attempt_fence: string };
  TASK_INPUT_CONFLICT: { pointer: string };
  TASK_LEASE_EXPIRED: { lease_expires_at_ms: number };
  TASK_NOT_FOUND: { task_id: string };
  TASK_PRIOR_SUBJECT_UNRESOLVED: { task_id: string };
  TASK_REQUEST_CONFLICT: { request_id: string; retained_kind: string };
  TASK_SCAN_LIMIT: { limit: number };
  TASK_STALE: Readonly<Record<string, unknown>>;
}
