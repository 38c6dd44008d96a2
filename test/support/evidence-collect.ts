/**
 * Shared set-up of the collection tests: a real task store (test/support/tasks.ts) whose command
 * steps run a busybox recipe on the live engine, a collector key created in an owner-private
 * state directory and enrolled for step "lint", a collector profile pinning the runtime identity
 * observed now, an agent grant, and a real `collector_claim` through the facade whose descriptor
 * is written to a file. A loopback HTTP server stands in for a hub's upload route.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { Pool } from 'undici';

import { connectRuntime } from '../../src/collector/command-step-runtime.js';
import { createSigningKey } from '../../src/collector/key-store.js';
import { observeRuntimeIdentity, runtimeIdentityDigest } from '../../src/collector/runtime-identity.js';
import {
  encodeCollectorDescriptor,
  validateCollectorDescriptor,
  type CollectorDescriptor,
} from '../../src/contracts/collector/descriptor.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import { formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import { enrollExecutor, type EnrollResult } from '../../src/native/executor-registry.js';
import { openAuthority, readTransaction } from '../../src/native/store.js';
import { installCollectorProfileFile } from '../../src/tasks/collector/profiles.js';
import { deriveSubject } from '../../src/tasks/derive.js';
import { callWithTokenFile } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { cliEntryArgv, REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_EXE, DOCKER_SOCKET, IMAGE } from './collector.js';
import { makeGrant } from './grants.js';
import { openJournal } from './journal.js';
import { CHANGE_ID, defaultFiles, makeTaskStore, PROFILE, RECIPE_PATH, sha256, type TaskStore } from './tasks.js';

export { DOCKER_EXE, DOCKER_SOCKET, IMAGE };
export const ACTOR = { owner_id: 'alice', agent_id: 'agent-1' } as const;
export const STEP = 'lint';

export function busyboxRecipe(argv: string[]): JsonObject {
  return {
    version: 1,
    image: IMAGE,
    argv,
    env: {},
    workdir: '.',
    timeout_ms: 20_000,
    limits: {
      memory_bytes: 64 * 1024 * 1024,
      pids: 64,
      cpu_millis: 1000,
      output_bytes: 64 * 1024,
      scratch_bytes: 1024 * 1024,
    },
    toolchain: 'busybox-1',
    environment: 'posix-sh-offline',
  };
}

export interface Collection {
  readonly dir: string;
  readonly store: TaskStore;
  readonly dataDir: string;
  readonly stateDir: string;
  readonly keyFile: string;
  readonly tokenFile: string;
  readonly enrollment: EnrollResult;
  readonly profileId: string;
  readonly descriptor: CollectorDescriptor;
  readonly descriptorFile: string;
}

/** The runtime identity digest of the live engine for IMAGE and DOCKER_EXE. */
export async function liveRuntimeDigest(): Promise<string> {
  const { client, executableSha256 } = await connectRuntime({ docker: DOCKER_EXE, dockerSocket: DOCKER_SOCKET });
  try {
    return runtimeIdentityDigest((await observeRuntimeIdentity(client, { image: IMAGE, executableSha256 })).identity);
  } finally {
    await client.close();
  }
}

let claims = 0;

/** Claim the lint task under the profile as ACTOR (a real collector_claim) and write its descriptor. */
export function claimDescriptor(
  dir: string,
  store: TaskStore,
  tokenFile: string,
  profileId: string,
): { descriptor: CollectorDescriptor; file: string } {
  const auth = openAuthority(store.dataDir, { mode: 'read' });
  let task: { task_id: string; task_digest: string };
  try {
    const derived = readTransaction(auth, () =>
      deriveSubject(auth, {
        profile: PROFILE,
        target: 'main',
        change_id: CHANGE_ID,
        context_digest: store.contextDigest,
      }),
    );
    const entry = derived.tasks.find((t) => t.task.subject.step_id === STEP);
    if (entry === undefined) throw new Error('no lint task');
    task = { task_id: entry.task.task_id, task_digest: entry.digest };
  } finally {
    auth.close();
  }
  claims += 1;
  const request = {
    version: 1,
    request_id: `claim-${claims}`,
    agent: ACTOR,
    collector_profile_id: profileId,
    ...task,
    execution_operation_id: `exec-${claims}`,
    requested_lease_ms: 600_000,
  };
  const answer = callWithTokenFile({
    store: openStore(store.dataDir, { mode: 'write' }),
    tokenFile,
    operation: 'collector_claim',
    input: Buffer.from(JSON.stringify(request)),
    profile: PROFILE,
    target: 'main',
    subject: { change_id: CHANGE_ID, context_digest: store.contextDigest },
  }) as JsonObject;
  const descriptor = validateCollectorDescriptor(answer.descriptor as JsonValue);
  const file = join(dir, `descriptor-${claims}.json`);
  writeFileSync(file, encodeCollectorDescriptor(descriptor));
  return { descriptor, file };
}

