/**
 * The one error type of agentscm: a stable code from one table, the exit code that
 * code maps to (docs/wire.md "CLI conventions"), a message, and a hint that says what to do next.
 * `docs/errors.md` is checked against ERROR_CODES by test/contracts/errors-doc.test.ts.
 */

import { ADMISSION_ERRORS, type AdmissionErrorDetails } from './errors/admission.js';
import { AGENT_STATE_ERRORS, type AgentStateErrorDetails } from './errors/agent-state.js';
import { BUNDLE_ERRORS, type BundleErrorDetails } from './errors/bundle.js';
import { COLLECTION_ERRORS, type CollectionErrorDetails } from './errors/collection.js';
import { COLLECTOR_ERRORS, type CollectorErrorDetails } from './errors/collector.js';
import { DEPS_ERRORS } from './errors/deps.js';
import { DOCTOR_ERRORS } from './errors/doctor.js';
import type { CodeInfo, ExitCode } from './errors/exit.js';
import { GENERIC_ERRORS, type GenericErrorDetails } from './errors/generic.js';
import { GIT_ERRORS } from './errors/git.js';
import { GRANT_ERRORS, type GrantErrorDetails } from './errors/grant.js';
import { HOOK_ERRORS, type HookErrorDetails } from './errors/hooks.js';
import { HUB_ERRORS, type HubErrorDetails } from './errors/hub.js';
import { IMPORT_ERRORS, type ImportErrorDetails } from './errors/import.js';
import { JSON_ERRORS, type JsonErrorDetails } from './errors/json.js';
import { KEY_ERRORS, type KeyErrorDetails } from './errors/keys.js';
import { REMOTE_ERRORS } from './errors/remote.js';
import { REVIEW_ERRORS, type ReviewErrorDetails } from './errors/review.js';
import { STORE_ERRORS } from './errors/store.js';
import { TASK_ERRORS, type TaskErrorDetails } from './errors/task.js';
import { TRANSFER_ERRORS, type TransferErrorDetails } from './errors/transfer.js';
import { TREE_ERRORS } from './errors/tree.js';
import { WORKFLOW_ERRORS, type WorkflowErrorDetails } from './errors/workflow.js';
import { WORKSPACE_ERRORS } from './errors/workspace.js';

export { EXIT, type ExitCode } from './errors/exit.js';

/**
 * Every family of error codes, in the order of docs/errors.md. Add a code to its family's module
 * under errors/ and a row to docs/errors.md in the same commit; the doc test fails otherwise.
 */
export const ERROR_SECTIONS = [
  GENERIC_ERRORS,
  JSON_ERRORS,
  KEY_ERRORS,
  STORE_ERRORS,
  WORKSPACE_ERRORS,
  TREE_ERRORS,
  WORKFLOW_ERRORS,
  COLLECTOR_ERRORS,
  TASK_ERRORS,
  GRANT_ERRORS,
  TRANSFER_ERRORS,
  IMPORT_ERRORS,
  BUNDLE_ERRORS,
  COLLECTION_ERRORS,
  REVIEW_ERRORS,
  AGENT_STATE_ERRORS,
  HOOK_ERRORS,
  HUB_ERRORS,
  DOCTOR_ERRORS,
  ADMISSION_ERRORS,
  GIT_ERRORS,
  DEPS_ERRORS,
  REMOTE_ERRORS,
] as const;

