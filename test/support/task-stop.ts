/**
 * A world for the agent-owned Stop hook: a real workspace bound by init-repo to a real store, the
 * Change checkpointed from it with its command/v1 review context, the evidence requirement
 * (source paths → unit command step; optional capability) installed for target main, an enrolled
 * collector key with its collector profile, a live agent grant, and a real hub on loopback whose
 * profile pins that requirement. Evidence is made qualifying through the real import path: a
 * collector claim and a signed passing transfer imported by the authority.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, relative } from 'node:path';
import type { TestContext } from 'node:test';

import { createSigningKey, loadSigningKey } from '../../src/collector/key-store.js';
import { validateCollectorDescriptor, type CollectorDescriptor } from '../../src/contracts/collector/descriptor.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { guardStop, type StopHookResult } from '../../src/hooks/stop/guard.js';
import type { StopClient } from '../../src/hooks/stop/payload.js';
import { runTaskStop, type TaskStopInput } from '../../src/hooks/task-stop.js';
import type { HubProfile } from '../../src/hub/config.js';
import { createReviewContext } from '../../src/native/review-contexts.js';
import { openAuthority, writeTransaction } from '../../src/native/store.js';
import { setTarget } from '../../src/native/targets.js';
import { claimToFile } from '../../src/tasks/collector/claim-file.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { showRequirement } from '../../src/workflows/requirement.js';
import { checkpointWorkspace } from '../../src/workspace/checkpoint.js';
import { initRepo } from '../../src/workspace/init.js';
import { tempDir } from '../helpers/tmp.js';
import { importEnvelope } from './admission.js';
import {
  ALICE,
  claim,
  enrollAndInstall,
  envelopeOf,
  EVIDENCE_STEPS,
  transferParts,
  type Evidence,
} from './evidence.js';
import { makeGrant } from './grants.js';
import { REPOSITORY_ID, startTestHub, type HubStore } from './hub.js';
import { CHANGE_ID, defaultFiles, installRequirement, PROFILE, RECIPE_PATH, type TaskStore } from './tasks.js';

export { CHANGE_ID, PROFILE, REPOSITORY_ID };

export interface StopWorld {
  readonly dir: string;
  readonly workspace: string;
  readonly dataDir: string;
  readonly ev: Evidence;
  readonly hub: HubStore;
  /** The target the requirement is installed for and the hub profile pins. */
  readonly target: string;
  readonly url: string;
  /** The hub's access log lines (one per request it answered). */
  readonly log: readonly string[];
  readonly close: () => Promise<void>;
}

/** Write files into a directory (parents created). */
export function writeTree(root: string, files: Readonly<Record<string, string | Buffer>>): void {
  for (const [path, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), bytes);
  }
}

export interface StopWorldOptions {
  /** The target the requirement is installed for and the hub profile pins (default main; another is created at the Change's revision, and main then has no requirement). */
  readonly target?: string;
}

/** Build the world (see the module comment) and start its hub. */
export async function makeStopWorld(t: TestContext, options: StopWorldOptions = {}): Promise<StopWorld> {
  const target = options.target ?? 'main';
  const dir = tempDir(t, 'agentscm-task-stop-');
  const workspace = join(dir, 'ws');
  const dataDir = join(dir, 'data');
  mkdirSync(workspace);
  writeTree(workspace, defaultFiles());
  const init = withStore(dataDir, 'write', (store) =>
    initRepo(store, { path: workspace, name: 'demo', instructions: false }),
  );
  const cp = withStore(dataDir, 'write', (store) => checkpointWorkspace(store, { change: CHANGE_ID, workspace }));
  const auth = openAuthority(dataDir, { mode: 'write' });
  let contextDigest: string;
  try {
    contextDigest = createReviewContext(auth, {
      repository: init.repository,
      changeId: CHANGE_ID,
      runnerPath: RECIPE_PATH,
    }).context_digest;
    if (target !== 'main') writeTransaction(auth, () => setTarget(auth, init.repository, target, cp.revision));
  } finally {
    auth.close();
  }
  const store: TaskStore = {
    dataDir,
    repository: init.repository,
    revision: cp.revision,
    contextDigest,
    changeVersion: cp.version,
  };
  installRequirement(store, dir, EVIDENCE_STEPS, defaultFiles(), target);
  const key = loadSigningKey(createSigningKey(join(dir, 'state')).key_file);
  const { enrollment, profileId } = enrollAndInstall(store, key);
  const grant = makeGrant(dataDir, dir, ALICE);
  const ev: Evidence = {
    dir,
    store,
    key,
    enrollment,
    profileId,
    tokenFile: grant.token_file,
    grantId: grant.grant.grant_id,
  };
  const profile: HubProfile = {
    repositoryId: REPOSITORY_ID,
    profileId: PROFILE,
    nativeRepository: init.repository,
    dataDir,
    target,
    requirementDigest: withStore(dataDir, 'read', (s) => showRequirement(s, { target })).requirement_digest,
  };
  const hub: HubStore = { dir, store, profile, config: { host: '127.0.0.1', port: 0, profiles: [profile] } };
  const running = await startTestHub(t, hub);
  return { dir, workspace, dataDir, ev, hub, target, url: running.url, log: running.log, close: () => running.close() };
}

