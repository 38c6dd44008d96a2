/**
 * How the hub answers a refusal (docs/wire.md "Hub": `{"error":{"code","message"}}` with 400 invalid,
 * 401 no or bad token, 403 grant not allowed here, 404 unknown route or profile, 409 conflict,
 * 413 too large, 503 unavailable). The status comes from the code: a few codes name an HTTP
 * meaning of their own, every other code its exit class (docs/errors.md), so a code added to
 * the table later gets a status without a change here.
 */
import { AgentscmError, ERROR_CODES, EXIT } from '../contracts/errors.js';
import type { ErrorCode } from '../contracts/errors.js';
import { oneLine } from '../contracts/message-text.js';

const BY_CODE: Partial<Record<ErrorCode, number>> = {
  HUB_AUTH_REQUIRED: 401,
  GRANT_TOKEN_REJECTED: 401,
  // The grant died between authentication and the transition's recheck: the token is dead now.
  GRANT_NOT_LIVE: 401,
  HUB_GRANT_SCOPE_MISMATCH: 403,
  TASK_NOT_AUTHORIZED: 403,
  // The request names an actor other than the grant's: the grant does not allow acting as it.
  TASK_ACTOR_MISMATCH: 403,
  HUB_ROUTE_NOT_FOUND: 404,
  HUB_PROFILE_NOT_FOUND: 404,
  HUB_BODY_TOO_LARGE: 413,
  INPUT_TOO_LARGE: 413,
};

/** The HTTP status of an error code. */
export function httpStatusOf(code: ErrorCode): number {
  const pinned = BY_CODE[code];
  if (pinned !== undefined) return pinned;
  switch (ERROR_CODES[code].exit) {
    case EXIT.INVALID:
      return 400;
    case EXIT.CONFLICT:
      return 409;
    case EXIT.UNAVAILABLE:
      return 503;
    default:
      // INTERNAL and the other "ran and failed" codes (a corrupt store, an inconsistent journal):
      // the server failed, not the request.
      return 500;
  }
}

/** Any throwable as our error (an unexpected one is INTERNAL, never a validation code). */
export function asAgentscmError(error: unknown): AgentscmError {
  if (error instanceof AgentscmError) return error;
  return new AgentscmError('INTERNAL', error instanceof Error ? error.message : String(error), { cause: error });
}

/** The JSON body of a refusal: code and one-line message (no hint, no details, no stack). */
export function errorBody(error: AgentscmError): string {
  return JSON.stringify({ error: { code: error.code, message: oneLine(error.message) } });
}
