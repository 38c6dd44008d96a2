/**
 * The request document of the local adapter (docs/agent-tasks.md "Local adapter"), from a
 * file or stdin, bounded before it is read into memory, and the fields the adapter fills in
 * (docs/agent-tasks.md "Filling agent and executor"). The actor is never an input: it comes
 * from the grant of --token-file (src/tasks/grant-guard.ts); an omitted `agent` member is filled
 * with that actor (the server supplies the authenticated actor), and --executor fills the
 * executor binding from the current registration it names.
 */
import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { agentToJson, executorToJson, type ExecutorBinding } from '../contracts/task/common.js';
import { MAX_REQUEST_BYTES } from '../contracts/task/requests.js';
import { MAX_ASSERTION_BYTES } from '../contracts/task/result.js';
import { readBoundedInput } from '../native/bounded-input.js';
import { getRegistration } from '../native/executor-registry.js';
import { readTokenFile } from '../native/grant-token-file.js';
import type { Store } from '../native/store-handle.js';
import { authorizeTaskToken } from './grant-guard.js';

/** The largest request document any operation accepts (a recovery read wrapping a full assertion). */
export const MAX_INPUT_BYTES = MAX_ASSERTION_BYTES + MAX_REQUEST_BYTES;

/** Read the request document from FILE or `-` (stdin); the size is checked before it is held. */
export function readTaskInput(source: string): Uint8Array {
  return readBoundedInput(source, {
    limit: MAX_INPUT_BYTES,
    what: 'the request document',
    missingHint: 'pass the path of a request JSON file, or - to read it from stdin',
    tooLargeHint: 'send one request document',
    stdin: true,
  });
}

/** Operations whose request has an `agent` member (the authenticated actor). */
const AGENT_OPERATIONS: readonly string[] = [
  'reference',
  'claim',
  'heartbeat',
  'cancel',
  'reconcile',
  'result',
  'recovery',
  'collector_claim',
  'collector_descriptor',
  'collector_finalize',
];
/**
 * Operations whose request carries the executor binding of the attempt. The collector
 * operations are not among them: a collector claim's executor is its profile's registration.
 */
export const EXECUTOR_OPERATIONS: readonly string[] = [
  'claim',
  'heartbeat',
  'cancel',
  'reconcile',
  'result',
  'recovery',
];

export interface FillRequest {
  readonly store: Store;
  readonly tokenFile: string;
  readonly operation: string;
  /** The request document as read, or null. */
  readonly input: Uint8Array | null;
  /** --repository, checked against the grant like every other call. */
  readonly repository?: string | undefined;
  /** --executor: the registration id whose current binding fills `executor`. */
  readonly executor?: string | undefined;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parsedOrNull(bytes: Uint8Array): JsonValue | null {
  try {
    return parseStrictJson(bytes, { maxBytes: MAX_INPUT_BYTES });
  } catch (error) {
    if (error instanceof AgentscmError) return null;
    throw error;
  }
}

/** The object whose agent/executor members are filled: the request itself, or the request a recovery read wraps. */
function requestObject(operation: string, document: JsonObject): JsonObject | null {
  if (operation !== 'recovery') return document;
  const inner = document.request;
  return isObject(inner) ? inner : null;
}

/** The current binding of registration `id` in the grant's repository (REGISTRATION_NOT_FOUND / _NOT_CURRENT). */
function currentBinding(store: Store, repository: string, id: string): ExecutorBinding {
  const registration = getRegistration(store.authority(), id);
  if (registration.repository !== repository) {
    throw new AgentscmError(
      'REGISTRATION_NOT_FOUND',
      `--executor ${id}: the registration is not one of repository ${repository}, the grant's`,
      {
        hint: '`agentscm agent-task registration list` shows the registrations of the repository',
      },
    );
  }
  if (!registration.current) {
    throw new AgentscmError(
      'REGISTRATION_NOT_CURRENT',
      `--executor ${id}: registration ${id} (repository ${registration.repository}, profile ` +
        `${registration.profile}, step ${registration.step}, executor ${registration.executor_id}, epoch ` +
        `${registration.registration_epoch}) is ` +
        (registration.revoked ? 'revoked' : `superseded by epoch ${registration.latest_epoch}`),
      {
        hint: 'pass --executor with the registration id of the current epoch (`agentscm agent-task registration list`)',
      },
    );
  }
  return {
    registration_id: registration.registration_id,
    executor_id: registration.executor_id,
    registration_epoch: registration.registration_epoch,
    verification_key_id: registration.verification_key_id,
  };
}

/**
 * Fill the request document of `agent-task call` (docs/agent-tasks.md "Filling agent and
 * executor"): an omitted `agent` becomes the grant's actor, and --executor fills `executor` with
 * the current binding of that registration. A document that already holds another executor
 * (null included) is TASK_INPUT_CONFLICT; a document that already holds `agent` keeps it (the
 * facade refuses another actor, TASK_ACTOR_MISMATCH). A document with nothing to fill is returned
 * unchanged, byte for byte, without reading anything; a filled one is re-encoded canonically.
 */
export function fillTaskInput(request: FillRequest): Uint8Array | null {
  if (request.executor !== undefined && !EXECUTOR_OPERATIONS.includes(request.operation)) {
    throw new AgentscmError('USAGE', `--executor does not apply to operation ${request.operation}`, {
      hint: `--executor fills the executor binding of ${EXECUTOR_OPERATIONS.join(', ')}`,
    });
  }
  if (request.input === null) {
    if (request.executor !== undefined)
      throw new AgentscmError('USAGE', '--executor fills a request document, and none was given', {
        hint: 'pass --input FILE or --input -',
      });
    return null;
  }
  if (!AGENT_OPERATIONS.includes(request.operation)) return request.input;
  const document = parsedOrNull(request.input);
  const target = document !== null && isObject(document) ? requestObject(request.operation, document) : null;
  // Not a JSON object: passed on as it is, so the operation's strict decoder refuses it with the
  // code it always gives (size before syntax), before the token file is read.
  if (target === null) return request.input;
  const fillAgent = !Object.hasOwn(target, 'agent');
  if (!fillAgent && request.executor === undefined) return request.input;

  const authorization = authorizeTaskToken({
    store: request.store,
    token: readTokenFile(request.tokenFile),
    repository: request.repository,
  });
  const filled: JsonObject = { ...target };
  if (fillAgent) filled.agent = agentToJson(authorization.actor);
  if (request.executor !== undefined) {
    const binding = executorToJson(currentBinding(request.store, authorization.repository, request.executor));
    if (Object.hasOwn(target, 'executor')) {
      const held = target.executor as JsonValue;
      if (!encodeCanonical(held).equals(encodeCanonical(binding))) {
        throw new AgentscmError(
          'TASK_INPUT_CONFLICT',
          `--executor ${request.executor} names another executor than the request's "executor" ` +
            `(${held === null ? 'null, an agent-only attempt' : 'another binding'})`,
          {
            hint: 'leave "executor" out of the document to have --executor fill it, or leave out --executor',
            details: { pointer: request.operation === 'recovery' ? '/request/executor' : '/executor' },
          },
        );
      }
    }
    filled.executor = binding;
  }
  const result: JsonObject =
    request.operation === 'recovery' ? { ...(document as JsonObject), request: filled } : filled;
  return new Uint8Array(encodeCanonical(result));
}
