/**
 * `agentscm doctor --endpoint URL` on a collector host, which has no store (docs/doctor.md "On a
 * collector host"): the hub answers its health route, the hub accepts the grant token (an
 * authenticated `capabilities` call on the agent-tasks URL), the collector's key state directory
 * holds a usable key, the engine answers, and the image the collector profile pins is present
 * (never pulled). Reads only: nothing is written on either host.
 */
import { request } from 'undici';

import { DockerClient } from '../collector/docker-client.js';
import { createUnixSocketTransport } from '../collector/docker-transport.js';
import { inspectKeyStateDir } from '../collector/key-store.js';
import { readTokenFile } from '../native/grant-token-file.js';
import type { DoctorReport } from './doctor.js';
import { describeError, finding, passed, type DoctorFinding, type DoctorStatus } from './finding.js';
import { defaultDockerSocket } from './runtime.js';

/** Each request to the hub is answered within this bound, or the check fails. */
export const ENDPOINT_TIMEOUT_MS = 5_000;

/** The most of a refusal's body quoted in a finding. */
const QUOTED_BODY_CHARS = 200;

export interface CollectorHostInput {
  /** The hub's agent-tasks URL (`…/profiles/PROFILE/agent-tasks`), as `agent-task collect --endpoint` takes it. */
  readonly endpoint: string;
  readonly tokenFiles: readonly string[];
  readonly stateDirs: readonly string[];
  readonly images: readonly string[];
  readonly dockerSocket: string | undefined;
}

async function call(
  url: URL,
  method: 'GET' | 'POST',
  token?: string,
): Promise<{ readonly status: number; readonly body: string }> {
  const response = await request(url, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    ...(method === 'POST' ? { body: '{"operation":"capabilities","input":null}' } : {}),
    headersTimeout: ENDPOINT_TIMEOUT_MS,
    bodyTimeout: ENDPOINT_TIMEOUT_MS,
  });
  const body = (await response.body.text()).slice(0, QUOTED_BODY_CHARS).replace(/\s+/g, ' ');
  return { status: response.statusCode, body };
}

async function checkEndpoint(input: CollectorHostInput): Promise<DoctorFinding[]> {
  let url: URL;
  try {
    url = new URL(input.endpoint);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`not http(s): ${url.protocol}`);
  } catch (error) {
    return [
      finding(
        'endpoint',
        'ENDPOINT_UNREACHABLE',
        `--endpoint ${input.endpoint} is not an http(s) URL: ${describeError(error).message}`,
        "pass the hub's agent-tasks URL, " +
          'http://HOST:PORT/v1/hub/workspace/repositories/OWNER/NAME/profiles/ID/agent-tasks',
      ),
    ];
  }
  const findings: DoctorFinding[] = [];
  const health = new URL('/v1/hub/health', url);
  try {
    const answer = await call(health, 'GET');
    findings.push(
      answer.status === 200
        ? passed('endpoint.health', `the hub at ${url.origin} answers its health route`)
        : finding(
            'endpoint.health',
            'HUB_UNHEALTHY',
            `GET ${health.href} answered ${answer.status}: ${answer.body}`,
            "read the hub's log on its host; `agentscm doctor --hub-config` there names the store's problem",
          ),
    );
  } catch (error) {
    findings.push(
      finding(
        'endpoint.health',
        'ENDPOINT_UNREACHABLE',
        `GET ${health.href} failed: ${describeError(error).message}`,
        'start `agentscm hub serve` on the hub host, or check the address, port and the network between the hosts',
      ),
    );
    // The token cannot be checked against a hub that does not answer.
    for (const file of input.tokenFiles)
      findings.push(
        finding(
          'endpoint.token',
          'ENDPOINT_UNREACHABLE',
          `${file} was not checked: the hub does not answer`,
          'see above',
        ),
      );
    return findings;
  }
  if (input.tokenFiles.length === 0)
    findings.push(finding('endpoint.token', 'NOT_REQUESTED', 'no --token-file given', 'pass --token-file FILE'));
  for (const file of input.tokenFiles) {
    let token: string;
    try {
      token = readTokenFile(file);
    } catch (error) {
      const { code, message } = describeError(error);
      findings.push(
        finding(
          'endpoint.token',
          'GRANT_TOKEN_FILE_INVALID',
          `${file}: ${code}: ${message}`,
          'copy the token file `grant create` wrote, unchanged and chmod 600',
        ),
      );
      continue;
    }
    try {
      const answer = await call(url, 'POST', token);
      findings.push(
        answer.status === 200
          ? passed('endpoint.token', `the hub accepts the token of ${file} on ${url.pathname}`)
          : finding(
              'endpoint.token',
              'ENDPOINT_TOKEN_REFUSED',
              `the hub refused the token of ${file} on ${url.pathname} (${answer.status}): ${answer.body}`,
              'ask the operator for a live agent grant of this repository (`agentscm grant create` on the hub host), ' +
                'or the right --endpoint',
            ),
      );
    } catch (error) {
      findings.push(
        finding(
          'endpoint.token',
          'ENDPOINT_UNREACHABLE',
          `POST ${url.href} failed: ${describeError(error).message}`,
          'check the address, port and the network between the hosts',
        ),
      );
    }
  }
  return findings;
}

