/**
 * How the hub answers a refusal (docs/wire.md "Hub": `{"error":{"code","message"}}` with 400 invalid,
 * 401 no or bad token, 403 grant not allowed here, 404 unknown route or profile, 409 conflict,
 * 413 too large, 503 unavailable). The status comes from the code: a few codes name an HTTP
 * meaning of their own, every other code its exit class (docs/errors.md), so a code added to
 * the table later gets a status without a change here.
 */
import { AgentscmError, ERROR_CODES, EXIT, type ErrorCode } from '../contracts/errors.js';
import { oneLine } from '../contracts/message-text.js';
import { UPLOAD_RETRY_AFTER_S } from './body.js';

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
  // Another writer holds the store (exit class 3 in the CLI): over HTTP the request is not in
  // conflict with anything, it is to be retried, so 503 with Retry-After (docs/hub.md "A busy store").
  STORE_BUSY: 503,
};

/** The Retry-After (seconds) of a busy store's answer. */
export const STORE_BUSY_RETRY_AFTER_S = 1;

/** The Retry-After header value of a refusal with this code, or null. */
export function retryAfterOf(code: ErrorCode): string | null {
  if (code === 'HUB_UPLOAD_BUSY') return String(UPLOAD_RETRY_AFTER_S);
  return code === 'STORE_BUSY' ? String(STORE_BUSY_RETRY_AFTER_S) : null;
}

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

/**
 * Strings no network-facing message may carry (docs/hub.md "What an answer never says"): the
 * configured data directories and the files the hub reads (startHub registers them). Kept for
 * the process's life; scrubbing a string that no running hub uses any more costs nothing.
 */
const privateStrings = new Set<string>();

/** Add filesystem paths that no answer may name (each data_dir, its real path, the forge token files). */
export function registerPrivatePaths(paths: Iterable<string>): void {
  for (const path of paths) if (path.length > 1) privateStrings.add(path);
}

/** `text` with every registered private path replaced by a neutral word. */
export function scrubPrivatePaths(text: string): string {
  let out = text;
  // The longest first, so that a data directory inside another is replaced whole.
  for (const path of [...privateStrings].sort((a, b) => b.length - a.length)) out = out.split(path).join('<data_dir>');
  return out;
}

/**
 * The message a client sees for a refusal. A server-side failure (5xx: a missing or damaged
 * store, an I/O error, an internal fault) says only its code and where the detail is — its own
 * message may name files, and the hub logs it instead (server.ts). A busy store says when to
 * retry. Every other message is about the request, and still never names a registered path.
 */
export function publicMessage(error: AgentscmError): string {
  const status = httpStatusOf(error.code);
  if (error.code === 'STORE_BUSY')
    return `the store is busy with another writer; retry after ${STORE_BUSY_RETRY_AFTER_S} s`;
  // A full upload bound is about the hub's load, not its files: its own message says when to retry.
  if (error.code === 'HUB_UPLOAD_BUSY') return oneLine(error.message);
  if (status >= 500)
    return `the hub could not serve this request (${error.code}); the operator finds the reason in the hub's log`;
  return oneLine(scrubPrivatePaths(error.message));
}

/** True when the client does not see the refusal's own message (it belongs in the hub's log). */
export function messageWithheld(error: AgentscmError): boolean {
  return httpStatusOf(error.code) >= 500 && error.code !== 'STORE_BUSY' && error.code !== 'HUB_UPLOAD_BUSY';
}

/** The JSON body of a refusal: code and one-line public message (no hint, no details, no stack, no path). */
export function errorBody(error: AgentscmError): string {
  return JSON.stringify({ error: { code: error.code, message: publicMessage(error) } });
}
