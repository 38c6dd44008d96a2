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
 * The world is the tests' (test/support/task-stop.ts): a workspace bound by init-repo, a
 * Change with its review context, an installed requirement, an enrolled collector key, a grant,
 * a passing signed transfer imported through the real import path, and a hub in this process.
 * The CLI figures run the built CLI (bin/run.js over dist/, made by `npm run bench`);
 * AGENTSCM_BENCH_BIN names another built entry, and AGENTSCM_BENCH_SOURCES=1 runs the sources
 * instead (bin/dev.js through tsx: a check that the bench works, not a figure to compare with the
 * target). AGENTSCM_BENCH_RUNS (default 9) sets the rounds. AGENTSCM_BENCH_BASELINE_BIN names a
 * second built entry (an older build, say) whose qualified task-stop is timed in the same rounds,
 * alternating with the first, so that two builds compare in one machine state.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import {
  CHANGE_ID,
  claudePayload,
  makeStopWorld,
  PROFILE,
  qualifyWorld,
  REPOSITORY_ID,
  runHook,
  type StopWorld,
} from '../test/support/task-stop.js';
import { floorLine, floorMs, nodeFloor } from './_floor.js';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const SOURCES = process.env.AGENTSCM_BENCH_SOURCES === '1';
const BIN = SOURCES ? join(ROOT, 'bin', 'dev.js') : (process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js'));
const NODE_ARGS = SOURCES
  ? ['--import', pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href]
  : [];
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 9);
const BASELINE = process.env.AGENTSCM_BENCH_BASELINE_BIN;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/**
 * Loaded before the CLI in every timed child: at exit it writes the process's own CPU time
 * (user + system, µs, every thread) to fd 3. Wall time is the target's measure; CPU time does not
 * grow with the machine's load, so it compares runs taken on a busy machine.
 */
const CPU_PROBE = `data:text/javascript,${encodeURIComponent('import{writeSync}from"node:fs";process.on("exit",()=>{const u=process.cpuUsage();try{writeSync(3,String(u.user+u.system))}catch{}});')}`;

interface Timing {
  /** Wall time of the whole process, ms. */
  readonly wall: number;
  /** CPU time the process used, ms. */
  readonly cpu: number;
}

/**
 * Run the CLI once, asynchronously (the hub answers from this process's event loop); `check`
 * judges its stdout. Returns its wall and CPU time.
 */
function cli(
  args: readonly string[],
  input: Buffer | null,
  check: (stdout: string) => boolean,
  bin: string = BIN,
): Promise<Timing> {
  const env = { ...process.env, AGENTSCM_DATA_DIR: undefined };
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(bin === BIN ? NODE_ARGS : []), '--import', CPU_PROBE, bin, ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let cpu = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (cpu += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = performance.now() - start;
      if (code !== 0 || !check(stdout) || !/^[0-9]+$/.test(cpu))
        reject(new Error(`agentscm ${args.join(' ')} exited ${String(code)}: ${stdout}${stderr}`));
      else resolve({ wall, cpu: Number(cpu) / 1000 });
    });
    child.stdin.end(input ?? undefined);
  });
}

