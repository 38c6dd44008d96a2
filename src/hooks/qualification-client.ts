/**
 * The Stop hook's one service call (spec "Stop hook (agent-owned mode)": "calls qualification with
 * the token file (30 second limit)"; docs/stop-hooks.md "Agent-owned mode"): POST
 * `{"operation":"qualification","input":null,"subject":…}` to the hub's agent-tasks route of the
 * repository and profile, with the grant's token as `Authorization: Bearer`. The answer is read
 * bounded (a declared length past the bound is refused before any byte is buffered), decoded
 * strictly and validated with the decoder every client uses (src/contracts/qualification.ts).
 * Failures are three fixed categories, never with server text: the request failed (network,
 * timeout, an error status other than 401/403), the token was rejected (401/403), the answer is
 * malformed.
 */
import { Agent, request } from 'undici';
import { AgentscmError } from '../contracts/errors.js';
import { isJsonObject } from '../contracts/json-value.js';
import type { JsonValue } from '../contracts/json-value.js';
import { MAX_QUALIFICATION_BYTES, qualificationAnswerDecoder } from '../contracts/qualification.js';
import type { QualificationAnswer } from '../contracts/qualification.js';
import { parseStrictJson } from '../contracts/strict-json.js';
import { TASK_CAPABILITY, TASK_CONTRACT_VERSION } from '../contracts/task-common.js';

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
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/hub/workspace/repositories/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/profiles/${encodeURIComponent(profile)}/agent-tasks`;
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
  return new AgentscmError('HOOK_ANSWER_MALFORMED', 'the service answered something that is not a valid qualification answer', {
    hint: 'the subject is treated as not qualified',
    ...(cause === undefined ? {} : { cause }),
  });
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
  if (!isJsonObject(envelope) || Object.keys(envelope).length !== 3 || envelope.capability !== TASK_CAPABILITY || envelope.schema_version !== TASK_CONTRACT_VERSION) {
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

/** Ask the hub whether the subject qualifies (HOOK_QUALIFICATION_FAILED, HOOK_TOKEN_REJECTED or HOOK_ANSWER_MALFORMED otherwise). */
export async function requestQualification(input: QualificationRequest): Promise<QualificationAnswer> {
  const url = agentTasksUrl(input.endpoint, input.repository, input.profile);
  const timeoutMs = input.timeoutMs ?? QUALIFICATION_TIMEOUT_MS;
  const body = JSON.stringify({ operation: 'qualification', input: null, subject: { change_id: input.subject.change_id, context_digest: input.subject.context_digest } });
  // One connection for this call only: nothing is kept alive past the hook's one request.
  const dispatcher = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, pipelining: 0 });
  try {
    let response;
    try {
      response = await request(url, {
        method: 'POST',
        dispatcher,
        headers: { authorization: `Bearer ${input.token}`, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw requestFailed(error);
    }
    const status = response.statusCode;
    // A body left unread is dropped with its connection (the dispatcher is this call's own).
    const discard = (): void => {
      response.body.on('error', () => undefined);
      response.body.destroy();
    };
    if (status !== 200) {
      discard();
      if (status === 401 || status === 403) throw tokenRejected(status);
      throw requestFailed(undefined, status);
    }
    const declared = response.headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > MAX_QUALIFICATION_RESPONSE_BYTES) {
      discard();
      throw malformed();
    }
    let bytes: Buffer;
    try {
      bytes = await readBounded(response.body);
    } catch (error) {
      discard();
      if (error instanceof AgentscmError) throw error;
      throw requestFailed(error);
    }
    return decodeQualificationResponse(bytes);
  } finally {
    await dispatcher.destroy().catch(() => undefined);
  }
}
