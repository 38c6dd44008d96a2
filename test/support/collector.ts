/**
 * Shared set-up of the command collector tests: a real native store with a workspace whose
 * tree holds a recipe, the live engine (AGENTSCM_TEST_DOCKER_SOCKET, default
 * /var/run/docker.sock, image local/busybox:1) which must answer — the live tests fail, not
 * skip, when it does not — and a CommandStepRequest for a run/step.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { Pool } from 'undici';

import { commandRecipeDigest } from '../../src/contracts/collector/command-recipe.js';
import { openStore, withStore, type Store } from '../../src/tasks/store.js';
import type { CommandStepRequest } from '../../src/workflows/command-step.js';
import { checkpointWorkspace } from '../../src/workspace/checkpoint.js';
import { initRepo } from '../../src/workspace/init.js';
import { tempDir } from '../helpers/tmp.js';
import { openJournal } from './journal.js';

export const DOCKER_SOCKET = process.env.AGENTSCM_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
export const IMAGE = 'local/busybox:1';
/** Any existing executable: it is hashed into the runtime identity, never run. */
export const DOCKER_EXE = '/bin/true';
export const RECIPE_PATH = 'skills/check/runner.json';

export interface RecipeFields {
  argv: string[];
  env?: Record<string, string>;
  workdir?: string;
  timeout_ms?: number;
  limits?: Partial<{
    memory_bytes: number;
    pids: number;
    cpu_millis: number;
    output_bytes: number;
    scratch_bytes: number;
  }>;
  image?: string;
}

/** Recipe bytes with small defaults (keep live tests cheap on 2 shared cores). */
export function recipeBytes(fields: RecipeFields): Buffer {
  return Buffer.from(
    JSON.stringify({
      version: 1,
      image: fields.image ?? IMAGE,
      argv: fields.argv,
      env: fields.env ?? {},
      workdir: fields.workdir ?? '.',
      timeout_ms: fields.timeout_ms ?? 20_000,
      limits: {
        memory_bytes: 64 * 1024 * 1024,
        pids: 64,
        cpu_millis: 1000,
        output_bytes: 64 * 1024,
        scratch_bytes: 1024 * 1024,
        ...fields.limits,
      },
      toolchain: 'busybox-1',
      environment: 'posix-sh-offline',
    }),
  );
}

export interface Repo {
  readonly dataDir: string;
  /** The Store ('write') a step request carries, as the runner's; closed with the repository. */
  readonly store: Store;
  readonly workspace: string;
  readonly repository: string;
  /** Checkpoint the workspace (after writing files) onto a Change; returns its revision. */
  checkpoint(change: string): { revision: string; version: bigint };
  write(path: string, content: string | Buffer, mode?: number): void;
}

/** A native store with one repository whose workspace starts with `files` (removed after the test). */
export function makeRepo(t: TestContext, files: Record<string, string | Buffer>): Repo {
  const repo = makeRepoIn(tempDir(t, 'agentscm-collector-'), files);
  t.after(() => repo.store.close());
  return repo;
}

