/**
 * `checkpoint --from-git` benchmark (docs/git.md "Checkpointing a git commit"): a generated commit of 10,000 files
 * (100 directories of 100 files of about 1 KB), packed as a clone would be, recorded as a Change version by the
 * built CLI, against `git read-tree` + `git ls-files -s` of the same commit (into a private index file) in the same
 * run. Target: ≤ 2× the git baseline. The first checkpoint reads and stores every blob ("cold"); the same commit
 * again finds every blob remembered ("warm"); "incremental" is the realistic case — the next commit of the branch,
 * one file changed, so one blob is read (medians of RUNS). `node -e 0` is printed as the floor.
 *
 * Uses the built CLI (bin/run.js; `npm run bench` builds first); AGENTSCM_BENCH_BIN points at another entry
 * script (bin/dev.js through tsx). AGENTSCM_BENCH_FILES and AGENTSCM_BENCH_RUNS shrink the run for a quick check.
 * Ends with one JSON summary line.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = resolve(process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js'));
const FILES = Number(process.env.AGENTSCM_BENCH_FILES ?? 10_000);
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 5);
const LOADER = BIN.endsWith('dev.js')
  ? ['--import', pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href]
  : [];
const PER_DIR = 100;
const TARGET = 2;

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};

/** Seconds `command args` took; throws when it fails. */
function timed(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = GIT_ENV): number {
  const start = performance.now();
  const result = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 << 20 });
  const seconds = (performance.now() - start) / 1000;
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return seconds;
}

function git(cwd: string, args: readonly string[]): void {
  timed('git', args, cwd);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** A git repository holding one commit of FILES files, packed. */
function makeCommit(dir: string): void {
  mkdirSync(dir);
  git(dir, ['init', '--quiet', '-b', 'main']);
  for (let d = 0; d * PER_DIR < FILES; d++) {
    const sub = join(dir, `dir${String(d).padStart(4, '0')}`);
    mkdirSync(sub);
    for (let f = 0; f < PER_DIR && d * PER_DIR + f < FILES; f++)
      writeFileSync(join(sub, `file${f}.txt`), `${`line ${d}/${f} `.repeat(64)}\n`);
  }
  git(dir, ['add', '-A']);
  git(dir, ['commit', '--quiet', '-m', 'bench tree']);
  git(dir, ['repack', '-a', '-d', '-q']);
  git(dir, ['prune-packed']);
}

export function main(): Promise<void> {
  run();
  return Promise.resolve();
}

function run(): void {
  const root = mkdtempSync(join(tmpdir(), 'agentscm-bench-git-checkpoint-'));
  try {
    const repo = join(root, 'repo');
    makeCommit(repo);
    const ws = join(root, 'ws');
    mkdirSync(ws);
    git(ws, ['init', '--quiet', '-b', 'main']);
    writeFileSync(join(ws, 'README'), 'bench\n');
    const data = join(root, 'data');
    const cli = (args: readonly string[]): number =>
      timed(process.execPath, [...LOADER, BIN, '--data-dir', data, ...args], root, process.env);
    cli(['init-repo', ws, '--name', 'bench', '--no-instructions']);
    const fromGit = (change: string): number =>
      cli(['checkpoint', '--workspace', ws, '--change', change, '--from-git', 'HEAD', '--git-repo', repo, '--json']);

    const index = join(root, 'bench.index');
    const gitEnv = { ...GIT_ENV, GIT_INDEX_FILE: index };
    const baseline = (): number => {
      rmSync(index, { force: true });
      return timed('git', ['read-tree', 'HEAD'], repo, gitEnv) + timed('git', ['ls-files', '-s'], repo, gitEnv);
    };
    const floor = median(Array.from({ length: RUNS }, () => timed(process.execPath, ['-e', '0'], root)));
    const gitTimes: number[] = [baseline()];
    const cold = fromGit('cold');
    const warm: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      gitTimes.push(baseline());
      warm.push(fromGit(`warm${i}`));
    }
    const incremental: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      writeFileSync(join(repo, 'dir0000', 'file0.txt'), `changed ${i}\n`);
      git(repo, ['commit', '--quiet', '-am', `change ${i}`]);
      gitTimes.push(baseline());
      incremental.push(fromGit('incremental'));
    }
    const gitMedian = median(gitTimes);
    const warmMedian = median(warm);
    const incrementalMedian = median(incremental);
    const line = (label: string, seconds: number): void => {
      process.stdout.write(
        `${label.padEnd(44)} ${seconds.toFixed(3).padStart(8)} s  ${(seconds / gitMedian).toFixed(2).padStart(6)}× git\n`,
      );
    };
    process.stdout.write(`${FILES} files in one packed commit; ${RUNS} runs each (medians)\n`);
    line('git read-tree + git ls-files -s (baseline)', gitMedian);
    line('checkpoint --from-git, cold (stores blobs)', cold);
    line('checkpoint --from-git, warm (same commit)', warmMedian);
    line('checkpoint --from-git, incremental (1 file)', incrementalMedian);
    line('node -e 0 (floor)', floor);
    const ratio = incrementalMedian / gitMedian;
    process.stdout.write(
      `incremental / git: ${ratio.toFixed(2)}× (target ≤ ${TARGET}×: ${ratio <= TARGET ? 'met' : 'NOT met'}); ` +
        `floor / git: ${(floor / gitMedian).toFixed(2)}×\n`,
    );
    process.stdout.write(
      `${JSON.stringify({
        bench: 'git-checkpoint',
        files: FILES,
        git_s: gitMedian,
        cold_s: cold,
        warm_s: warmMedian,
        incremental_s: incrementalMedian,
        floor_s: floor,
        incremental_ratio: ratio,
        warm_ratio: warmMedian / gitMedian,
        cold_ratio: cold / gitMedian,
        target: TARGET,
      })}\n`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
