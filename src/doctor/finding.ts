/**
 * What `agentscm doctor` reports (docs/doctor.md): one finding per checked fact, each with the
 * check that made it, a status, a stable UPPER_SNAKE code from DOCTOR_CODES, a one-line message
 * and the fix (null when nothing is to be done). Pure: no I/O.
 */
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';

export const DOCTOR_STATUSES = ['pass', 'warn', 'fail', 'skip'] as const;
export type DoctorStatus = (typeof DOCTOR_STATUSES)[number];

/**
 * Every finding code with the status it is always reported with. docs/doctor.md has one row per
 * code (test/doctor/codes-doc.test.ts); codes never change meaning.
 */
export const DOCTOR_CODES = {
  OK: 'pass',
  NOT_REQUESTED: 'skip',
  NO_STORE: 'skip',
  NODE_UNSUPPORTED: 'fail',
  STORE_MISSING: 'fail',
  STORE_CORRUPT: 'fail',
  STORE_SCHEMA_OLD: 'fail',
  STORE_SCHEMA_UNSUPPORTED: 'fail',
  STORE_UNREADABLE: 'fail',
  STORE_CHECK_SKIPPED: 'warn',
  STORE_PERMISSIONS_OPEN: 'warn',
  JOURNAL_ABSENT: 'skip',
  REGISTRATION_SUPERSEDED: 'warn',
  KEY_STATE_DIR_MISSING: 'fail',
  KEY_STATE_DIR_NOT_PRIVATE: 'fail',
  KEY_FILE_MISSING: 'fail',
  KEY_FILE_NOT_PRIVATE: 'fail',
  KEY_FILE_INVALID: 'fail',
  KEY_NOT_ENROLLED: 'warn',
  KEY_SUPERSEDED: 'warn',
  KEY_REVOKED: 'fail',
  GRANT_TOKEN_FILE_INVALID: 'fail',
  GRANT_TOKEN_UNKNOWN: 'fail',
  GRANT_TOKEN_ROTATED: 'fail',
  GRANT_TOKEN_REVOKED: 'fail',
  REQUIREMENT_MISSING: 'warn',
  GIT_MIRROR_PENDING: 'warn',
  GIT_MIRROR_FAILED: 'fail',
  RUNTIME_UNAVAILABLE: 'fail',
  RUNTIME_NOT_CONFIGURED: 'warn',
  RUNTIME_DOWN: 'skip',
  NO_PROFILES: 'skip',
  IMAGE_MISSING: 'fail',
  RUNTIME_EXECUTABLE_INVALID: 'fail',
  NO_DOCKER_EXECUTABLE: 'skip',
  RUNTIME_IDENTITY_CHANGED: 'fail',
  NO_HOOK_FILES: 'skip',
  NO_AGENTSCM_HOOKS: 'skip',
  HOOK_FILE_INVALID: 'fail',
  HOOK_COMMAND_UNPARSEABLE: 'fail',
  HOOK_STALE: 'fail',
  HOOK_DATA_DIR_MISSING: 'fail',
  HUB_CONFIG_INVALID: 'fail',
  HUB_PROFILE_UNAVAILABLE: 'fail',
  HUB_REQUIREMENT_CHANGED: 'fail',
  HUB_PORT_DYNAMIC: 'skip',
  HUB_NOT_LOOPBACK: 'skip',
  HUB_NOT_LISTENING: 'fail',
  HUB_UNHEALTHY: 'fail',
  ENDPOINT_UNREACHABLE: 'fail',
  ENDPOINT_TOKEN_REFUSED: 'fail',
} as const satisfies Record<string, DoctorStatus>;

export type DoctorCode = keyof typeof DOCTOR_CODES;

export interface DoctorFinding {
  /** Which check made it: `node`, `store`, `keys.state-dir`, `runtime.image`, `hub.health`… */
  readonly check: string;
  readonly status: DoctorStatus;
  readonly code: DoctorCode;
  readonly message: string;
  /** What to do; null for a pass. */
  readonly fix: string | null;
}

/** A finding of `code`, with the status the code fixes. */
export function finding(check: string, code: DoctorCode, message: string, fix: string | null = null): DoctorFinding {
  const status: DoctorStatus = DOCTOR_CODES[code];
  if (status !== 'pass' && fix === null)
    throw new AgentscmError('INTERNAL', `doctor finding ${code} of ${check} has no fix`);
  return { check, status, code, message, fix };
}

/** A pass finding. */
export function passed(check: string, message: string): DoctorFinding {
  return finding(check, 'OK', message);
}

/** The code and message of a thrown value, for a finding's message (never a stack). */
export function describeError(error: unknown): { readonly code: string; readonly message: string } {
  if (isAgentscmError(error)) return { code: error.code, message: error.message };
  return { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) };
}
