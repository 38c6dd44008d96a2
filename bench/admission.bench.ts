/**
 * Admission benchmark (issue "Admission", "Benchmark"), `npm run bench -- admission`:
 *
 * (a) `agentscm qualification --change ID` on a subject of 32 required command tasks with 32
 *     imported transfers and their receipt (target ≤ 2× the floor);
 * (b) `agentscm receipt verify BUNDLE` of that receipt's bundle, 32 transfers and 32
 *     registrations (target ≤ 3× the floor);
 *
 * each against the floor of any CLI run, `agentscm --version` (one Node start with the CLI
 * framework), measured in the same run, alternating, medians. The subject is built through the
 * real cores (enroll, profile install, claim, signed transfer, import; test/support/receipts.ts).
 * Also printed, for information: the same two operations in process (qualify, verifyReceiptBundle),
 * where no process start is paid. The last line is one JSON summary.
 *
 * The CLI figures run the built CLI (bin/run.js over dist/, made by `npm run bench`);
 * AGENTSCM_BENCH_BIN names another built entry, and AGENTSCM_BENCH_SOURCES=1 runs the sources
 * instead (bin/dev.js through tsx, which loads far more: a check that the bench works, not a
 * figure to compare with the targets). AGENTSCM_BENCH_RUNS (default 9) sets the rounds.
 * AGENTSCM_BENCH_BASELINE_BIN names a second built entry (say, a build of an earlier commit in a
 * copy of the repository) whose qualification and receipt verify are timed in the same rounds,
 * for a before/after comparison measured under the same load.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { qualifyLocal } from '../src/tasks/admission/qualification-local.js';
import { verifyReceiptBundle } from '../src/tasks/admission/receipt-bundle-verify.js';
import { exportReceiptBundle } from '../src/tasks/admission/receipt-bundle.js';
import { withStore } from '../src/tasks/store.js';
import { makeWideReceipt } from '../test/support/receipts.js';
import { CHANGE_ID } from '../test/support/tasks.js';
import { floorLine, floorMs, nodeFloorSync } from './_floor.js';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const SOURCES = process.env.AGENTSCM_BENCH_SOURCES === '1';
const BIN = SOURCES ? join(ROOT, 'bin', 'dev.js') : (process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js'));
const NODE_ARGS = SOURCES
  ? ['--import', pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href]
  : [];
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 9);
const BASELINE_BIN = process.env.AGENTSCM_BENCH_BASELINE_BIN;
const TASKS = 32;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Run the CLI once; `expect` is its exit status. Returns the wall time in ms. */
function cli(args: readonly string[], expect = 0, bin = BIN): number {
  const env = { ...process.env, AGENTSCM_DATA_DIR: undefined };
  const start = performance.now();
  const result = spawnSync(process.execPath, [...(bin === BIN ? NODE_ARGS : []), bin, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ms = performance.now() - start;
  if (result.status !== expect)
    throw new Error(`agentscm ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return ms;
}

function timeInProcess(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

export function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-bench-admission-'));
  try {
    process.stderr.write(`building a subject of ${TASKS} imported command tasks…\n`);
    const wide = makeWideReceipt(dir, TASKS);
    const bundleFile = join(dir, 'receipt.agscmrb');
    const exported = withStore(wide.dataDir, 'read', (s) => exportReceiptBundle(s, wide.receiptDigest, bundleFile));
    const bundle = readFileSync(bundleFile);
    const qualify = (): void => {
      const answer = withStore(wide.dataDir, 'read', (store) =>
        qualifyLocal(store, { profile: 'default', target: 'main', change: CHANGE_ID }),
      );
      if (!answer.qualified || answer.receipt_digest !== wide.receiptDigest)
        throw new Error('the subject does not qualify with its receipt');
    };
    const verify = (): void => {
      if (verifyReceiptBundle(bundle).transfers.length !== TASKS)
        throw new Error('the bundle does not verify 32 transfers');
    };
    const qualificationArgs = ['--data-dir', wide.dataDir, 'qualification', '--change', CHANGE_ID];
    const verifyArgs = ['receipt', 'verify', bundleFile, '--allow-unpinned'];
    if (!existsSync(BIN)) throw new Error(`${BIN} does not exist: \`npm run bench\` builds it`);
    if (BASELINE_BIN !== undefined && !existsSync(BASELINE_BIN))
      throw new Error(`AGENTSCM_BENCH_BASELINE_BIN ${BASELINE_BIN} does not exist`);
    // One untimed round first: page cache, the JIT, SQLite's first open.
    qualify();
    verify();
    cli(['--version']);
    cli(qualificationArgs);
    cli(verifyArgs);
    if (BASELINE_BIN !== undefined) {
      cli(qualificationArgs, 0, BASELINE_BIN);
      cli(verifyArgs, 0, BASELINE_BIN);
    }
    const floor: number[] = [];
    const bare: number[] = [];
    const baselineQualification: number[] = [];
    const baselineVerify: number[] = [];
    const qualification: number[] = [];
    const receiptVerify: number[] = [];
    const qualificationCore: number[] = [];
    const verifyCore: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      floor.push(cli(['--version']));
      bare.push(nodeFloorSync());
      qualification.push(cli(qualificationArgs));
      receiptVerify.push(cli(verifyArgs));
      if (BASELINE_BIN !== undefined) {
        baselineQualification.push(cli(qualificationArgs, 0, BASELINE_BIN));
        baselineVerify.push(cli(verifyArgs, 0, BASELINE_BIN));
      }
      qualificationCore.push(timeInProcess(qualify));
      verifyCore.push(timeInProcess(verify));
    }
    const f = median(floor);
    const ratio = (values: number[]): number => median(values) / f;
    const line = (name: string, values: number[], target?: number): string =>
      `${name.padEnd(62)} ${median(values).toFixed(1).padStart(8)} ms  ${ratio(values).toFixed(2)}×${target === undefined ? '' : `   target ≤ ${target}×: ${ratio(values) <= target ? 'met' : 'NOT met'}`}\n`;
    process.stdout.write(
      `${TASKS} required command tasks, ${TASKS} imported transfers; bundle ${exported.length} bytes; median of ${RUNS} runs; ${SOURCES ? 'SOURCES through tsx (not comparable with the targets)' : BIN}\n`,
    );
    process.stdout.write(line('floor: agentscm --version (Node + CLI framework start-up)', floor));
    process.stdout.write(floorLine(bare, { name: 'qualification', ms: median(qualification) }));
    process.stdout.write(line(`agentscm qualification --change (${TASKS} tasks, receipt)`, qualification, 2));
    process.stdout.write(line(`agentscm receipt verify (${TASKS} transfers, no store)`, receiptVerify, 3));
    if (BASELINE_BIN !== undefined) {
      process.stdout.write(line('  baseline entry: agentscm qualification --change', baselineQualification));
      process.stdout.write(line('  baseline entry: agentscm receipt verify', baselineVerify));
    }
    process.stdout.write(line('  in process: qualifyLocal', qualificationCore));
    process.stdout.write(line('  in process: verifyReceiptBundle', verifyCore));
    const summary = {
      bench: 'admission',
      runs: RUNS,
      entry: SOURCES ? 'sources' : 'built',
      tasks: TASKS,
      bundle_bytes: exported.length,
      floor_ms: Number(f.toFixed(1)),
      node_floor_ms: floorMs(bare),
      qualification_ms: Number(median(qualification).toFixed(1)),
      qualification_ratio: Number(ratio(qualification).toFixed(2)),
      qualification_target: 2,
      verify_ms: Number(median(receiptVerify).toFixed(1)),
      verify_ratio: Number(ratio(receiptVerify).toFixed(2)),
      verify_target: 3,
      qualification_in_process_ms: Number(median(qualificationCore).toFixed(1)),
      verify_in_process_ms: Number(median(verifyCore).toFixed(1)),
      ...(BASELINE_BIN === undefined
        ? {}
        : {
            baseline_qualification_ms: Number(median(baselineQualification).toFixed(1)),
            baseline_qualification_ratio: Number(ratio(baselineQualification).toFixed(2)),
            baseline_verify_ms: Number(median(baselineVerify).toFixed(1)),
            baseline_verify_ratio: Number(ratio(baselineVerify).toFixed(2)),
          }),
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return Promise.resolve();
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