/** Claim unit and import a signed passing transfer: the import writes the receipt, the subject qualifies. */
export function qualifyWorld(world: StopWorld): void {
  importEnvelope(
    world.ev,
    envelopeOf(world.ev.key, transferParts(world.target === 'main' ? claim(world.ev) : claimFor(world))),
  );
}

/** A real collector claim (the core of `agent-task claim`) against the world's target. */
function claimFor(world: StopWorld): CollectorDescriptor {
  const { ev } = world;
  const out = join(ev.dir, `descriptor-${world.target}-${Date.now()}.json`);
  withStore(ev.store.dataDir, 'write', (held) =>
    claimToFile({
      store: held,
      tokenFile: ev.tokenFile,
      profileId: ev.profileId,
      change: CHANGE_ID,
      context: ev.store.contextDigest,
      leaseMs: 3_600_000n,
      out,
      target: world.target,
    }),
  );
  return validateCollectorDescriptor(JSON.parse(readFileSync(out, 'utf8')) as JsonObject);
}

/** The hook's input for the world (endpoint overridable: a fake or stopped server). */
export function stopInput(
  world: StopWorld,
  overrides: Partial<TaskStopInput> & Pick<TaskStopInput, 'store'>,
): TaskStopInput {
  return {
    workspace: world.workspace,
    change: CHANGE_ID,
    endpoint: world.url,
    repository: REPOSITORY_ID,
    profile: PROFILE,
    tokenFile: world.ev.tokenFile,
    ...overrides,
  };
}

export function claudePayload(session = 's-1', active?: boolean): Buffer {
  return Buffer.from(
    JSON.stringify({
      session_id: session,
      hook_event_name: 'Stop',
      transcript_path: null,
      cwd: '/repo',
      ...(active === undefined ? {} : { stop_hook_active: active }),
    }),
  );
}

export function codexPayload(session = 's-1', active = false): Buffer {
  return Buffer.from(
    JSON.stringify({
      cwd: '/repo',
      hook_event_name: 'Stop',
      last_assistant_message: null,
      model: 'gpt-5',
      permission_mode: 'default',
      session_id: session,
      stop_hook_active: active,
      transcript_path: null,
      turn_id: 't-1',
    }),
  );
}

/** One hook invocation in process: the guard frame around runTaskStop. */
export function runHook(
  world: StopWorld,
  options: { client?: StopClient; payload?: Buffer; input?: Partial<TaskStopInput> } = {},
): Promise<StopHookResult> {
  const client = options.client ?? 'claude-code';
  // As the command: one Store ('read') for the invocation, closed when it ends.
  const store = openStore(world.dataDir, { mode: 'read' });
  const input = stopInput(world, { store, ...options.input });
  return guardStop({
    client,
    store,
    change: CHANGE_ID,
    payload: options.payload ?? (client === 'codex' ? codexPayload() : claudePayload()),
    work: () => runTaskStop(input),
  }).finally(() => store.close());
}

export interface BlockFeedback {
  readonly reason: string;
  readonly json: {
    failures: { task_id: string; code: string }[];
    next_action: string;
    next: { operation: string; task_id?: string };
  };
}

/** The block answer of a hook's stdout: its reason and the reason's last line as JSON. */
export function blockOf(result: StopHookResult): BlockFeedback {
  const answer = JSON.parse(result.stdout) as { decision: string; reason: string };
  if (answer.decision !== 'block') throw new Error(`not a block: ${result.stdout}`);
  const last = answer.reason.split('\n').at(-1) ?? '';
  return { reason: answer.reason, json: JSON.parse(last) as BlockFeedback['json'] };
}

/** Every file under a directory with its bytes (relative path → bytes), for byte-identity checks. */
export function snapshotFiles(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stats = statSync(path);
      if (stats.isDirectory()) walk(path);
      else out.set(relative(root, path), readFileSync(path));
    }
  };
  walk(root);
  return out;
}

/**
 * A loopback proxy in front of the real hub: each request first runs `during` (the world changes
 * while the hook's call is in flight), then goes to the hub unchanged and its answer comes back
 * unchanged. Not a fake: every answer is the hub's own.
 */
export async function startInFlightProxy(
  t: TestContext,
  target: string,
  during: () => void | Promise<void>,
): Promise<{ url: string; requests: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      count += 1;
      void (async () => {
        await during();
        const forwarded = httpRequest(
          new URL(req.url ?? '/', target),
          { method: req.method, headers: { ...req.headers, host: new URL(target).host }, agent: false },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forwarded.on('error', () => res.destroy());
        forwarded.end(Buffer.concat(chunks));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => count };
}

/** A fake service on loopback that answers every request with `status`, `headers` and `body` (malformed-answer cases only). */
export async function startFakeService(
  t: TestContext,
  answer: { status?: number; headers?: Record<string, string>; body: string | Buffer; chunked?: boolean },
): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = Buffer.isBuffer(answer.body) ? answer.body : Buffer.from(answer.body);
      res.writeHead(answer.status ?? 200, {
        'content-type': 'application/json',
        ...(answer.chunked === true ? {} : { 'content-length': String(body.length) }),
        ...answer.headers,
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}