/** A store, a key enrolled for step lint, a profile for the live engine, a grant and a claimed descriptor. */
export async function makeCollection(
  t: TestContext,
  options: { readonly argv?: string[]; readonly runtimeDigest?: string } = {},
): Promise<Collection> {
  const argv = options.argv ?? ['sh', '-c', 'test -f /src/a.txt'];
  const dir = tempDir(t, 'agentscm-collect-');
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  const recipe = busyboxRecipe(argv);
  const recipeText = JSON.stringify(recipe);
  const store = makeTaskStore(dataDir, undefined, defaultFiles({ [RECIPE_PATH]: recipeText }));
  const stateDir = join(dir, 'collector');
  const key = createSigningKey(stateDir);
  const enrollment = withWrite(dataDir, (auth) =>
    enrollExecutor(auth, {
      repository: store.repository,
      profile: PROFILE,
      step: STEP,
      executor: 'box-1',
      public_key: key.public_key,
    }),
  );
  const profile = {
    version: 1,
    kind: 'command',
    repository_id: store.repository,
    workflow_profile: PROFILE,
    step_id: STEP,
    registration_id: enrollment.registration_id,
    registration_epoch: enrollment.registration_epoch,
    verification_key_id: enrollment.verification_key_id,
    recipe,
    recipe_digest: sha256(recipeText),
    runtime_identity_digest: options.runtimeDigest ?? (await liveRuntimeDigest()),
  };
  const profileFile = join(dir, 'profile.json');
  writeFileSync(profileFile, formatJson(profile));
  const profileId = withStore(dataDir, 'write', (held) =>
    installCollectorProfileFile(held, profileFile, Date.now()),
  ).collector_profile_id;
  const grantDir = join(dir, 'grants');
  mkdirSync(grantDir, { mode: 0o700 });
  const tokenFile = makeGrant(dataDir, grantDir, ACTOR).token_file;
  const claimed = claimDescriptor(dir, store, tokenFile, profileId);
  return {
    dir,
    store,
    dataDir,
    stateDir,
    keyFile: key.key_file,
    tokenFile,
    enrollment,
    profileId,
    descriptor: claimed.descriptor,
    descriptorFile: claimed.file,
  };
}

function withWrite<T>(dataDir: string, fn: (auth: ReturnType<typeof openAuthority>) => T): T {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    return fn(auth);
  } finally {
    auth.close();
  }
}

/** The journal must exist before a read-only check opens it (the claim creates it). */
export function journalExists(dataDir: string): boolean {
  try {
    openJournal(dataDir, 'read').close();
    return true;
  } catch {
    return false;
  }
}

/** The flags of `agent-task collect` for a collection. */
export function collectArgs(c: Collection, extra: readonly string[] = []): string[] {
  return [
    '--data-dir',
    c.dataDir,
    'agent-task',
    'collect',
    '--descriptor',
    c.descriptorFile,
    '--key',
    c.keyFile,
    '--state-dir',
    c.stateDir,
    '--docker',
    DOCKER_EXE,
    '--docker-socket',
    DOCKER_SOCKET,
    '--token-file',
    c.tokenFile,
    ...extra,
  ];
}

export interface UploadCall {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: Buffer;
}

/** A loopback server answering the upload route: each call is recorded, `answer` decides the reply. */
export async function fakeHub(
  t: TestContext,
  answer: (call: UploadCall) => { status: number; body: JsonValue },
): Promise<{ endpoint: string; calls: UploadCall[] }> {
  const calls: UploadCall[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const call = { path: req.url ?? '', authorization: req.headers.authorization, body: Buffer.concat(chunks) };
      calls.push(call);
      const reply = answer(call);
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(formatJson(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/hub/workspace/repositories/acme/demo/profiles/default/agent-tasks`,
    calls,
  };
}

/** How many containers the engine created with the attempt's custody label since `sinceSeconds`. */
export async function containersCreated(attemptId: string, sinceSeconds: number): Promise<number> {
  const pool = new Pool('http://localhost', { socketPath: DOCKER_SOCKET });
  try {
    const filters = JSON.stringify({
      type: ['container'],
      event: ['create'],
      label: [`io.agentscm.attempt=${attemptId}`],
    });
    const until = Math.ceil(Date.now() / 1000) + 1;
    const response = await pool.request({
      path: `/events?since=${sinceSeconds}&until=${until}&filters=${encodeURIComponent(filters)}`,
      method: 'GET',
      headersTimeout: 10_000,
    });
    const text = await response.body.text();
    return text.split('\n').filter((line) => line.trim() !== '').length;
  } finally {
    await pool.close();
  }
}

/** Spawn the CLI with a test pause point and SIGKILL it as soon as it pauses there; resolves with the stdout it wrote. */
export function killAtPause(
  args: readonly string[],
  point: string,
): Promise<{ signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, AGENTSCM_TEST_PAUSE_AT: point };
    delete env.AGENTSCM_DATA_DIR;
    const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`agentscm-test-paused:${point}`)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve({ signal, stdout, stderr }));
  });
}

/** The error code an async call rejects with ('ok' when it resolves). */
export async function asyncCodeOf(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof AgentscmError) return error.code;
    throw error;
  }
  return 'ok';
}