function checkStateDirs(stateDirs: readonly string[]): DoctorFinding[] {
  if (stateDirs.length === 0)
    return [finding('keys.state-dir', 'NOT_REQUESTED', 'no --state-dir given', 'pass --state-dir DIR')];
  return stateDirs.map((dir) => {
    const inspected = inspectKeyStateDir(dir);
    if (inspected.state === 'ok')
      return passed('keys.state-dir', `${dir} holds a key, verification_key_id ${inspected.verificationKeyId}`);
    if (inspected.state === 'dir_missing')
      return finding(
        'keys.state-dir',
        'KEY_STATE_DIR_MISSING',
        `${dir} does not exist`,
        `agentscm agent-task key --state-dir ${dir}`,
      );
    if (inspected.state === 'key_missing')
      return finding(
        'keys.state-dir',
        'KEY_FILE_MISSING',
        `${dir} holds no signing-key.json`,
        `agentscm agent-task key --state-dir ${dir}`,
      );
    const code =
      inspected.state === 'dir_not_private'
        ? 'KEY_STATE_DIR_NOT_PRIVATE'
        : inspected.state === 'key_not_private'
          ? 'KEY_FILE_NOT_PRIVATE'
          : 'KEY_FILE_INVALID';
    return finding(
      'keys.state-dir',
      code,
      `${dir}: ${inspected.problem}`,
      inspected.hint ?? 'replace it with a key written by `agent-task key`',
    );
  });
}

async function checkEngine(input: CollectorHostInput): Promise<DoctorFinding[]> {
  const socket = input.dockerSocket ?? defaultDockerSocket();
  let client: DockerClient;
  try {
    client = await DockerClient.connect(createUnixSocketTransport(socket));
  } catch (error) {
    const { code, message } = describeError(error);
    return [
      finding(
        'runtime',
        'RUNTIME_UNAVAILABLE',
        `the engine at unix://${socket} does not answer: ${code}: ${message}`,
        'start the container engine on this host, or pass --docker-socket PATH',
      ),
    ];
  }
  const findings = [passed('runtime', `the engine at unix://${socket} answers: engine ${client.engine.version}`)];
  try {
    if (input.images.length === 0)
      findings.push(finding('runtime.image', 'NOT_REQUESTED', 'no --image given', "pass --image with the profile's"));
    for (const image of input.images) {
      try {
        const info = await client.inspectImage(image);
        findings.push(passed('runtime.image', `image ${image} (${info.id}) is present`));
      } catch (error) {
        const { code, message } = describeError(error);
        findings.push(
          finding(
            'runtime.image',
            'IMAGE_MISSING',
            `image ${image} cannot be used: ${code}: ${message}`,
            `load the image into this host's engine (docker load -i FILE); agentscm never pulls images`,
          ),
        );
      }
    }
  } finally {
    await client.close();
  }
  return findings;
}

/** Every finding of a collector host, in the order: endpoint, token, key, engine, image. */
export async function checkCollectorHost(input: CollectorHostInput): Promise<DoctorFinding[]> {
  return [...(await checkEndpoint(input)), ...checkStateDirs(input.stateDirs), ...(await checkEngine(input))];
}

/** The report of a collector host: the same shape as the store's, with no data directory and no hooks. */
export function collectorHostReport(findings: readonly DoctorFinding[]): DoctorReport {
  const counts: Record<DoctorStatus, number> = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const f of findings) counts[f.status] += 1;
  return {
    version: 1,
    data_dir: '',
    ok: counts.fail === 0,
    counts,
    findings: findings.map((f) => ({ ...f })),
    hooks: [],
  };
}
