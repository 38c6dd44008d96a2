/**
 * Observed-run benchmark (docs/agent-state.md "Performance"): `agent-state run -- true` in a
 * committed repository of 10,000 files against `git status --porcelain` twice plus `true`, in
 * the same run. Target: the observed run (runObserved, the function the CLI and a hub call)
 * ≤ 2× the baseline. Also printed, for information: the same run through the built CLI (Node
 * start-up included), and a writer run with one declared scope (lease, scope snapshot and the
 * metadata guard over the other 10,000 paths).
 *
 * AGENTSCM_BENCH_FILES and AGENTSCM_BENCH_RUNS shrink it for a quick check; AGENTSCM_BENCH_BIN
 * names another CLI entry script (default bin/run.js, built by `npm run bench`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runObserved } from '../src/agent-state/run.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js');
const FILES = Number(process.env.AGENTSCM_BENCH_FILES ?? 10_000);
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 15);
const PER_DIR = 100;
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};

function check(command: string, args: readonly string[], cwd: string): void {
  const result = spawnSync(command, args, {
    cwd,
    env: GIT_ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
}

function makeRepository(): string {
  const repo = mkdtempSync(join(tmpdir(), 'agentscm-bench-agent-state-'));
  for (let i = 0; i < FILES; i++) {
    const dir = join(repo, `d${Math.floor(i / PER_DIR)}`);
    if (i % PER_DIR === 0) mkdirSync(dir);
    writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`);
  }
  mkdirSync(join(repo, 'work'));
  writeFileSync(join(repo, 'work', 'keep.txt'), 'keep\n');
  check('git', ['init', '-q', '-b', 'main'], repo);
  // No background gc --auto after the commit of 10,000 loose objects: it would race the runs and the clean-up.
  check('git', ['config', 'gc.auto', '0'], repo);
  check('git', ['add', '-A'], repo);
  check('git', ['commit', '-q', '-m', 'bench'], repo);
  check('git', ['status', '--porcelain'], repo); // refresh the index once, as a working tree in use has it
  return repo;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function time(fn: () => unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function baseline(repo: string): void {
  check('git', ['status', '--porcelain'], repo);
  check('git', ['status', '--porcelain'], repo);
  check('true', [], repo);
}

async function observed(repo: string, scopes: { path: string; access: 'write' }[]): Promise<void> {
  const report = await runObserved({
    agent_id: 'bench',
    backend: 'subprocess',
    task_id: null,
    scopes,
    command: 'true',
    args: [],
    cwd: repo,
    stdout: 'stderr',
  });
  if (report.state.state !== 'completed')
    throw new Error(`the observed run is ${report.state.state}: ${report.state.result?.summary ?? ''}`);
}

export async function main(): Promise<void> {
  const repo = makeRepository();
  try {
    const base: number[] = [];
    const core: number[] = [];
    const writer: number[] = [];
    const cli: number[] = [];
    const startUp: number[] = [];
    // The CLI figure needs a built CLI that runs (`npm run bench` builds it first).
    let haveCli = existsSync(BIN);
    if (haveCli) {
      try {
        check(process.execPath, [BIN, 'agent-state', 'run', '--agent', 'bench', '--', 'true'], repo);
      } catch {
        haveCli = false;
      }
    }
    // One untimed round first: page cache, git's index, the JIT.
    baseline(repo);
    await observed(repo, []);
    for (let run = 0; run < RUNS; run++) {
      base.push(await time(() => baseline(repo)));
      core.push(await time(() => observed(repo, [])));
      writer.push(await time(() => observed(repo, [{ path: 'work', access: 'write' }])));
      if (haveCli) {
        cli.push(
          await time(() =>
            check(process.execPath, [BIN, 'agent-state', 'run', '--agent', 'bench', '--', 'true'], repo),
          ),
        );
        startUp.push(await time(() => check(process.execPath, [BIN, '--version'], repo)));
      }
    }
    const b = median(base);
    const line = (name: string, values: number[]): string =>
      `${name.padEnd(58)} ${median(values).toFixed(1).padStart(8)} ms  ${(median(values) / b).toFixed(2)}×`;
    process.stdout.write(`repository: ${FILES} committed files; median of ${RUNS} runs\n`);
    process.stdout.write(
      `${'baseline: git status --porcelain ×2 + true'.padEnd(58)} ${b.toFixed(1).padStart(8)} ms  1.00×\n`,
    );
    process.stdout.write(
      `${line('agent-state run -- true (runObserved)', core)}   target ≤ 2×: ${median(core) / b <= 2 ? 'met' : 'NOT met'}\n`,
    );
    process.stdout.write(`${line('agent-state run --scope work:write -- true (runObserved)', writer)}\n`);
    if (haveCli) {
      // The floor of any CLI run: one process start of Node with the CLI framework (`--version`).
      // Where it alone passes 2x the baseline, the CLI figure is kept as a ratio to the floor.
      const floor = median(startUp);
      process.stdout.write(`${line('agentscm agent-state run -- true (built CLI, Node start-up)', cli)}\n`);
      process.stdout.write(`${line('floor: agentscm --version (Node + CLI framework start-up)', startUp)}\n`);
      process.stdout.write(
        `${'CLI run minus the floor, against the baseline'.padEnd(58)} ${(median(cli) - floor).toFixed(1).padStart(8)} ms  ${((median(cli) - floor) / b).toFixed(2)}×   target ≤ 2×: ${(median(cli) - floor) / b <= 2 ? 'met' : 'NOT met'}\n`,
      );
    } else
      process.stdout.write(`(${BIN} did not run agent-state run: the CLI figure needs a current \`npm run build\`)\n`);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
