/**
 * Real hubs for tests: a task store (test/support/tasks.ts), grants with token files, a config
 * whose profile pins the installed requirement, and a hub listening on a loopback port — or the
 * CLI `agentscm hub serve` as a child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { grantTokenSha256, type GrantScope } from '../../src/contracts/grant.js';
import { encodeCanonicalText } from '../../src/contracts/json/canonical-json.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import type { HubConfig, HubProfile } from '../../src/hub/config.js';
import { startHub, type HubServerOptions, type RunningHub } from '../../src/hub/server.js';
import { createGrantInStore, revokeGrantInStore, rotateGrantInStore, type Grant } from '../../src/native/grants.js';
import { withStore } from '../../src/tasks/store.js';
import { showRequirement } from '../../src/workflows/requirement.js';
import { cliEntryArgv, REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { CHANGE_ID, makeTaskStore, PROFILE, type StepSpec, type TaskStore } from './tasks.js';

export const REPOSITORY_ID = 'acme/widgets';

export interface HubStore {
  readonly dir: string;
  readonly store: TaskStore;
  readonly profile: HubProfile;
  readonly config: HubConfig;
}

export interface TestGrant {
  readonly grant: Grant;
  readonly token: string;
  readonly actor: { owner_id: string; agent_id: string };
}

/** A task store and the config of one profile that pins its installed requirement. */
export function hubStore(t: TestContext, steps?: readonly StepSpec[]): HubStore {
  const dir = tempDir(t, 'agentscm-hub-');
  return hubOver(dir, makeTaskStore(join(dir, 'data'), steps));
}

/**
 * The hub profile over an existing task store (an evidence chain's, a receipt's), pinning the
 * requirement installed for main, and a config of that one profile on `port` (0: any).
 */
export function hubOver(dir: string, store: TaskStore, port = 0): HubStore {
  const requirement = withStore(store.dataDir, 'read', (s) => showRequirement(s, { target: 'main' }));
  const profile: HubProfile = {
    repositoryId: REPOSITORY_ID,
    profileId: PROFILE,
    nativeRepository: store.repository,
    dataDir: store.dataDir,
    target: 'main',
    requirementDigest: requirement.requirement_digest,
  };
  return { dir, store, profile, config: { host: '127.0.0.1', port, profiles: [profile] } };
}

let grantSeq = 0;

/** A live grant for `owner/agent` and its token (read from the new token file). */
export function grantFor(
  hub: HubStore,
  owner: string,
  agent: string,
  scope: GrantScope = 'agent',
  repository?: string,
): TestGrant {
  grantSeq += 1;
  const file = join(hub.dir, `grant-${grantSeq}.token`);
  const created = withStore(hub.store.dataDir, 'write', (s) =>
    createGrantInStore(s, {
      repository: repository ?? hub.store.repository,
      actor: { owner_id: owner, agent_id: agent },
      scope,
      tokenFile: file,
      nowMs: Date.now(),
    }),
  );
  const token = readFileSync(file, 'utf8').trim();
  if (grantTokenSha256(token).length !== 64) throw new Error('token file holds no token');
  return { grant: created.grant, token, actor: { owner_id: owner, agent_id: agent } };
}

/** Rotate the grant; its new token (the old one dies). */
export function rotate(hub: HubStore, grant: TestGrant): string {
  grantSeq += 1;
  const file = join(hub.dir, `grant-${grantSeq}.token`);
  withStore(hub.store.dataDir, 'write', (s) => rotateGrantInStore(s, grant.grant.grant_id, file, Date.now()));
  return readFileSync(file, 'utf8').trim();
}

export function revoke(hub: HubStore, grant: TestGrant): void {
  withStore(hub.store.dataDir, 'write', (s) => revokeGrantInStore(s, grant.grant.grant_id, Date.now()));
}

/** A started hub, closed after the test; its access log lines are collected. */
export async function startTestHub(
  t: TestContext,
  hub: HubStore,
  options: HubServerOptions = {},
): Promise<RunningHub & { readonly log: string[] }> {
  const log: string[] = [];
  const running = await startHub(hub.config, { accessLog: (line) => log.push(line), ...options });
  t.after(() => running.close());
  return Object.assign(running, { log });
}

