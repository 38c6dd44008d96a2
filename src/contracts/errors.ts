/**
 * The one error type of agentscm: a stable code from one table, the exit code that
 * code maps to (docs/wire.md "CLI conventions"), a message, and a hint that says what to do next.
 * `docs/errors.md` is checked against ERROR_CODES by test/contracts/errors-doc.test.ts.
 */

import { ADMISSION_ERRORS } from './errors/admission.js';
import { AGENT_STATE_ERRORS } from './errors/agent-state.js';
import { BUNDLE_ERRORS } from './errors/bundle.js';
import { COLLECTION_ERRORS } from './errors/collection.js';
import { COLLECTOR_ERRORS } from './errors/collector.js';
import { DOCTOR_ERRORS } from './errors/doctor.js';
import type { CodeInfo, ExitCode } from './errors/exit.js';
import { GENERIC_ERRORS } from './errors/generic.js';
import { GRANT_ERRORS } from './errors/grant.js';
import { HOOK_ERRORS } from './errors/hooks.js';
import { HUB_ERRORS } from './errors/hub.js';
import { IMPORT_ERRORS } from './errors/import.js';
import { JSON_ERRORS } from './errors/json.js';
import { KEY_ERRORS } from './errors/keys.js';
import { REVIEW_ERRORS } from './errors/review.js';
import { STORE_ERRORS } from './errors/store.js';
import { TASK_ERRORS } from './errors/task.js';
import { TRANSFER_ERRORS } from './errors/transfer.js';
import { TREE_ERRORS } from './errors/tree.js';
import { WORKFLOW_ERRORS } from './errors/workflow.js';
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
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The `details` of the codes whose details a caller reads back, so no caller casts them; every
 * other code carries free-form details (bounded, no secrets, no paths of secrets).
 */
export interface ErrorDetailsByCode {
  GRANT_TOKEN_REJECTED: {
    readonly reason: 'unknown' | 'rotated' | 'revoked';
    readonly grant_id?: string;
  };
  RUNTIME_API_ERROR: { readonly status?: number };
}

/** The `details` type of one code; free-form when `C` is a union of codes. */
export type ErrorDetails<C extends ErrorCode = ErrorCode> = [C] extends [keyof ErrorDetailsByCode]
  ? ErrorDetailsByCode[C]
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