/** A repository shared by every test of a file: the caller removes `root`. */
export function makeSuiteRepo(files: Record<string, string | Buffer>): Repo & { remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'agentscm-collector-'));
  const repo = makeRepoIn(root, files);
  return {
    ...repo,
    remove: () => {
      repo.store.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function makeRepoIn(root: string, files: Record<string, string | Buffer>): Repo {
  const workspace = join(root, 'ws');
  const dataDir = join(root, 'data');
  mkdirSync(workspace);
  const write = (path: string, content: string | Buffer, mode?: number): void => {
    const full = join(workspace, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content, mode === undefined ? undefined : { mode });
  };
  for (const [path, content] of Object.entries(files)) write(path, content);
  const init = withStore(dataDir, 'write', (store) => initRepo(store, { path: workspace, name: 'demo' }));
  // The workflow runner creates the journal before any command step; so does this fixture.
  openJournal(dataDir, 'create').close();
  return {
    dataDir,
    store: openStore(dataDir, { mode: 'write' }),
    workspace,
    repository: init.repository,
    write,
    checkpoint(change) {
      const result = withStore(dataDir, 'write', (store) => checkpointWorkspace(store, { change, workspace }));
      return { revision: result.revision, version: result.version };
    },
  };
}

/** The request the workflow runner would send for a recipe in the repo's current tree. */
export function stepRequest(
  repo: Repo,
  input: { runId: string; stepId?: string; change: string; recipe: Buffer; signal?: AbortSignal },
): CommandStepRequest {
  repo.write(RECIPE_PATH, input.recipe);
  const { revision, version } = repo.checkpoint(input.change);
  return {
    store: repo.store,
    runId: input.runId,
    stepId: input.stepId ?? 'check',
    repository: repo.repository,
    revision,
    policyEpoch: 0n,
    runner: 'runner.json',
    recipePath: RECIPE_PATH,
    recipeDigest: commandRecipeDigest(input.recipe),
    change: { repository: repo.repository, id: input.change },
    changeVersion: version,
    contextDigest: '0'.repeat(64),
    signal: input.signal ?? new AbortController().signal,
  };
}

/** Fail (never skip) when the live engine or its image is missing. */
export async function requireEngine(): Promise<void> {
  const pool = new Pool('http://localhost', { socketPath: DOCKER_SOCKET });
  try {
    const ping = await pool.request({ path: '/_ping', method: 'GET', headersTimeout: 5000 });
    await ping.body.text();
    const image = await pool.request({
      path: `/images/${encodeURIComponent(IMAGE)}/json`,
      method: 'GET',
      headersTimeout: 5000,
    });
    await image.body.text();
    if (image.statusCode !== 200) throw new Error(`image ${IMAGE} is missing (HTTP ${image.statusCode})`);
  } catch (error) {
    throw new Error(
      `the container engine at ${DOCKER_SOCKET} is not usable (${(error as Error).message}); run \`npm run runtime:start\` as root (or set AGENTSCM_TEST_DOCKER_SOCKET)`,
    );
  } finally {
    await pool.close();
  }
}

/** Raw Engine API GET against the live engine (assertions about what exists there). */
export async function engineGet(path: string): Promise<{ status: number; body: unknown }> {
  const pool = new Pool('http://localhost', { socketPath: DOCKER_SOCKET });
  try {
    const response = await pool.request({ path, method: 'GET', headersTimeout: 10_000 });
    const text = await response.body.text();
    return { status: response.statusCode, body: text.length === 0 ? null : (JSON.parse(text) as unknown) };
  } finally {
    await pool.close();
  }
}

/** Containers (any state) carrying the attempt's custody label. */
export async function containersOf(attemptId: string): Promise<{ Id: string; State: string }[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`io.agentscm.attempt=${attemptId}`] }));
  const { body } = await engineGet(`/containers/json?all=1&filters=${filters}`);
  return body as { Id: string; State: string }[];
}

/** How many containers the engine created for an attempt since `sinceSeconds` (from its event log). */
export async function createEventsOf(attemptId: string, sinceSeconds: number): Promise<number> {
  const until = Math.ceil(Date.now() / 1000) + 1;
  const filters = encodeURIComponent(
    JSON.stringify({ type: ['container'], event: ['create'], label: [`io.agentscm.attempt=${attemptId}`] }),
  );
  const pool = new Pool('http://localhost', { socketPath: DOCKER_SOCKET });
  try {
    const response = await pool.request({
      path: `/events?since=${sinceSeconds}&until=${until}&filters=${filters}`,
      method: 'GET',
      headersTimeout: 10_000,
    });
    const text = await response.body.text();
    return text.split('\n').filter((line) => line.trim().length > 0).length;
  } finally {
    await pool.close();
  }
}
