/**
 * One forge commit status, sent (docs/hub.md "Forge status": publish_forge_status makes the hub
 * publish a commit status for candidate pull requests (GitHub) or merge requests (GitLab)). GitHub:
 * `POST {base}/repos/{owner}/{repo}/statuses/{sha}` with `{state, context, description}`; GitLab:
 * `POST {base}/projects/{id}/statuses/{sha}` with `{state, name, description}`. The forge token is
 * read from its file at every publication, so an operator replaces it without restarting the hub;
 * it goes into one request header and nowhere else.
 */
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { request } from 'undici';

import { AgentscmError } from '../contracts/errors.js';
import type { ForgeKind, HubForgeConfig } from '../contracts/hub-config.js';
import { quoteForMessage } from '../contracts/message-text.js';
import { readBoundedInput } from '../native/bounded-input.js';

/** The status context (GitHub) or name (GitLab) every publication uses. */
export const FORGE_STATUS_CONTEXT = 'agentscm/qualification';
/** GitHub's limit on a status description; GitLab accepts more, the hub sends at most this. */
export const FORGE_DESCRIPTION_MAX = 140;
/** Largest forge token file read. */
export const FORGE_TOKEN_MAX_BYTES = 4096;
/** How long one publication may take before it counts as failed and is retried. */
export const FORGE_REQUEST_TIMEOUT_MS = 10_000;
/** Largest forge answer read (the answer is discarded; only its status code counts). */
const FORGE_ANSWER_MAX_BYTES = 64 * 1024;

/** The qualification state as a forge shows it. */
export type ForgeState = 'pending' | 'success' | 'failure';

export interface ForgeStatus {
  readonly state: ForgeState;
  readonly description: string;
}

/** Where one status goes: the forge of the profile, and the linked project and commit. */
export interface ForgeTarget {
  readonly kind: ForgeKind;
  readonly project: string;
  readonly sha: string;
}

function forgeInvalid(message: string, hint: string): AgentscmError {
  return new AgentscmError('HUB_CONFIG_FORGE_INVALID', message, { hint });
}

/**
 * Check a profile's forge section where a schema cannot: an absolute token file that is a
 * private regular file with a token in it, and a base URL without credentials, query or fragment.
 */
export function checkForgeConfig(forge: HubForgeConfig, where: string): void {
  let url: URL;
  try {
    url = new URL(forge.base_url);
  } catch {
    throw forgeInvalid(
      `${where}.forge.base_url is not a URL`,
      'use the API base, e.g. "https://api.github.com" or "https://gitlab.example/api/v4"',
    );
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw forgeInvalid(
      `${where}.forge.base_url must be an http(s) URL without credentials, query or fragment`,
      'put the token in forge.token_file, never in the URL',
    );
  }
  if (!isAbsolute(forge.token_file)) {
    throw forgeInvalid(
      `${where}.forge.token_file ${quoteForMessage(forge.token_file)} is not an absolute path`,
      'name the forge token file by its absolute path',
    );
  }
  readForgeToken(forge.token_file, where);
}

/** The token of a forge token file: a private regular file, at most 4 KiB, one line. */
export function readForgeToken(file: string, where = 'forge'): string {
  let bytes: Buffer;
  try {
    const stats = statSync(file);
    if ((stats.mode & 0o077) !== 0) {
      throw forgeInvalid(
        `${where}.forge.token_file ${quoteForMessage(file)} can be read by group or others`,
        `chmod 600 ${file}`,
      );
    }
    bytes = readBoundedInput(file, { limit: FORGE_TOKEN_MAX_BYTES, what: 'the forge token file' });
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'HUB_CONFIG_FORGE_INVALID') throw error;
    throw forgeInvalid(
      `${where}.forge.token_file ${quoteForMessage(file)} cannot be read: ` +
        `${error instanceof Error ? error.message : String(error)}`,
      'create it with the forge token on one line, mode 0600',
    );
  }
  const token = bytes.toString('utf8').replace(/\r?\n$/, '');
  if (token.length === 0 || /[\s]/.test(token)) {
    throw forgeInvalid(
      `${where}.forge.token_file ${quoteForMessage(file)} does not hold one token on one line`,
      'write the token alone on the first line',
    );
  }
  return token;
}

/** The URL, headers and body of one publication. */
export function forgeRequest(
  baseUrl: string,
  target: ForgeTarget,
  status: ForgeStatus,
  token: string,
): { url: string; headers: Record<string, string>; body: string } {
  const base = baseUrl.replace(/\/+$/, '');
  const description = status.description.slice(0, FORGE_DESCRIPTION_MAX);
  if (target.kind === 'github') {
    const [owner = '', repo = ''] = target.project.split('/');
    return {
      url: `${base}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/statuses/${target.sha}`,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/vnd.github+json',
        'content-type': 'application/json',
        'user-agent': 'agentscm-hub',
      },
      body: JSON.stringify({ state: status.state, context: FORGE_STATUS_CONTEXT, description }),
    };
  }
  return {
    url: `${base}/projects/${encodeURIComponent(target.project)}/statuses/${target.sha}`,
    headers: {
      'private-token': token,
      accept: 'application/json',
      'content-type': 'application/json',
      'user-agent': 'agentscm-hub',
    },
    body: JSON.stringify({
      state: status.state === 'failure' ? 'failed' : status.state,
      name: FORGE_STATUS_CONTEXT,
      description,
    }),
  };
}

/** Send one status; resolves with the forge's HTTP status, rejects on a network failure or timeout. */
export async function sendForgeStatus(
  forge: HubForgeConfig,
  target: ForgeTarget,
  status: ForgeStatus,
): Promise<number> {
  const token = readForgeToken(forge.token_file);
  const { url, headers, body } = forgeRequest(forge.base_url, target, status, token);
  const answer = await request(url, {
    method: 'POST',
    headers,
    body,
    headersTimeout: FORGE_REQUEST_TIMEOUT_MS,
    bodyTimeout: FORGE_REQUEST_TIMEOUT_MS,
  });
  let read = 0;
  for await (const chunk of answer.body) {
    read += (chunk as Buffer).byteLength;
    if (read > FORGE_ANSWER_MAX_BYTES) {
      answer.body.destroy();
      break;
    }
  }
  return answer.statusCode;
}
