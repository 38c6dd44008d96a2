/**
 * `agentscm doctor` (docs/doctor.md): one read-only pass over what this machine needs — the Node
 * version, the store of the data directory, executor keys and registrations, grants and token
 * files, target requirements, the container runtime and the images and identities collector
 * profiles pin, the installed agent hooks, and the hub. Each check reports findings with a
 * stable code and a fix; the report is ok when no finding fails (warn and skip do not fail).
 *
 * It lives in hub/ because it is the one module that reads every layer's facts (hooks, the
 * collector, the workflow journal, the native store) and the hub's own config and health route;
 * each small read it needs sits beside the module that owns the fact. Nothing is created,
 * migrated or written, and no token is printed.
 */
import { Agent, request } from 'undici';

import type { JsonObject } from '../contracts/json/json-value.js';
import { readHubConfig } from '../hub/config.js';
import { HEALTH_PATH } from '../hub/routes/health.js';
import { openStore } from '../tasks/store.js';
import { describeError, DOCTOR_STATUSES, finding, passed, type DoctorFinding, type DoctorStatus } from './finding.js';
import { checkGitMirrors } from './git-mirrors.js';
import { agentscmEntries, checkHooks, type HookLocationReport } from './hooks.js';
import { checkHubProfile } from './hub-profiles.js';
import { checkRuntime } from './runtime.js';
import { checkGrants, checkKeys, checkRegistrations, checkRequirements, type TokenFileRef } from './store-contents.js';
import { checkStore } from './store.js';

/** How long the hub probe waits to connect, and then for the answer. */
export const HUB_PROBE_TIMEOUT_MS = 2000;
/** The largest health answer read. */
const HUB_HEALTH_MAX_BYTES = 4096;

export interface DoctorInput {
  /** The resolved data directory (docs/cli.md "Choosing the data directory"). */
  readonly dataDir: string;
  /** process.versions.node */
  readonly nodeVersion: string;
  /** The package's engines.node range, if it declares one. */
  readonly nodeRange: string | undefined;
  readonly workspace: string | null;
  readonly home: string;
  /** process.argv[1]: the entry of this agentscm (hooks must run it). */
  readonly script: string | undefined;
  readonly path: string;
  readonly stateDirs: readonly string[];
  readonly tokenFiles: readonly string[];
  readonly docker: string | undefined;
  readonly dockerSocket: string | undefined;
  readonly hubConfig: string | undefined;
}

export interface DoctorReport extends JsonObject {
  readonly version: 1;
  readonly data_dir: string;
  /** True when no finding fails. */
  readonly ok: boolean;
  readonly counts: Record<DoctorStatus, number>;
  readonly findings: (DoctorFinding & JsonObject)[];
  /** Where each installed agentscm hook lives (docs/stop-hooks.md "Where the hook lives"). */
  readonly hooks: (HookLocationReport & JsonObject)[];
}

/**
 * `>=20.18.1 <21 || >=22`: alternatives of space-separated comparators (>=, <=, >, <, =) on
 * X.Y.Z, a pre-release or build suffix of the running version ignored. No ~, ^ or x-ranges: the
 * package's engines range uses none, and a comparator this reads wrongly is better unsatisfied.
 */
export function satisfiesNodeRange(version: string, range: string): boolean {
  const parse = (text: string): number[] | null => {
    const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(text);
    return match === null ? null : [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
  };
  const have = parse(version.split(/[-+]/)[0] ?? '');
  if (have === null) return false;
  const compare = (a: number[], b: number[]): number => {
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
    return 0;
  };
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .filter((c) => c !== '')
      .every((comparator) => {
        const match = /^(>=|<=|>|<|=)?(.+)$/.exec(comparator);
        const want = match === null ? null : parse(match[2] ?? '');
        if (match === null || want === null) return false;
        const order = compare(have, want);
        switch (match[1]) {
          case '>=':
            return order >= 0;
          case '<=':
            return order <= 0;
          case '>':
            return order > 0;
          case '<':
            return order < 0;
          default:
            return order === 0;
        }
      }),
  );
}

/** The Node.js version against the package's engines range. */
export function checkNode(version: string, range: string | undefined): DoctorFinding {
  if (range === undefined) return passed('node', `Node.js ${version} (the package declares no engines range)`);
  if (satisfiesNodeRange(version, range)) return passed('node', `Node.js ${version} satisfies ${range}`);
  return finding(
    'node',
    'NODE_UNSUPPORTED',
    `Node.js ${version} does not satisfy the supported range ${range}`,
    `install a Node.js release in ${range} (e.g. the current Node.js 22 LTS) and run agentscm with it`,
  );
}

function probeHost(host: string): { readonly host: string; readonly loopback: boolean } {
  const probe = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return { host: probe, loopback: /^127\./.test(probe) || probe === '::1' };
}

