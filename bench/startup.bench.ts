/**
 * Start-up benchmark (issue 30), `npm run bench -- startup`: five commands of the built CLI, each a
 * process start as an agent meets it, against the floor of any Node CLI, `node -e 0`, measured in
 * the same run, interleaved (one of each per round), medians:
 *
 * - `agentscm --version`                                    target ≤ 1.3×
 * - `agentscm status` of a 3-file workspace                 target ≤ 1.6×
 * - `agentscm skill-workflow task-stop`, a pass              target ≤ 2×
 * - `agentscm qualification` of 32 imported command tasks   target ≤ 2.2×
 * - `agentscm agent-task call next`                          target ≤ 1.8×
 *
 * and the peak resident set of `--version` beside `node -e 0`'s (getrusage of the child). The
 * fixtures are the other benches': the qualified Stop world of bench/stop.bench.ts (its hub on
 * loopback in this process) for task-stop and call next, the 32-task receipt of
 * bench/admission.bench.ts for qualification, and a workspace bound by init-repo for status.
 * Also printed: CPU time of each process (user + system), which grows less with the machine's load.
 * AGENTSCM_BENCH_RUNS (default 11) sets the rounds; AGENTSCM_BENCH_BIN names another built entry.
 * The last line is one JSON summary.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

import { makeWideReceipt } from '../test/support/receipts.js';
import {
  CHANGE_ID,
  claudePayload,
  makeStopWorld,
  PROFILE,
  qualifyWorld,
  REPOSITORY_ID,
  type StopWorld,
} from '../test/support/task-stop.js';
import { CHANGE_ID as WIDE_CHANGE_ID } from '../test/support/tasks.js';
import { median, timedNode, type ChildTiming } from './_spawn.js';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const BIN = process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js');
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 11);

interface Case {
  readonly name: string;
  readonly key: string;
  readonly target?: number;
  readonly args: readonly string[];
  readonly input?: Buffer;
  readonly cwd?: string;
  readonly check?: (result: { code: number | null; stdout: string; stderr: string }) => boolean;
}

/** A stand-in for node:test's context: the fixtures register their clean-ups with `after`. */
function benchContext(cleanups: (() => unknown)[]): TestContext {
  return { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext;
}

/** A workspace of three files bound by init-repo (untimed), for `status`. */
function statusWorkspace(dir: string): string {
  const ws = join(dir, 'ws');
  mkdirSync(ws, { recursive: true });
  for (const name of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(ws, name), `${name}\n`);
  const init = spawnSync(process.execPath, [BIN, '--data-dir', join(dir, 'data'), 'init-repo', ws, '--name', 'w'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (init.status !== 0) throw new Error(`init-repo failed: ${init.stderr.toString()}`);
  return ws;
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
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-bench-startup-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  try {
    if (!existsSync(BIN)) throw new Error(`${BIN} does not exist: \`npm run bench\` builds it`);
    process.stderr.write('building a 3-file workspace, a qualified Stop world and a 32-task receipt…\n');
    const ws = statusWorkspace(join(dir, 'status'));
    const world = await makeStopWorld(benchContext(cleanups));
    qualifyWorld(world);
    const wide = makeWideReceipt(join(dir, 'wide'), 32);
    const env = { ...process.env, AGENTSCM_DATA_DIR: undefined };
    const cases: Case[] = [
      { name: 'node -e 0 (the floor)', key: 'floor', args: ['-e', '0'] },
      {
        name: 'agentscm --version',
        key: 'version',
        target: 1.3,
        args: [BIN, '--version'],
        check: (r) => r.code === 0 && /^agentscm\/[0-9]/.test(r.stdout),
      },
      {
        name: 'agentscm status (3-file workspace)',
        key: 'status',
        target: 1.6,
        args: [BIN, 'status'],
        cwd: ws,
        check: (r) => r.code === 0 && /clean/.test(r.stdout),
      },
      {
        name: 'agentscm skill-workflow task-stop (pass)',
        key: 'task_stop',
        target: 2,
        args: [BIN, ...stopArgs(world)],
        input: claudePayload('bench-startup'),
        check: (r) => r.code === 0 && r.stdout === '',
      },
      {
        name: 'agentscm qualification (32 tasks)',
        key: 'qualification',
        target: 2.2,
        args: [BIN, '--data-dir', wide.dataDir, 'qualification', '--change', WIDE_CHANGE_ID],
        check: (r) => r.code === 0,
      },
      {
        name: 'agentscm agent-task call next',
        key: 'call_next',
        target: 1.8,
        args: [
          BIN,
          '--data-dir',
          world.dataDir,
          'agent-task',
          'call',
          'next',
          '--token-file',
          world.ev.tokenFile,
          '--change',
          CHANGE_ID,
          '--profile',
          PROFILE,
          '--json',
        ],
        check: (r) => r.code === 0 && r.stdout.startsWith('{'),
      },
    ];
    const once = (c: Case): Promise<ChildTiming> =>
      timedNode({
        args: c.args,
        env,
        ...(c.input === undefined ? {} : { input: c.input }),
        ...(c.cwd === undefined ? {} : { cwd: c.cwd }),
        ...(c.check === undefined ? {} : { check: c.check }),
      });
    // One untimed round: page cache, SQLite's first opens, the hub's connections.
    for (const c of cases) await once(c);
    const timings = new Map<string, ChildTiming[]>(cases.map((c) => [c.key, []]));
    for (let run = 0; run < RUNS; run++) for (const c of cases) timings.get(c.key)?.push(await once(c));
    const of = (key: string, pick: (t: ChildTiming) => number): number => median((timings.get(key) ?? []).map(pick));
    const floor = of('floor', (t) => t.wall);
    const floorCpu = of('floor', (t) => t.cpu);
    process.stdout.write(`start-up of the built CLI (${BIN}); median of ${RUNS} interleaved rounds\n`);
    process.stdout.write(`${'command'.padEnd(44)} ${'wall ms'.padStart(8)}  ratio   target        cpu ms  ratio\n`);
    const summary: Record<string, unknown> = { bench: 'startup', runs: RUNS };
    let met = true;
    for (const c of cases) {
      const wall = of(c.key, (t) => t.wall);
      const cpu = of(c.key, (t) => t.cpu);
      const ratio = wall / floor;
      const ok = c.target === undefined || ratio <= c.target;
      met &&= ok;
      const target = c.target === undefined ? '' : `≤ ${c.target}× ${ok ? 'met' : 'NOT met'}`;
      process.stdout.write(
        `${c.name.padEnd(44)} ${wall.toFixed(1).padStart(8)}  ${ratio.toFixed(2)}×  ${target.padEnd(13)} ` +
          `${cpu.toFixed(1).padStart(6)}  ${(cpu / floorCpu).toFixed(2)}×\n`,
      );
      summary[`${c.key}_ms`] = Number(wall.toFixed(1));
      summary[`${c.key}_ratio`] = Number(ratio.toFixed(2));
      if (c.target !== undefined) summary[`${c.key}_target`] = c.target;
    }
    const rss = (key: string): number => Math.max(...(timings.get(key) ?? []).map((t) => t.maxRssKiB));
    process.stdout.write(
      `peak RSS: agentscm --version ${(rss('version') / 1024).toFixed(1)} MiB, ` +
        `node -e 0 ${(rss('floor') / 1024).toFixed(1)} MiB (largest of the rounds)\n`,
    );
    summary.version_peak_rss_kib = rss('version');
    summary.floor_peak_rss_kib = rss('floor');
    summary.targets_met = met;
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