export function tasksPath(repositoryId = REPOSITORY_ID, profile = PROFILE): string {
  return `/v1/hub/workspace/repositories/${repositoryId}/profiles/${profile}/agent-tasks`;
}

export function subjectOf(hub: HubStore): { change_id: string; context_digest: string } {
  return { change_id: CHANGE_ID, context_digest: hub.store.contextDigest };
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

/** One HTTP request over a fresh loopback connection. */
export function httpCall(
  url: string,
  method: string,
  path: string,
  options: { token?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] ??= String(Buffer.byteLength(options.body));
    }
    const req = httpRequest(new URL(path, url), { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = {};
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** POST one operation to the agent-tasks route. */
export function postTask(
  url: string,
  token: string,
  operation: string,
  input: unknown,
  subject?: unknown,
  path = tasksPath(),
): Promise<HttpAnswer> {
  const envelope = { operation, input, ...(subject === undefined ? {} : { subject }) } as JsonValue;
  return httpCall(url, 'POST', path, { token, body: encodeCanonicalText(envelope) });
}

/** The error code of a refusal answer. */
export function errorCode(answer: HttpAnswer): string {
  return (
    (answer.json.error as { code?: string } | undefined)?.code ??
    `(no error: ${answer.status} ${answer.text.slice(0, 200)})`
  );
}

/** The `result` of a successful answer. */
export function resultOf(answer: HttpAnswer): Record<string, unknown> {
  if (answer.status !== 200) throw new Error(`expected 200, got ${answer.status}: ${answer.text.slice(0, 300)}`);
  return answer.json.result as Record<string, unknown>;
}

/** Write a hub config file for `agentscm hub serve`. */
export function writeConfigFile(hub: HubStore, extra: Record<string, unknown> = {}): string {
  const file = join(hub.dir, 'hub.json');
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      listen: '127.0.0.1:0',
      agent_task_profiles: [
        {
          repository_id: hub.profile.repositoryId,
          profile_id: hub.profile.profileId,
          native_repository: hub.profile.nativeRepository,
          data_dir: hub.profile.dataDir,
          target: hub.profile.target,
          requirement_digest: hub.profile.requirementDigest,
          publish_forge_status: false,
        },
      ],
      ...extra,
    }),
  );
  return file;
}

/** `agentscm hub serve --config … --json` as a child process, once it printed its first line. */
export interface HubProcess {
  readonly child: ChildProcess;
  /** The first stdout line (the bound address as JSON; without --json the URL), as printed. */
  readonly firstLine: string;
  readonly url: string;
  /** The exit code, once the process ended. */
  readonly exited: Promise<number | null>;
  /** Everything printed so far. */
  readonly stdout: () => string;
  readonly stderr: () => string;
}

/**
 * Start `hub serve --json` (`json: false`: without it) for the store's config from the sources
 * (bin/dev.js through tsx) or, with `built`, from the built CLI (bin/run.js); resolves once the first line is printed, rejects
 * when the process ends before. SIGKILLed when the test ends.
 */
export async function spawnHubServe(
  t: TestContext,
  hub: HubStore,
  options: { readonly built?: boolean; readonly env?: NodeJS.ProcessEnv; readonly json?: boolean } = {},
): Promise<HubProcess> {
  const entry = cliEntryArgv(options.built === true ? 'built' : undefined);
  const json = options.json ?? true;
  const args = [...entry, 'hub', 'serve', '--config', writeConfigFile(hub), ...(json ? ['--json'] : [])];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const firstLine = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const end = stdout.indexOf('\n');
      if (end >= 0) resolve(stdout.slice(0, end));
    });
    void exited.then((code) => reject(new Error(`hub exited ${String(code)} before listening: ${stderr}`)));
  });
  // Without --json the first line is the URL itself, `http://ADDR:PORT/`.
  const url = json ? (JSON.parse(firstLine) as { url: string }).url : firstLine.replace(/\/$/, '');
  return { child, firstLine, url, exited, stdout: () => stdout, stderr: () => stderr };
}
