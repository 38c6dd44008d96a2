/**
 * Command collector benchmark (issue 4 "Benchmark"): one `true` command step through the
 * collector (durable attempt, snapshot, Engine API create/attach/start/wait/inspect/remove,
 * confirmed cleanup, record) against `docker run --rm --network none IMAGE true` in the same
 * run, alternating, median ratio (target ≤ 1.3×); and snapshot materialization of a revision
 * with 1,000 files against `cp -r` of the same tree.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { createCommandStepRuntime } from '../src/collector/command-step-runtime.js';
import { materializeSnapshot, removeSnapshot } from '../src/collector/snapshot.js';
import { commandRecipeDigest } from '../src/contracts/collector/command-recipe.js';
import { sha256Hex } from '../src/crypto/sha256.js';
import { openAuthority } from '../src/native/store.js';
import { openStore, withStore } from '../src/tasks/store.js';
import { checkpointWorkspace } from '../src/workspace/checkpoint.js';
import { initRepo } from '../src/workspace/init.js';

const run = promisify(execFile);
const SOCKET = process.env.AGENTSCM_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
const IMAGE = 'local/busybox:1';
const ROUNDS = Number(process.env.AGENTSCM_BENCH_ROUNDS ?? 15);

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

function dockerCli(): string {
  for (const candidate of ['/usr/bin/docker', '/usr/local/bin/docker']) if (existsSync(candidate)) return candidate;
  throw new Error('no docker CLI for the baseline (install docker.io: npm run runtime:start)');
}

function setUp(
  root: string,
  files: Record<string, string>,
): { dataDir: string; workspace: string; repository: string } {
  const workspace = join(root, 'ws');
  const dataDir = join(root, 'data');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(workspace, path, '..'), { recursive: true });
    writeFileSync(join(workspace, path), content);
  }
  const init = withStore(dataDir, 'write', (store) => initRepo(store, { path: workspace, name: 'bench' }));
  withStore(dataDir, 'write', (store) => store.journal(true));
  return { dataDir, workspace, repository: init.repository };
}

async function benchTrueStep(root: string): Promise<void> {
  const recipe = Buffer.from(
    JSON.stringify({
      version: 1,
      image: IMAGE,
      argv: ['/bin/true'],
      env: {},
      workdir: '.',
      timeout_ms: 60_000,
      limits: {
        memory_bytes: 64 * 1024 * 1024,
        pids: 64,
        cpu_millis: 1000,
        output_bytes: 65536,
        scratch_bytes: 1048576,
      },
      toolchain: 'busybox-1',
      environment: 'posix-sh-offline',
    }),
  );
  const repo = setUp(join(root, 'step'), { 'skills/check/runner.json': recipe.toString(), 'README.md': 'bench\n' });
  const checkpoint = withStore(repo.dataDir, 'write', (store) =>
    checkpointWorkspace(store, { change: 'bench', workspace: repo.workspace }),
  );
  const runtime = await createCommandStepRuntime({ docker: '/bin/true', dockerSocket: SOCKET });
  const docker = dockerCli();
  let n = 0;
  const step = async (): Promise<void> => {
    n += 1;
    const store = openStore(repo.dataDir, { mode: 'write' });
    const result = await runtime
      .run({
        store,
        runId: `bench-${n}`,
        stepId: 'check',
        repository: repo.repository,
        revision: checkpoint.revision,
        policyEpoch: 0n,
        runner: 'runner.json',
        recipePath: 'skills/check/runner.json',
        recipeDigest: commandRecipeDigest(recipe),
        change: { repository: repo.repository, id: 'bench' },
        changeVersion: checkpoint.version,
        contextDigest: '0'.repeat(64),
        signal: new AbortController().signal,
      })
      .finally(() => store.close());
    if (result.state !== 'succeeded') throw new Error(`bench step ended ${result.state}: ${result.summary}`);
  };
  const baseline = async (): Promise<void> => {
    await run(docker, ['run', '--rm', '--network', 'none', IMAGE, 'true'], {
      env: { ...process.env, DOCKER_HOST: `unix://${SOCKET}` },
    });
  };
  try {
    await step();
    await baseline();
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate the order so drift on a shared machine hits both sides alike.
      if (i % 2 === 0) {
        ours.push(await timed(step));
        theirs.push(await timed(baseline));
      } else {
        theirs.push(await timed(baseline));
        ours.push(await timed(step));
      }
    }
    const a = median(ours);
    const b = median(theirs);
    process.stdout.write(
      `true command step (agentscm collector)            median ${a.toFixed(1)} ms over ${ROUNDS}\n`,
    );
    process.stdout.write(`docker run --rm --network none ${IMAGE} true  median ${b.toFixed(1)} ms over ${ROUNDS}\n`);
    process.stdout.write(`ratio agentscm / docker run: ${(a / b).toFixed(2)}x (target <= 1.30x)\n`);
  } finally {
    await runtime.close();
  }
}

async function benchSnapshot(root: string): Promise<void> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 1000; i++) files[`d${i % 20}/sub${i % 7}/file-${i}.txt`] = `file ${i}\n${'x'.repeat(i % 2048)}\n`;
  const repo = setUp(join(root, 'snap'), files);
  const checkpoint = withStore(repo.dataDir, 'write', (store) =>
    checkpointWorkspace(store, { change: 'snap', workspace: repo.workspace }),
  );
  const parent = join(root, 'snapshots');
  mkdirSync(parent, { mode: 0o700 });
  const auth = openAuthority(repo.dataDir, { mode: 'read' });
  const ours: number[] = [];
  const copy: number[] = [];
  try {
    for (let i = 0; i < 7; i++) {
      const digest = sha256Hex(`snapshot-${i}`);
      // Flush the file system first (this disk discards on delete): each side starts quiet.
      await run('sync');
      ours.push(
        await timed(() =>
          Promise.resolve(
            materializeSnapshot(auth, { repository: repo.repository, revision: checkpoint.revision, parent, digest }),
          ),
        ),
      );
      removeSnapshot(join(parent, digest));
      const target = join(root, `copy-${i}`);
      await run('sync');
      copy.push(await timed(() => run('cp', ['-r', repo.workspace, target])));
      rmSync(target, { recursive: true, force: true });
    }
  } finally {
    auth.close();
  }
  process.stdout.write(
    `snapshot materialization, 1,000 files            median ${median(ours).toFixed(1)} ms over 7\n`,
  );
  process.stdout.write(
    `cp -r of the same workspace (baseline)           median ${median(copy).toFixed(1)} ms over 7\n`,
  );
  process.stdout.write(`ratio snapshot / cp -r: ${(median(ours) / median(copy)).toFixed(2)}x\n`);
}

export async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'agentscm-bench-command-'));
  try {
    await benchTrueStep(root);
    await benchSnapshot(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
