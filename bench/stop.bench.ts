/**
 * Stop hook benchmark (docs/stop-hooks.md "Agent-owned mode"), `npm run bench -- stop`:
 * `agentscm skill-workflow task-stop` end to end — payload on stdin, the workspace and subject
 * read twice, one qualification call to a hub on loopback, the pass — for a qualified subject,
 * against the floor of any CLI run, `agentscm --version` (one Node start with the CLI framework),
 * measured in the same run, alternating, medians. Target: task-stop ≤ 2× the floor. Also printed,
 * for information: a blocking task-stop (an unqualified subject of another world) and the hook
 * in process (guardStop around runTaskStop), where no process start is paid. The last line is one
 * JSON summary.
 *
 * The world is the tests' (test/hooks/task-stop-fixture.ts): a workspace bound by init-repo, a
 * Change with its review context, an installed requirement, an enrolled collector key, a grant,
 * a passing signed transfer imported through the real import path, and a hub in this process.
 * The CLI figures run the built CLI (bin/run.js over dist/, made by `npm run bench`);
 * AGENTSCM_BENCH_BIN names another built entry, and AGENTSCM_BENCH_SOURCES=1 runs the sources
 * instead (bin/dev.js through tsx: a check that the bench works, not a figure to compare with the
 * target). AGENTSCM_BENCH_RUNS (default 9) sets the rounds.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CHANGE_ID, PROFILE, REPOSITORY_ID, claudePayload, makeStopWorld, qualifyWorld, runHook } from '../test/hooks/task-stop-fixture.js';
import type { StopWorld } from '../test/hooks/task-stop-fixture.js';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const SOURCES = process.env.AGENTSCM_BENCH_SOURCES === '1';
const BIN = SOURCES ? join(ROOT, 'bin', 'dev.js') : (process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js'));
const NODE_ARGS = SOURCES ? ['--import', pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href] : [];
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 9);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/**
 * Run the CLI once, asynchronously (the hub answers from this process's event loop); `check`
 * judges its stdout. Returns the wall time in ms.
 */
function cli(args: readonly string[], input: Buffer | null, check: (stdout: string) => boolean): Promise<number> {
  const env = { ...process.env, AGENTSCM_DATA_DIR: undefined };
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_ARGS, BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - start;
      if (code !== 0 || !check(stdout)) reject(new Error(`agentscm ${args.join(' ')} exited ${String(code)}: ${stdout}${stderr}`));
      else resolve(ms);
    });
    child.stdin.end(input ?? undefined);
  });
}

/** A stand-in for node:test's context: the fixture registers its clean-ups with `after`. */
function benchContext(cleanups: (() => unknown)[]): TestContext {
  return { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext;
}

function stopArgs(world: StopWorld): string[] {
  return ['--data-dir', world.dataDir, 'skill-workflow', 'task-stop', CHANGE_ID, '--endpoint', world.url, '--repository', REPOSITORY_ID, '--profile', PROFILE, '--token-file', world.ev.tokenFile, '--workspace', world.workspace];
}

export async function main(): Promise<void> {
  const cleanups: (() => unknown)[] = [];
  try {
    if (!existsSync(BIN)) throw new Error(`${BIN} does not exist: \`npm run bench\` builds it`);
    process.stderr.write('building a qualified world and an unqualified one…\n');
    const qualified = await makeStopWorld(benchContext(cleanups));
    qualifyWorld(qualified);
    const unqualified = await makeStopWorld(benchContext(cleanups));
    const payload = claudePayload('bench');
    const passes = (stdout: string): boolean => stdout === '';
    const blocks = (stdout: string): boolean => stdout.startsWith('{"decision":"block"');
    const inProcess = async (): Promise<number> => {
      const start = performance.now();
      const result = await runHook(qualified, { payload });
      if (result.stdout !== '' || result.exitCode !== 0) throw new Error(`the hook did not pass in process: ${result.stdout}${result.stderr}`);
      return performance.now() - start;
    };
    // One untimed round first: page cache, the JIT, SQLite's first open, the hub's connections.
    await cli(['--version'], null, () => true);
    await cli(stopArgs(qualified), payload, passes);
    await cli(stopArgs(unqualified), payload, blocks);
    await inProcess();
    const floor: number[] = [];
    const pass: number[] = [];
    const block: number[] = [];
    const core: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      floor.push(await cli(['--version'], null, () => true));
      pass.push(await cli(stopArgs(qualified), payload, passes));
      block.push(await cli(stopArgs(unqualified), payload, blocks));
      core.push(await inProcess());
    }
    const f = median(floor);
    const ratio = (values: number[]): number => median(values) / f;
    const line = (name: string, values: number[], target?: number): string =>
      `${name.padEnd(62)} ${median(values).toFixed(1).padStart(8)} ms  ${ratio(values).toFixed(2)}×${target === undefined ? '' : `   target ≤ ${target}×: ${ratio(values) <= target ? 'met' : 'NOT met'}`}\n`;
    process.stdout.write(`task-stop against a hub on loopback; median of ${RUNS} runs; ${SOURCES ? 'SOURCES through tsx (not comparable with the target)' : BIN}\n`);
    process.stdout.write(line('floor: agentscm --version (Node + CLI framework start-up)', floor));
    process.stdout.write(line('agentscm skill-workflow task-stop (qualified: pass)', pass, 2));
    process.stdout.write(line('agentscm skill-workflow task-stop (unqualified: block)', block));
    process.stdout.write(line('  in process: guardStop + runTaskStop (pass)', core));
    const summary = {
      bench: 'stop',
      runs: RUNS,
      entry: SOURCES ? 'sources' : 'built',
      floor_ms: Number(f.toFixed(1)),
      task_stop_pass_ms: Number(median(pass).toFixed(1)),
      task_stop_pass_ratio: Number(ratio(pass).toFixed(2)),
      task_stop_target: 2,
      task_stop_block_ms: Number(median(block).toFixed(1)),
      task_stop_block_ratio: Number(ratio(block).toFixed(2)),
      in_process_ms: Number(median(core).toFixed(1)),
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