/** The hub's config, whether it listens (loopback only) and whether its health route answers. */
export async function checkHub(configFile: string | undefined): Promise<DoctorFinding[]> {
  if (configFile === undefined)
    return [
      finding(
        'hub.config',
        'NOT_REQUESTED',
        'no hub config was named',
        'pass --hub-config FILE (the file `agentscm hub serve --config` uses) to check the hub',
      ),
    ];
  let config;
  try {
    config = readHubConfig(configFile);
  } catch (error) {
    const { code, message } = describeError(error);
    return [
      finding(
        'hub.config',
        'HUB_CONFIG_INVALID',
        `${configFile}: ${code}: ${message}`,
        'fix the config (docs/hub.md "Execution config"); `agentscm hub serve` refuses it the same way',
      ),
    ];
  }
  const findings: DoctorFinding[] = [
    passed(
      'hub.config',
      `${configFile} is valid: ${config.profiles.length} profile${config.profiles.length === 1 ? '' : 's'}, listen ` +
        `${config.host}:${config.port}`,
    ),
  ];
  for (const profile of config.profiles) {
    const store = openStore(profile.dataDir, { mode: 'read' });
    try {
      findings.push(checkHubProfile(profile, store));
    } finally {
      store.close();
    }
  }
  const { host, loopback } = probeHost(config.host);
  if (config.port === 0) {
    findings.push(
      finding(
        'hub.listen',
        'HUB_PORT_DYNAMIC',
        'the config listens on port 0: the hub picks its port when it starts, so doctor cannot find it',
        'set "listen" to a fixed HOST:PORT to let doctor probe the hub',
      ),
    );
    return findings;
  }
  if (!loopback) {
    findings.push(
      finding(
        'hub.listen',
        'HUB_NOT_LOOPBACK',
        `the hub listens on ${config.host}; doctor probes loopback addresses only`,
        'probe the hub from its own machine: GET /v1/hub/health',
      ),
    );
    return findings;
  }
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}${HEALTH_PATH}`;
  const agent = new Agent({ connect: { timeout: HUB_PROBE_TIMEOUT_MS } });
  try {
    const answer = await request(url, {
      method: 'GET',
      dispatcher: agent,
      headersTimeout: HUB_PROBE_TIMEOUT_MS,
      bodyTimeout: HUB_PROBE_TIMEOUT_MS,
    });
    findings.push(passed('hub.listen', `a server answers at ${host}:${config.port}`));
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > HUB_HEALTH_MAX_BYTES) break;
      chunks.push(buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8').slice(0, 300);
    if (answer.statusCode === 200 && text === '{"status":"ok"}')
      findings.push(passed('hub.health', `GET ${url} answers {"status":"ok"}`));
    else
      findings.push(
        finding(
          'hub.health',
          'HUB_UNHEALTHY',
          `GET ${url} answered HTTP ${answer.statusCode}: ${JSON.stringify(text)}`,
          "read the hub's error lines on its stderr; the health route reads every configured store, so check them " +
            'with `agentscm doctor --data-dir DIR` for each data_dir',
        ),
      );
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      findings.push(
        finding(
          'hub.listen',
          'HUB_NOT_LISTENING',
          `nothing listens on ${host}:${config.port} (${String(code)})`,
          `start the hub: agentscm hub serve --config ${configFile}`,
        ),
      );
    } else {
      findings.push(passed('hub.listen', `a server accepts connections at ${host}:${config.port}`));
      findings.push(
        finding(
          'hub.health',
          'HUB_UNHEALTHY',
          `GET ${url} failed: ` +
            `${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}`,
          'check that the process on that port is `agentscm hub serve` and that it is not stuck; restart it',
        ),
      );
    }
  } finally {
    await agent.close();
  }
  return findings;
}

/** Run every check (see the module comment); never throws for what it finds. */
export async function runDoctor(input: DoctorInput): Promise<DoctorReport> {
  const findings: DoctorFinding[] = [checkNode(input.nodeVersion, input.nodeRange)];
  let locations: HookLocationReport[] = [];
  const opened = openStore(input.dataDir, { mode: 'read' });
  try {
    const store = checkStore(opened);
    findings.push(...store.findings);
    findings.push(...checkRegistrations(store.auth));
    findings.push(...checkKeys(store.auth, input.stateDirs));
    const hooks = checkHooks({
      workspace: input.workspace,
      home: input.home,
      entries: agentscmEntries(input.script),
      path: input.path,
    });
    const tokenFiles: TokenFileRef[] = [
      ...input.tokenFiles.map((path) => ({ path, source: '--token-file' })),
      ...hooks.tokenFiles,
    ];
    findings.push(...checkGrants(store.auth, tokenFiles));
    findings.push(...checkRequirements(store.auth));
    findings.push(...checkGitMirrors(store.auth));
    findings.push(
      ...(await checkRuntime({ auth: store.auth, docker: input.docker, dockerSocket: input.dockerSocket })),
    );
    findings.push(...hooks.findings);
    locations = hooks.locations;
  } finally {
    opened.close();
  }
  findings.push(...(await checkHub(input.hubConfig)));
  const counts = Object.fromEntries(
    DOCTOR_STATUSES.map((status) => [status, findings.filter((f) => f.status === status).length]),
  ) as Record<DoctorStatus, number>;
  return {
    version: 1,
    data_dir: input.dataDir,
    ok: counts.fail === 0,
    counts,
    findings: findings.map((f) => ({ ...f })),
    hooks: locations.map((l) => ({ ...l })),
  };
}
