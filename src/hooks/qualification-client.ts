/**
 * The Stop hook's one service call (docs/stop-hooks.md "Agent-owned mode": it calls qualification
 * with the token file, 30 second limit): POST
 * `{"operation":"qualification","input":null,"subject":…}` to the hub's agent-tasks route of the
 * repository and profile, with the grant's token as `Authorization: Bearer`. The answer is read
 * bounded (a declared length past the bound is refused before any byte is buffered), decoded
 * strictly and validated with the decoder every client uses (src/contracts/task/qualification.ts).
 * Failures are three fixed categories, never with server text: the request failed (network,
 * timeout, an error status other than 401/403), the token was rejected (401/403), the answer is
 * malformed.
 *
 * The call goes through node:http / node:https (one request, no keep-alive agent), not undici:
 * undici is most of the module graph a Stop hook would otherwise load for its one request, and
 * the hook runs at every agent stop (docs/stop-hooks.md "Performance").
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

import { AgentscmError } from '../contracts/errors.js';
import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { TASK_CAPABILITY, TASK_CONTRACT_VERSION } from '../contracts/task/common.js';
import {
  MAX_QUALIFICATION_BYTES,
  qualificationAnswerDecoder,
  type QualificationAnswer,
} from '../contracts/task/qualification.js';

/** The whole call (connect, headers, body) must finish within this. */
export const QUALIFICATION_TIMEOUT_MS = 30_000;
/** Largest answer read: the answer's own bound plus the hub's envelope around it. */
export const MAX_QUALIFICATION_RESPONSE_BYTES = MAX_QUALIFICATION_BYTES + 1024;

export interface QualificationRequest {
  /** The hub URL (`http(s)://HOST:PORT`, optionally with a path prefix). */
  readonly endpoint: string;
  /** `OWNER/NAME` as the hub's routes name it. */
  readonly repository: string;
  readonly profile: string;
  readonly token: string;
  readonly subject: { readonly change_id: string; readonly context_digest: string };
  readonly timeoutMs?: number;
}

/** The agent-tasks route of a repository and profile under a hub URL. */
export function agentTasksUrl(endpoint: string, repository: string, profile: string): URL {
  const url = new URL(endpoint);
  const [owner = '', name = ''] = repository.split('/');
  const route = `${encodeURIComponent(owner)}/${encodeURIComponent(name)}/profiles/${encodeURIComponent(profile)}`;
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/hub/workspace/repositories/${route}/agent-tasks`;
  return url;
}

function requestFailed(cause?: unknown, status?: number): AgentscmError {
  return new AgentscmError('HOOK_QUALIFICATION_FAILED', 'the qualification request to the service failed', {
    hint: 'the service is offline, unreachable, too slow or refused the request; the Stop hook blocks until it answers',
    ...(status === undefined ? {} : { details: { http_status: status } }),
    ...(cause === undefined ? {} : { cause }),
  });
}

function tokenRejected(status: number): AgentscmError {
  return new AgentscmError('HOOK_TOKEN_REJECTED', 'the service rejected the token', {
    hint: 'the grant was revoked, rotated or does not cover this repository; ask the operator for a live grant',
    details: { http_status: status },
  });
}

function malformed(cause?: unknown): AgentscmError {
  return new AgentscmError(
    'HOOK_ANSWER_MALFORMED',
    'the service answered something that is not a valid qualification answer',
    {
      hint: 'the subject is treated as not qualified',
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

async function readBounded(body: AsyncIterable<Buffer | Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > MAX_QUALIFICATION_RESPONSE_BYTES) throw malformed();
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** The `result` of the hub's answer envelope, validated strictly as a qualification answer. */
export function decodeQualificationResponse(bytes: Uint8Array): QualificationAnswer {
  let envelope: JsonValue;
  try {
    envelope = parseStrictJson(bytes, { maxBytes: MAX_QUALIFICATION_RESPONSE_BYTES });
  } catch (error) {
    throw malformed(error);
  }
  if (
    !isJsonObject(envelope) ||
    Object.keys(envelope).length !== 3 ||
    envelope.capability !== TASK_CAPABILITY ||
    envelope.schema_version !== TASK_CONTRACT_VERSION
  ) {
    throw malformed();
  }
  const result = envelope.result;
  if (result === undefined) throw malformed();
  try {
    return qualificationAnswerDecoder.validate(result);
  } catch (error) {
    throw malformed(error);
  }
}

/**
 * POST `body` to `url` on a connection of its own (no agent, so nothing is kept alive) and
 * resolve with the response head; `signal` aborts the request and, after the head, its body.
 */
function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal,
      },
      resolve,
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Ask the hub whether the subject qualifies (HOOK_QUALIFICATION_FAILED, HOOK_TOKEN_REJECTED or HOOK_ANSWER_MALFORMED
 * otherwise).
 */
export async function requestQualification(input: QualificationRequest): Promise<QualificationAnswer> {
  const url = agentTasksUrl(input.endpoint, input.repository, input.profile);
  const timeoutMs = input.timeoutMs ?? QUALIFICATION_TIMEOUT_MS;
  const body = JSON.stringify({
    operation: 'qualification',
    input: null,
    subject: { change_id: input.subject.change_id, context_digest: input.subject.context_digest },
  });
  // One limit for the whole call: connect, headers and body (the signal destroys the socket).
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(), timeoutMs);
  let response: IncomingMessage | undefined;
  try {
    try {
      response = await post(
        url,
        { authorization: `Bearer ${input.token}`, 'content-type': 'application/json' },
        body,
        limit.signal,
      );
    } catch (error) {
      throw requestFailed(error);
    }
    const status = response.statusCode ?? 0;
    if (status !== 200) {
      if (status === 401 || status === 403) throw tokenRejected(status);
      throw requestFailed(undefined, status);
    }
    const declared = response.headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > MAX_QUALIFICATION_RESPONSE_BYTES) throw malformed();
    let bytes: Buffer;
    try {
      bytes = await readBounded(response);
    } catch (error) {
      if (error instanceof AgentscmError) throw error;
      throw requestFailed(error);
    }
    return decodeQualificationResponse(bytes);
  } finally {
    clearTimeout(timer);
    // A body left unread is dropped with its connection (the connection is this call's own).
    if (response !== undefined && !response.complete) {
      response.on('error', () => undefined);
      response.destroy();
    }
  }
}