/** Every error code, one table assembled from the families above. */
export const ERROR_CODES = {
  ...GENERIC_ERRORS.codes,
  ...JSON_ERRORS.codes,
  ...KEY_ERRORS.codes,
  ...STORE_ERRORS.codes,
  ...WORKSPACE_ERRORS.codes,
  ...TREE_ERRORS.codes,
  ...WORKFLOW_ERRORS.codes,
  ...COLLECTOR_ERRORS.codes,
  ...TASK_ERRORS.codes,
  ...GRANT_ERRORS.codes,
  ...TRANSFER_ERRORS.codes,
  ...IMPORT_ERRORS.codes,
  ...BUNDLE_ERRORS.codes,
  ...COLLECTION_ERRORS.codes,
  ...REVIEW_ERRORS.codes,
  ...AGENT_STATE_ERRORS.codes,
  ...HOOK_ERRORS.codes,
  ...HUB_ERRORS.codes,
  ...DOCTOR_ERRORS.codes,
  ...ADMISSION_ERRORS.codes,
  ...GIT_ERRORS.codes,
  ...DEPS_ERRORS.codes,
  ...REMOTE_ERRORS.codes,
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The `details` of every code thrown with details, one interface per family beside its table
 * (src/contracts/errors/), so `new AgentscmError(CODE, …, { details })` is checked against the
 * code's shape and a caller reading `details` after `isAgentscmError(e, CODE)` needs no cast.
 * docs/errors.md "Details" lists these shapes; test/contracts/error-details.test.ts checks that
 * every code thrown with details in src/ has one here.
 */
export interface ErrorDetailsByCode
  extends
    GenericErrorDetails,
    JsonErrorDetails,
    KeyErrorDetails,
    WorkflowErrorDetails,
    CollectorErrorDetails,
    TaskErrorDetails,
    GrantErrorDetails,
    TransferErrorDetails,
    ImportErrorDetails,
    BundleErrorDetails,
    CollectionErrorDetails,
    ReviewErrorDetails,
    AgentStateErrorDetails,
    HookErrorDetails,
    HubErrorDetails,
    AdmissionErrorDetails {}

/** Compile-time guard: every key of ErrorDetailsByCode is a code of the table. */
type UnknownDetailCodes = Exclude<keyof ErrorDetailsByCode, ErrorCode>;
const NO_UNKNOWN_DETAIL_CODES: [UnknownDetailCodes] extends [never] ? true : UnknownDetailCodes = true;
void NO_UNKNOWN_DETAIL_CODES;

/**
 * The `details` type of one code (read-only); for a union of codes, the union of their types. A
 * code with no declared shape (one thrown without details, or only through a helper that takes
 * any code of its family) keeps free-form details.
 */
export type ErrorDetails<C extends ErrorCode = ErrorCode> = C extends keyof ErrorDetailsByCode
  ? Readonly<ErrorDetailsByCode[C]>
  : Readonly<Record<string, unknown>>;

export interface ErrorOptions<C extends ErrorCode = ErrorCode> {
  /** What the user should do next; shown after the message. */
  readonly hint?: string | undefined;
  readonly cause?: unknown;
  /** Machine-readable detail for --json output (bounded, no secrets, no paths of secrets). */
  readonly details?: ErrorDetails<C> | undefined;
}

/** The single error class of the project. */
class AgentscmErrorClass extends Error {
  override readonly name = 'AgentscmError';
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  get exitCode(): ExitCode {
    return ERROR_CODES[this.code].exit;
  }
}

/** An AgentscmError of code `C`, whose `details` have that code's type. */
export type AgentscmErrorOf<C extends ErrorCode> = AgentscmError & {
  readonly code: C;
  readonly details: ErrorDetails<C> | undefined;
};

/** The class, typed so that `new` checks `details` against its code and `instanceof` narrows. */
export interface AgentscmErrorConstructor {
  new <C extends ErrorCode>(code: C, message: string, options?: ErrorOptions<C>): AgentscmErrorOf<C>;
  readonly prototype: AgentscmError;
}

export type AgentscmError = AgentscmErrorClass;
export const AgentscmError = AgentscmErrorClass as AgentscmErrorConstructor;

/** True for an AgentscmError; with `code`, only for one of that code, whose `details` are then typed. */
export function isAgentscmError(value: unknown): value is AgentscmError;
export function isAgentscmError<C extends ErrorCode>(value: unknown, code: C): value is AgentscmErrorOf<C>;
export function isAgentscmError(value: unknown, code?: ErrorCode): boolean {
  return value instanceof AgentscmErrorClass && (code === undefined || value.code === code);
}

/** Exit code for any thrown value: known codes map through the table, anything else is INTERNAL. */
export function exitCodeOf(error: unknown): ExitCode {
  return isAgentscmError(error) ? error.exitCode : ERROR_CODES.INTERNAL.exit;
}
