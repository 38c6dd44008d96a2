/**
 * The client side of the hub's collector upload route (docs/collect.md "Uploading";
 * docs/hub.md "The upload route": `POST …/agent-tasks/collector-upload`, 16 MiB): the envelope
 * bytes are sent as they are, with the grant's token as `Authorization: Bearer`. The answer is read
 * bounded and decoded strictly; an error document of the hub keeps its code. A hub without the
 * route (404) is UPLOAD_ROUTE_MISSING; one that cannot be reached is UPLOAD_UNAVAILABLE. The
 * envelope stays retained either way, so the same bytes can be sent again.
 */
import { request } from 'undici';

import { AgentscmError, ERROR_CODES, type ErrorCode } from '../contracts/errors.js';
import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';

/** The path appended to the agent-tasks route of a profile. */
export const UPLOAD_ROUTE_SUFFIX = '/collector-upload';
/** Largest answer read from the hub. */
export const MAX_UPLOAD_ANSWER_BYTES = 512 * 1024;
/** How long an upload may take in all. */
export const UPLOAD_TIMEOUT_MS = 120_000;

/**
 * The upload URL for an agent-tasks endpoint
 * (`http(s)://HOST/v1/hub/workspace/repositories/O/N/profiles/P/agent-tasks`).
 */
export function uploadUrl(endpoint: string): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch (error) {
    throw new AgentscmError('UPLOAD_ENDPOINT_INVALID', `--endpoint ${endpoint.slice(0, 200)} is not a URL`, {
      hint:
        'pass the hub agent-tasks URL of the profile, e.g. ' +
        'http://127.0.0.1:8080/v1/hub/workspace/repositories/OWNER/NAME/profiles/default/agent-tasks',
      cause: error,
    });
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new AgentscmError(
      'UPLOAD_ENDPOINT_INVALID',
      `--endpoint must be an http or https URL without credentials, query or fragment`,
      { hint: 'pass the hub agent-tasks URL of the profile' },
    );
  }
  if (!url.pathname.endsWith('/agent-tasks')) {
    throw new AgentscmError(
      'UPLOAD_ENDPOINT_INVALID',
      `--endpoint ${url.pathname.slice(0, 200)} is not an agent-tasks route`,
      { hint: 'the path ends in /profiles/PROFILE/agent-tasks (docs/hub.md)' },
    );
  }
  url.pathname = `${url.pathname}${UPLOAD_ROUTE_SUFFIX}`;
  return url;
}

export interface UploadAnswer {
  readonly status: number;
  /** The answer's exact bytes (retained in the state directory). */
  readonly bytes: Buffer;
  readonly answer: JsonValue;
}

async function readBounded(body: AsyncIterable<Buffer | Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > MAX_UPLOAD_ANSWER_BYTES)
      throw new AgentscmError('UPLOAD_ANSWER_INVALID', `the hub answered more than ${MAX_UPLOAD_ANSWER_BYTES} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

function decodeAnswer(bytes: Buffer): JsonValue {
  try {
    return parseStrictJson(bytes, { maxBytes: MAX_UPLOAD_ANSWER_BYTES });
  } catch (error) {
    throw new AgentscmError('UPLOAD_ANSWER_INVALID', 'the hub answered a body that is not strict JSON', {
      cause: error,
    });
  }
}

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/**
 * The hub's error document as an AgentscmError with the hub's code (UPLOAD_REFUSED when it has none this build knows).
 */
export function hubError(status: number, answer: JsonValue | null): AgentscmError {
  const error = answer !== null && isJsonObject(answer) && isJsonObject(answer.error) ? answer.error : null;
  const message = typeof error?.message === 'string' ? error.message.slice(0, 2048) : `the hub answered HTTP ${status}`;
  const hint = typeof error?.hint === 'string' ? error.hint.slice(0, 1024) : undefined;
  const code = isErrorCode(error?.code) ? error.code : 'UPLOAD_REFUSED';
  return new AgentscmError(code, message, {
    ...(hint === undefined ? {} : { hint }),
    details: { http_status: status, ...(typeof error?.code === 'string' ? { hub_code: error.code.slice(0, 64) } : {}) },
  });
}

/** POST the envelope to the hub's upload route with the bearer token; the answer on 200. */
export async function postEnvelope(input: {
  readonly endpoint: string;
  readonly token: string;
  readonly envelope: Uint8Array;
  readonly timeoutMs?: number;
}): Promise<UploadAnswer> {
  const url = uploadUrl(input.endpoint);
  let response;
  try {
    response = await request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${input.token}`,
        'content-type': 'application/octet-stream',
        'content-length': String(input.envelope.byteLength),
      },
      body: Buffer.from(input.envelope.buffer, input.envelope.byteOffset, input.envelope.byteLength),
      headersTimeout: input.timeoutMs ?? UPLOAD_TIMEOUT_MS,
      bodyTimeout: input.timeoutMs ?? UPLOAD_TIMEOUT_MS,
    });
  } catch (error) {
    throw new AgentscmError(
      'UPLOAD_UNAVAILABLE',
      `cannot reach the hub at ${url.origin}: ${(error as Error).message}`,
      {
        hint: 'the envelope stays retained; send it again with `agentscm agent-task retry-upload` once the hub answers',
        cause: error,
      },
    );
  }
  const bytes = await readBounded(response.body);
  let answer: JsonValue | null = null;
  try {
    answer = decodeAnswer(bytes);
  } catch (error) {
    if (response.statusCode === 200) throw error;
  }
  const hubCode = answer !== null && isJsonObject(answer) && isJsonObject(answer.error) ? answer.error.code : undefined;
  if (response.statusCode === 404 && (hubCode === undefined || hubCode === 'HUB_ROUTE_NOT_FOUND')) {
    throw new AgentscmError(
      'UPLOAD_ROUTE_MISSING',
      `the hub at ${url.origin} has no collector upload route (${url.pathname.slice(0, 200)} answered 404)`,
      {
        hint:
          'upload into the local authority instead (leave out --endpoint and pass --data-dir), or use a hub ' +
          'that serves …/agent-tasks/collector-upload; the envelope stays retained',
        details: { http_status: 404 },
      },
    );
  }
  if (response.statusCode !== 200) throw hubError(response.statusCode, answer);
  return { status: response.statusCode, bytes, answer };
}
