/**
 * Evidence-path benchmark (issue 11 "Benchmark"), `npm run bench -- collect`:
 *
 * (a) claim → collect → upload (into the local authority) → receipt of a `true` recipe, against
 *     `docker run --rm --network none IMAGE true` in the same run, alternating, median ratio
 *     (target ≤ 1.5×). Measured twice: through the built CLI processes a user runs
 *     (`agent-task claim`, then `agent-task collect`, each a `node bin/run.js` process) and in
 *     process (claimToFile + collect). Floors, with no agentscm code: the engine's own
 *     create → start → wait → remove of the same container over its API, the start of one
 *     `node bin/run.js --version` process, and one SHA-256 of the docker executable (the
 *     runtime identity hashes it on every collect).
 * (b) import of a 16 MiB transfer, in process, against one SHA-256 of the same bytes in the same
 *     process (target ≤ 3×). A collector's records never reach 16 MiB (the ExecutionRecord keeps
 *     its streams' sizes and SHA-256s, not their bytes), so the envelope is a real signed transfer
 *     of a fresh claim whose ExecutionRecord is padded with one extra member. The verification
 *     stage (exact framing, strict Ed25519 over the header digest, both record digests and the
 *     transfer digest) is timed alone, and the whole import (which also parses both records and
 *     stores the envelope) as far as the authority accepts the padded record. An attempt whose
 *     import was refused (or not tried) is reconciled, untimed, before the next round's claim,
 *     as a collector must before it claims the task of a newer subject
 *     (docs/agent-tasks.md "State machine").
 *
 * Progress goes to stderr; the figures to stdout. AGENTSCM_BENCH_ROUNDS (default 9) sets the
 * rounds of (a), AGENTSCM_BENCH_IMPORT_ROUNDS (default 7) those of (b). AGENTSCM_BENCH_CLI names
 * another built entry than bin/run.js (a build of the same sources elsewhere); AGENTSCM_BENCH_CLI_BASE
 * names a second built entry (an older build) whose CLI cycle is measured in the same rounds, so
 * that a change is compared with what it replaces under the same load;
 * AGENTSCM_BENCH_COLLECT=cycle or =import runs one part only; AGENTSCM_BENCH_CLI_NODE_ARGS adds node
 * options to the claim and collect processes (`--cpu-prof --cpu-prof-dir=DIR` profiles them);
 * AGENTSCM_BENCH_IMPORT_BYTES (default 16 MiB) sizes the envelopes of (b), so that a test can run
 * a small sample of it (test/bench/collect-import.test.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Pool } from 'undici';

import { checkDescriptorAgainstAuthority } from '../src/collector/collect-check.js';
import { collectionHeader, collectionRequest } from '../src/collector/collect-request.js';
import { collect } from '../src/collector/collect.js';
import { connectRuntime } from '../src/collector/command-step-runtime.js';
import { requestDigest, type ExecutionRecord } from '../src/collector/execution-record.js';
import { createSigningKey, loadSigningKey } from '../src/collector/key-store.js';
import {
  observeRuntimeIdentity,
  runtimeIdentityDigest,
  type RuntimeIdentity,
} from '../src/collector/runtime-identity.js';
import { decodeCollectorDescriptor, type CollectorDescriptor } from '../src/contracts/collector/descriptor.js';
import {
  checkTransferSignature,
  encodeTransferEnvelope,
  readTransferEnvelope,
  transferDigest,
} from '../src/contracts/collector/transfer.js';
import { isAgentscmError } from '../src/contracts/errors.js';
import { encodeCanonical, formatJson } from '../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../src/contracts/json/json-value.js';
import { parseStrictJson } from '../src/contracts/json/strict-json.js';
import { sha256Hex } from '../src/crypto/sha256.js';
import { enrollExecutor } from '../src/native/executor-registry.js';
import { readTokenFile } from '../src/native/grant-token-file.js';
import { openAuthority } from '../src/native/store.js';
import { claimToFile } from '../src/tasks/collector/claim-file.js';
import { importCollectorTransfer } from '../src/tasks/collector/import.js';
import { installCollectorProfileFile } from '../src/tasks/collector/profiles.js';
import { authorizeTaskToken, callWithTokenFile } from '../src/tasks/grant-guard.js';
import { openStore, withStore } from '../src/tasks/store.js';
import { busyboxRecipe } from '../test/support/evidence-collect.js';
import { makeGrant } from '../test/support/grants.js';
import {
  CHANGE_ID,
  checkpoint,
  defaultFiles,
  makeTaskStore,
  PROFILE,
  RECIPE_PATH,
  sha256,
  type TaskStore,
} from '../test/support/tasks.js';

const run = promisify(execFile);
const SOCKET = process.env.AGENTSCM_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
const IMAGE = 'local/busybox:1';
const ROUNDS = Number(process.env.AGENTSCM_BENCH_ROUNDS ?? 9);
const IMPORT_ROUNDS = Number(process.env.AGENTSCM_BENCH_IMPORT_ROUNDS ?? 7);
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = process.env.AGENTSCM_BENCH_CLI ?? join(REPO_ROOT, 'bin', 'run.js');
/** A second built entry (an older build) measured in the same rounds as CLI, or undefined. */
const CLI_BASE = process.env.AGENTSCM_BENCH_CLI_BASE;
/** Extra node options for the CLI processes, e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile them. */
const CLI_NODE_ARGS = (process.env.AGENTSCM_BENCH_CLI_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
const STEP = 'check';
/** AGENTSCM_BENCH_COLLECT=cycle or import runs one part only. */
const PARTS = process.env.AGENTSCM_BENCH_COLLECT ?? 'all';
const ACTOR = { owner_id: 'bench', agent_id: 'agent-1' } as const;
const MIB16 = 16 * 1024 * 1024;
/** The size of each padded envelope of (b): 16 MiB unless a sample asks for less. */
const IMPORT_BYTES = Number(process.env.AGENTSCM_BENCH_IMPORT_BYTES ?? MIB16);
/** The size as the output names it: "16 MiB", or the byte count of a smaller sample. */
const IMPORT_LABEL = IMPORT_BYTES === MIB16 ? '16 MiB' : `${IMPORT_BYTES} B`;

/** agent-task collect as its command runs it: a read Store for the checks, a write Store for a local upload. */
async function collectWithStores(
  dataDir: string,
  input: Omit<Parameters<typeof collect>[0], 'store' | 'uploadStore'>,
): ReturnType<typeof collect> {
  const store = openStore(dataDir, { mode: 'read' });
  const uploadStore = openStore(dataDir, { mode: 'write' });
  try {
    return await collect({ ...input, store, uploadStore });
  } finally {
    uploadStore.close();
    store.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function timedSync(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

function progress(message: string): void {
  process.stderr.write(`collect bench: ${message}\n`);
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

function dockerCli(): string {
  for (const candidate of ['/usr/bin/docker', '/usr/local/bin/docker']) if (existsSync(candidate)) return candidate;
  throw new Error('no docker CLI for the baseline (install docker.io: npm run runtime:start)');
}

/** A store whose requirement is one command step running `true`, an enrolled key, a collector profile and a grant. */
interface Bench {
  readonly dir: string;
  readonly store: TaskStore;
  readonly stateDir: string;
  readonly keyFile: string;
  readonly tokenFile: string;
  readonly profileId: string;
  readonly docker: string;
  identity: RuntimeIdentity | null;
  claims: number;
}

async function setUp(dir: string, docker: string): Promise<Bench> {
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const recipe = busyboxRecipe(['true']);
  const recipeText = JSON.stringify(recipe);
  const store = makeTaskStore(dataDir, [{ id: STEP, kind: 'command' }], defaultFiles({ [RECIPE_PATH]: recipeText }));
  const stateDir = join(dir, 'collector');
  const key = createSigningKey(stateDir);
  const auth = openAuthority(dataDir, { mode: 'write' });
  let enrollment;
  try {
    enrollment = enrollExecutor(auth, {
      repository: store.repository,
      profile: PROFILE,
      step: STEP,
      executor: 'bench-box',
      public_key: key.public_key,
    });
  } finally {
    auth.close();
  }
  const { client, executableSha256 } = await connectRuntime({ docker, dockerSocket: SOCKET });
  let identity: RuntimeIdentity;
  try {
    identity = (await observeRuntimeIdentity(client, { image: IMAGE, executableSha256 })).identity;
  } finally {
    await client.close();
  }
  const profileFile = join(dir, 'profile.json');
  writeFileSync(
    profileFile,
    formatJson({
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
      runtime_identity_digest: runtimeIdentityDigest(identity),
    }),
  );
  const profileId = withStore(dataDir, 'write', (held) =>
    installCollectorProfileFile(held, profileFile, Date.now()),
  ).collector_profile_id;
  const grants = join(dir, 'grants');
  mkdirSync(grants, { mode: 0o700 });
  const tokenFile = makeGrant(dataDir, grants, ACTOR).token_file;
  return { dir, store, stateDir, keyFile: key.key_file, tokenFile, profileId, docker, identity, claims: 0 };
}

/** A fresh subject (untimed): a new version of the Change, whose task of the step is unclaimed. */
function freshSubject(b: Bench): void {
  checkpoint(b.store, b.store.revision);
}

/** `agent-task claim --profile … --out FILE` in process: the bench's Change, context and profile. */
function claimInto(b: Bench, out: string): void {
  withStore(b.store.dataDir, 'write', (held) =>
    claimToFile({
      store: held,
      tokenFile: b.tokenFile,
      profileId: b.profileId,
      change: CHANGE_ID,
      context: b.store.contextDigest,
      leaseMs: 3_600_000n,
      out,
      target: 'main',
    }),
  );
}

function nextDescriptorFile(b: Bench): string {
  b.claims += 1;
  return join(b.dir, `descriptor-${b.claims}.json`);
}

interface Answer {
  outcome: string;
  upload: { target: string; answer: JsonObject };
}

function requireReceipt(answer: Answer, how: string): void {
  const receipt = answer.upload.answer.receipt as JsonObject | null | undefined;
  if (
    answer.outcome !== 'passed' ||
    answer.upload.answer.status !== 'imported' ||
    receipt === null ||
    receipt === undefined
  ) {
    throw new Error(
      `${how}: the cycle did not end with an imported passing transfer and a receipt: ${JSON.stringify(answer, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`,
    );
  }
}

const cliEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.AGENTSCM_DATA_DIR;
  delete env.AGENTSCM_PROGRESS;
  return env;
};

/** claim → collect → upload → receipt through two built CLI processes. */
async function cliCycle(b: Bench, cli = CLI): Promise<void> {
  const out = nextDescriptorFile(b);
  const data = b.store.dataDir;
  const env = cliEnv();
  await run(
    process.execPath,
    [
      ...CLI_NODE_ARGS,
      cli,
      '--data-dir',
      data,
      'agent-task',
      'claim',
      '--profile',
      b.profileId,
      '--change',
      CHANGE_ID,
      '--context',
      b.store.contextDigest,
      '--token-file',
      b.tokenFile,
      '--out',
      out,
    ],
    { env },
  );
  const collected = await run(
    process.execPath,
    [
      ...CLI_NODE_ARGS,
      cli,
      '--data-dir',
      data,
      'agent-task',
      'collect',
      '--descriptor',
      out,
      '--key',
      b.keyFile,
      '--state-dir',
      b.stateDir,
      '--docker',
      b.docker,
      '--docker-socket',
      SOCKET,
      '--token-file',
      b.tokenFile,
      '--json',
    ],
    { env },
  );
  requireReceipt(parseStrictJson(Buffer.from(collected.stdout), { maxBytes: 1 << 20 }) as unknown as Answer, 'CLI');
}

/** The phases of an in-process cycle, told apart by collect's progress lines (docs/collect.md "What collect does, in order"). */
const PHASES = [
  ['claim', ''],
  ['check + runtime identity + reserve', 'checking the descriptor'],
  ['materialize', 'materializing revision'],
  ['container', 'running '],
  ['recheck + sign + retain', 'the command finished'],
  ['upload: import + receipt', 'uploading transfer'],
] as const;
type Split = number[][];

/** The same cycle in process: the functions the two commands call. */
async function inProcessCycle(b: Bench, split?: Split): Promise<void> {
  const out = nextDescriptorFile(b);
  const data = b.store.dataDir;
  const marks: number[] = [performance.now()];
  claimInto(b, out);
  const onProgress = (message: string): void => {
    const phase = PHASES.findIndex(([, prefix], index) => index > 0 && message.startsWith(prefix));
    if (phase > 0) marks[phase] = performance.now();
  };
  const result = await collectWithStores(data, {
    descriptorFile: out,
    keyFile: b.keyFile,
    stateDir: b.stateDir,
    docker: b.docker,
    dockerSocket: SOCKET,
    tokenFile: b.tokenFile,
    agentscmVersion: '0.0.0-bench',
    onProgress,
  });
  marks[PHASES.length] = performance.now();
  requireReceipt(result as unknown as Answer, 'in process');
  if (split !== undefined) PHASES.forEach((_, i) => (split[i] ??= []).push((marks[i + 1] ?? 0) - (marks[i] ?? 0)));
}

async function dockerRun(docker: string): Promise<void> {
  await run(docker, ['run', '--rm', '--network', 'none', IMAGE, 'true'], {
    env: { ...process.env, DOCKER_HOST: `unix://${SOCKET}` },
  });
}

/** The engine's own create → start → wait → remove of the same container, over its API, no agentscm code. */
async function engineCycle(pool: Pool): Promise<void> {
  const call = async (method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> => {
    const response = await pool.request({
      method,
      path,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${text}`);
    return text === '' ? null : (JSON.parse(text) as unknown);
  };
  const created = (await call('POST', '/containers/create', {
    Image: IMAGE,
    Cmd: ['true'],
    HostConfig: { NetworkMode: 'none' },
  })) as { Id: string };
  await call('POST', `/containers/${created.Id}/start`);
  await call('POST', `/containers/${created.Id}/wait`);
  await call('DELETE', `/containers/${created.Id}?force=true`);
}

async function benchCycle(root: string): Promise<void> {
  const docker = dockerCli();
  progress('setting up a store with one `true` command step, a collector key, profile and grant');
  const b = await setUp(join(root, 'cycle'), docker);
  const pool = new Pool('http://localhost', { socketPath: SOCKET });
  const cli: number[] = [];
  const cliBase: number[] = [];
  const inProc: number[] = [];
  const split: Split = [];
  const baseline: number[] = [];
  const engine: number[] = [];
  const start: number[] = [];
  const hash: number[] = [];
  try {
    progress('warming up (one of each, untimed)');
    freshSubject(b);
    await cliCycle(b);
    if (CLI_BASE !== undefined) {
      freshSubject(b);
      await cliCycle(b, CLI_BASE);
    }
    freshSubject(b);
    await inProcessCycle(b);
    await dockerRun(docker);
    await engineCycle(pool);
    for (let i = 0; i < ROUNDS; i++) {
      progress(`round ${i + 1}/${ROUNDS}`);
      // Rotate the order so that drift on a shared machine hits every side alike.
      const sides: (() => Promise<void>)[] = [
        async () => {
          freshSubject(b);
          cli.push(await timed(() => cliCycle(b)));
        },
        async () => {
          freshSubject(b);
          inProc.push(await timed(() => inProcessCycle(b, split)));
        },
        async () => {
          baseline.push(await timed(() => dockerRun(docker)));
        },
        async () => {
          engine.push(await timed(() => engineCycle(pool)));
          start.push(await timed(() => run(process.execPath, [CLI, '--version'], { env: cliEnv() })));
          hash.push(timedSync(() => sha256Hex(readFileSync(docker))));
        },
      ];
      const base = CLI_BASE;
      if (base !== undefined) {
        sides.push(async () => {
          freshSubject(b);
          cliBase.push(await timed(() => cliCycle(b, base)));
        });
      }
      for (let k = 0; k < sides.length; k++) await (sides[(i + k) % sides.length] as () => Promise<void>)();
    }
  } finally {
    await pool.close();
  }
  const base = median(baseline);
  const line = (label: string, value: number, extra = ''): void => {
    process.stdout.write(`${label.padEnd(62)} median ${ms(value).padStart(9)} over ${ROUNDS}${extra}\n`);
  };
  line('docker run --rm --network none local/busybox:1 true', base);
  line(
    'claim → collect → upload → receipt, CLI (2 node processes)',
    median(cli),
    `   ratio ${(median(cli) / base).toFixed(2)}x (target <= 1.50x) ${median(cli) / base <= 1.5 ? 'OK' : 'ABOVE TARGET'}`,
  );
  line(
    'claim → collect → upload → receipt, in process',
    median(inProc),
    `   ratio ${(median(inProc) / base).toFixed(2)}x (target <= 1.50x) ${median(inProc) / base <= 1.5 ? 'OK' : 'ABOVE TARGET'}`,
  );
  process.stdout.write(
    `  in process, per phase (medians): ${PHASES.map(([label], i) => `${label} ${ms(median(split[i] ?? []))}`).join(', ')}\n`,
  );
  line(
    'floor: engine create → start → wait → remove over its API',
    median(engine),
    `   ratio ${(median(engine) / base).toFixed(2)}x`,
  );
  line('floor: start of one built CLI process (--version)', median(start));
  line('floor: one SHA-256 of the docker executable (runtime identity)', median(hash));
  const floor = median(engine) + 2 * median(start) + median(hash);
  process.stdout.write(
    `floor of the CLI cycle (engine + 2 process starts + executable hash): ${ms(floor)}, ratio ${(floor / base).toFixed(2)}x\n`,
  );
  process.stdout.write(
    `CLI cycle above its floor: ${ms(median(cli) - floor)}, ${(median(cli) / floor).toFixed(2)}x the floor\n`,
  );
  if (CLI_BASE !== undefined) {
    line(
      `the same CLI cycle, AGENTSCM_BENCH_CLI_BASE build`,
      median(cliBase),
      `   ratio ${(median(cliBase) / base).toFixed(2)}x, ${(median(cliBase) / floor).toFixed(2)}x the floor`,
    );
    process.stdout.write(
      `CLI cycle, this build / base build: ${(median(cli) / median(cliBase)).toFixed(3)} (${ms(median(cli) - median(cliBase))})\n`,
    );
  }
  process.stdout.write(
    `${JSON.stringify({
      bench: 'collect-cycle',
      rounds: ROUNDS,
      docker_run_ms: base,
      cli_cycle_ms: median(cli),
      cli_cycle_ratio: median(cli) / base,
      cli_floor_ms: floor,
      cli_over_floor: median(cli) / floor,
      in_process_ms: median(inProc),
      in_process_ratio: median(inProc) / base,
      ...(CLI_BASE === undefined
        ? {}
        : { cli_base_cycle_ms: median(cliBase), cli_vs_base: median(cli) / median(cliBase) }),
    })}\n`,
  );
}

/**
 * A real signed envelope of a fresh claim, of exactly IMPORT_BYTES: the ExecutionRequest the
 * authority regenerates, and the ExecutionRecord of a passing `true` run (taken from a retained
 * collection) rebound to the new attempt and padded with one extra string member. Returned with
 * the claim's descriptor, whose attempt must be imported or reconciled before the next claim.
 */
function paddedEnvelope(
  b: Bench,
  template: JsonObject,
  privateKey: Uint8Array,
): { envelope: Buffer; descriptor: CollectorDescriptor } {
  freshSubject(b);
  const out = nextDescriptorFile(b);
  claimInto(b, out);
  const descriptor = decodeCollectorDescriptor(readFileSync(out));
  const binding = withStore(b.store.dataDir, 'read', (store) =>
    checkDescriptorAgainstAuthority(store, descriptor, readTokenFile(b.tokenFile)),
  );
  if (b.identity === null) throw new Error('no runtime identity');
  const request = collectionRequest(descriptor, binding, b.identity);
  const requestBytes = encodeCanonical(request);
  const build = (padding: number): [Buffer, Buffer] => {
    const record = {
      ...template,
      attempt_id: descriptor.attempt.attempt_id,
      generation: descriptor.attempt.fence,
      request_digest: requestDigest(request),
      padding: 'x'.repeat(padding),
    } as unknown as ExecutionRecord & { isolation: JsonObject };
    return [requestBytes, encodeCanonical(record)];
  };
  // Size the padding so that the whole envelope is exactly IMPORT_BYTES.
  let records = build(0);
  let envelope = encodeTransferEnvelope(
    collectionHeader(descriptor, request, records, '0.0.0-bench'),
    records,
    privateKey,
  );
  // The header names the record's length, so its own length moves with the padding: two steps.
  let padding = IMPORT_BYTES - envelope.byteLength - 16;
  if (padding < 0)
    throw new Error(
      `AGENTSCM_BENCH_IMPORT_BYTES=${IMPORT_BYTES} is below the unpadded envelope's ${envelope.byteLength} bytes`,
    );
  records = build(padding);
  envelope = encodeTransferEnvelope(collectionHeader(descriptor, request, records, '0.0.0-bench'), records, privateKey);
  padding += IMPORT_BYTES - envelope.byteLength;
  records = build(padding);
  envelope = encodeTransferEnvelope(collectionHeader(descriptor, request, records, '0.0.0-bench'), records, privateKey);
  if (envelope.byteLength !== IMPORT_BYTES)
    throw new Error(`padded envelope is ${envelope.byteLength} bytes, not ${IMPORT_BYTES}`);
  return { envelope, descriptor };
}

/**
 * Untimed: reconcile the attempt of a claim whose transfer was not imported, through the core of
 * `agent-task call reconcile`. Left active, it is an older subject's unresolved attempt, and the
 * next round's claim of the same Change, profile and step is refused
 * (`TASK_PRIOR_SUBJECT_UNRESOLVED`), as it is for any collector.
 */
function reconcileAttempt(b: Bench, descriptor: CollectorDescriptor): void {
  const d = descriptor;
  const request = {
    version: 1,
    request_id: `bench-reconcile-${d.attempt.attempt_id}`,
    action: 'reconcile',
    task_id: d.task.task_id,
    task_digest: d.task.task_digest,
    attempt_id: d.attempt.attempt_id,
    attempt_digest: d.attempt.attempt_digest,
    execution_operation_id: d.attempt.execution_operation_id,
    agent: { ...ACTOR },
    executor: { ...d.executor },
    fence: d.attempt.fence,
    reason: 'the bench transfer was not imported',
  };
  const answer = callWithTokenFile({
    store: openStore(b.store.dataDir, { mode: 'write' }),
    tokenFile: b.tokenFile,
    operation: 'reconcile',
    input: encodeCanonical(request),
    profile: PROFILE,
    target: 'main',
  }) as JsonObject;
  if (answer.status !== 'reconciled')
    throw new Error(`reconcile of attempt ${d.attempt.attempt_id} answered ${JSON.stringify(answer.status ?? null)}`);
}

/** The verification stage of an import: framing and record digests, the transfer digest, the signature. */
function verifyStage(envelope: Buffer, publicKey: Uint8Array): void {
  const read = readTransferEnvelope(envelope);
  transferDigest(envelope);
  checkTransferSignature(read, publicKey);
}

async function benchImport(root: string): Promise<void> {
  const docker = dockerCli();
  progress(`setting up a second store for the ${IMPORT_LABEL} import`);
  const b = await setUp(join(root, 'import'), docker);
  // One real collection gives the ExecutionRecord of a passing `true` run.
  freshSubject(b);
  const first = nextDescriptorFile(b);
  claimInto(b, first);
  const collected = await collectWithStores(b.store.dataDir, {
    descriptorFile: first,
    keyFile: b.keyFile,
    stateDir: b.stateDir,
    docker,
    dockerSocket: SOCKET,
    tokenFile: b.tokenFile,
    agentscmVersion: '0.0.0-bench',
  });
  // Imported, so its attempt is finished and the first padded round's claim is not refused.
  requireReceipt(collected as unknown as Answer, 'template collection');
  const retained = readTransferEnvelope(readFileSync(collected.envelope_file));
  const template = parseStrictJson(retained.records[1]?.bytes ?? Buffer.alloc(0), { maxBytes: 1 << 20 }) as JsonObject;
  process.stdout.write(
    `a collector's own envelope for a \`true\` run: ${collected.envelope_bytes} bytes (ExecutionRequest ${retained.records[0]?.bytes.byteLength ?? 0}, ExecutionRecord ${retained.records[1]?.bytes.byteLength ?? 0})\n`,
  );
  const key = loadSigningKey(b.keyFile);
  const publicKey = key.publicKey;
  const grant = authorizeTaskToken({
    store: openStore(b.store.dataDir, { mode: 'write' }),
    token: readTokenFile(b.tokenFile),
  });
  // Floor of storing the envelope, no agentscm code: one blob of the same size inserted in a write
  // transaction of a WAL, synchronous=FULL file (the import keeps the original signed bytes).
  const raw = new Database(join(b.dir, 'raw.sqlite'));
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB NOT NULL) STRICT');
  const statement = raw.prepare('INSERT INTO blobs (body) VALUES (?)');
  const insert = raw.transaction((body: Buffer) => statement.run(body));
  const stores: number[] = [];
  const hashes: number[] = [];
  const verifies: number[] = [];
  const imports: number[] = [];
  let refusal: { code: string; message: string } | null = null;
  let reconciled = 0;
  for (let i = 0; i < IMPORT_ROUNDS; i++) {
    progress(`${IMPORT_LABEL} import round ${i + 1}/${IMPORT_ROUNDS}`);
    const { envelope, descriptor } = paddedEnvelope(b, template, key.privateKey);
    hashes.push(timedSync(() => sha256Hex(envelope)));
    verifies.push(timedSync(() => verifyStage(envelope, publicKey)));
    let imported = false;
    if (refusal === null) {
      const start = performance.now();
      try {
        const answer = withStore(b.store.dataDir, 'write', (held) => importCollectorTransfer(held, envelope, grant));
        if (answer.status !== 'imported')
          throw new Error(`${IMPORT_LABEL} import answered ${JSON.stringify(answer.status ?? null)}`);
        imports.push(performance.now() - start);
        imported = true;
      } catch (error) {
        if (!isAgentscmError(error)) throw error;
        refusal = { code: error.code, message: error.message };
      }
    }
    if (!imported) {
      reconcileAttempt(b, descriptor);
      reconciled += 1;
    }
    hashes.push(timedSync(() => sha256Hex(envelope)));
    stores.push(timedSync(() => insert.immediate(envelope)));
  }
  raw.close();
  const hash = median(hashes);
  const verify = median(verifies);
  process.stdout.write(
    `SHA-256 of ${IMPORT_LABEL}, once, in process                            median ${ms(hash).padStart(9)} over ${hashes.length}\n`,
  );
  process.stdout.write(
    `verification stage of a ${IMPORT_LABEL} envelope (framing, signature, record and transfer digests) median ${ms(verify)}   ratio ${(verify / hash).toFixed(2)}x (target <= 3.00x) ${verify / hash <= 3 ? 'OK' : 'ABOVE TARGET'}\n`,
  );
  process.stdout.write(
    `floor: one ${IMPORT_LABEL} blob into SQLite (WAL, synchronous=FULL, one write transaction) median ${ms(median(stores))}   ratio ${(median(stores) / hash).toFixed(2)}x\n`,
  );
  const whole = imports.length === 0 ? null : median(imports);
  if (refusal !== null) {
    process.stdout.write(
      `whole import of the padded ${IMPORT_LABEL} envelope: refused by the authority (${refusal.code}: ${refusal.message}); only the verification stage is measured\n`,
    );
  } else if (whole !== null) {
    process.stdout.write(
      `whole import of a ${IMPORT_LABEL} envelope (verification, record checks, stored with its bytes, receipt) median ${ms(whole)} over ${imports.length}   ratio ${(whole / hash).toFixed(2)}x (target <= 3.00x) ${whole / hash <= 3 ? 'OK' : 'ABOVE TARGET'}\n`,
    );
  }
  process.stdout.write(
    `attempts reconciled after a refused or untried import, untimed: ${reconciled} of ${IMPORT_ROUNDS}\n`,
  );
  process.stdout.write(
    `${JSON.stringify({
      bench: 'collect-import',
      rounds: IMPORT_ROUNDS,
      envelope_bytes: IMPORT_BYTES,
      sha256_ms: hash,
      verify_ms: verify,
      verify_ratio: verify / hash,
      sqlite_floor_ms: median(stores),
      sqlite_floor_ratio: median(stores) / hash,
      import_ms: whole,
      import_ratio: whole === null ? null : whole / hash,
      imports: imports.length,
      refusal: refusal?.code ?? null,
      reconciled,
    })}\n`,
  );
}

export async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`no built CLI at ${CLI}: npm run bench builds it first`);
  const root = mkdtempSync(join(tmpdir(), 'agentscm-bench-collect-'));
  try {
    if (PARTS !== 'import') await benchCycle(root);
    if (PARTS !== 'cycle') await benchImport(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const [one, five, fifteen] = (await import('node:os')).loadavg();
  process.stdout.write(
    `load average: ${(one ?? 0).toFixed(2)} ${(five ?? 0).toFixed(2)} ${(fifteen ?? 0).toFixed(2)} on ${(await import('node:os')).availableParallelism()} cores\n`,
  );
}