/** A stand-in for node:test's context: the fixture registers its clean-ups with `after`. */
function benchContext(cleanups: (() => unknown)[]): TestContext {
  return { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext;
}

function stopArgs(world: StopWorld): string[] {
  return [
    '--data-dir',
    world.dataDir,
    'skill-workflow',
    'task-stop',
    CHANGE_ID,
    '--endpoint',
    world.url,
    '--repository',
    REPOSITORY_ID,
    '--profile',
    PROFILE,
    '--token-file',
    world.ev.tokenFile,
    '--workspace',
    world.workspace,
  ];
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
      if (result.stdout !== '' || result.exitCode !== 0)
        throw new Error(`the hook did not pass in process: ${result.stdout}${result.stderr}`);
      return performance.now() - start;
    };
    // One untimed round first: page cache, the JIT, SQLite's first open, the hub's connections.
    await cli(['--version'], null, () => true);
    await cli(stopArgs(qualified), payload, passes);
    await cli(stopArgs(unqualified), payload, blocks);
    await inProcess();
    if (BASELINE !== undefined) await cli(stopArgs(qualified), payload, passes, BASELINE);
    const baseline: Timing[] = [];
    const floor: Timing[] = [];
    const bare: number[] = [];
    const pass: Timing[] = [];
    const block: Timing[] = [];
    const core: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      floor.push(await cli(['--version'], null, () => true));
      bare.push(await nodeFloor());
      pass.push(await cli(stopArgs(qualified), payload, passes));
      block.push(await cli(stopArgs(unqualified), payload, blocks));
      core.push(await inProcess());
      if (BASELINE !== undefined) baseline.push(await cli(stopArgs(qualified), payload, passes, BASELINE));
    }
    const wall = (values: Timing[]): number[] => values.map((v) => v.wall);
    const cpu = (values: Timing[]): number[] => values.map((v) => v.cpu);
    const f = median(wall(floor));
    const fCpu = median(cpu(floor));
    const ratio = (values: number[], of = f): number => median(values) / of;
    const line = (name: string, values: number[], target?: number, of = f): string =>
      `${name.padEnd(62)} ${median(values).toFixed(1).padStart(8)} ms  ${ratio(values, of).toFixed(2)}×${target === undefined ? '' : `   target ≤ ${target}×: ${ratio(values, of) <= target ? 'met' : 'NOT met'}`}\n`;
    process.stdout.write(
      `task-stop against a hub on loopback; median of ${RUNS} runs; ${SOURCES ? 'SOURCES through tsx (not comparable with the target)' : BIN}\n`,
    );
    process.stdout.write('wall time:\n');
    process.stdout.write(line('floor: agentscm --version (Node + CLI framework start-up)', wall(floor)));
    process.stdout.write(floorLine(bare, { name: 'task-stop (pass)', ms: median(wall(pass)) }));
    process.stdout.write(line('agentscm skill-workflow task-stop (qualified: pass)', wall(pass), 2));
    process.stdout.write(line('agentscm skill-workflow task-stop (unqualified: block)', wall(block)));
    process.stdout.write(line('  in process: guardStop + runTaskStop (pass)', core));
    if (BASELINE !== undefined)
      process.stdout.write(line(`baseline build: task-stop (pass), ${BASELINE}`, wall(baseline)));
    process.stdout.write("CPU time of the process (user + system; does not grow with the machine's load):\n");
    process.stdout.write(line('floor: agentscm --version', cpu(floor), undefined, fCpu));
    process.stdout.write(line('agentscm skill-workflow task-stop (qualified: pass)', cpu(pass), undefined, fCpu));
    process.stdout.write(line('agentscm skill-workflow task-stop (unqualified: block)', cpu(block), undefined, fCpu));
    if (BASELINE !== undefined)
      process.stdout.write(line('baseline build: task-stop (pass)', cpu(baseline), undefined, fCpu));
    const figures = (name: string, values: Timing[]): Record<string, number> => ({
      [`${name}_ms`]: Number(median(wall(values)).toFixed(1)),
      [`${name}_ratio`]: Number(ratio(wall(values)).toFixed(2)),
      [`${name}_cpu_ms`]: Number(median(cpu(values)).toFixed(1)),
      [`${name}_cpu_ratio`]: Number(ratio(cpu(values), fCpu).toFixed(2)),
    });
    const summary = {
      bench: 'stop',
      runs: RUNS,
      entry: SOURCES ? 'sources' : 'built',
      floor_ms: Number(f.toFixed(1)),
      node_floor_ms: floorMs(bare),
      floor_cpu_ms: Number(fCpu.toFixed(1)),
      ...figures('task_stop_pass', pass),
      task_stop_target: 2,
      ...figures('task_stop_block', block),
      in_process_ms: Number(median(core).toFixed(1)),
      ...(BASELINE === undefined ? {} : figures('baseline_pass', baseline)),
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
