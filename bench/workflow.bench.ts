/**
 * Skill workflow benchmark (issue 3): plan + run of a 32-step source_paths workflow (32
 * expectations per step, 1,024 checked files) over a revision of 10,000 files of 10,000 bytes
 * (~100 MB, the checkpoint benchmark's tree), against `sha256sum` of the same files — the
 * revision's 10,000 files, written to disk — in the same run. Prints the median wall-clock times
 * and their ratio (target ≤ 1.5×), and for reference the ratio against `sha256sum` of only the
 * 1,024 files the workflow checks.
 *
 * agentscm is measured as the built CLI: two processes, `skill-workflow plan FILE` and
 * `skill-workflow run RUN_ID FILE --max-steps 32`, on a real store and journal (source_paths
 * step records are crash-safe commits, run creation and the lease are fsynced; see
 * docs/skill-workflows.md "Durability"). The CLI start-up floor (`--version`, twice) is
 * printed too, since it is a constant part of the two processes, and so is the same plan + run
 * through the library in the bench process (no start-up, module loading or schema compilation).
 * The entry script is
 * bin/run.js (`npm run bench` builds first); AGENTSCM_BENCH_BIN points at another one.
 * AGENTSCM_BENCH_WF_FILES / AGENTSCM_BENCH_WF_CHECKED_BYTES (size of the checked files, e.g.
 * 262144 for hashing-bound 256 KiB files) / AGENTSCM_BENCH_WF_RUNS change the run.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { decodeWorkflowDefinition } from '../src/contracts/workflow-definition.js';
import { putSmallBlob } from '../src/native/blobs.js';
import { createRepository } from '../src/native/repositories.js';
import { comparePaths, recordRevision, type RevisionEntry } from '../src/native/revisions.js';
import { createAuthority, openAuthority, writeTransaction } from '../src/native/store.js';
import { openStore } from '../src/tasks/store.js';
import { compileWorkflow } from '../src/workflows/plan.js';
import { runWorkflow } from '../src/workflows/runner.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js');
const FILES = Number(process.env.AGENTSCM_BENCH_WF_FILES ?? 10_000);
const FILE_BYTES = 10_000;
const CHECKED_BYTES = Number(process.env.AGENTSCM_BENCH_WF_CHECKED_BYTES ?? FILE_BYTES);
const RUNS = Number(process.env.AGENTSCM_BENCH_WF_RUNS ?? 5);
const STEPS = 32;
const PER_STEP = 32;
const SKILL = 'skills/bench/SKILL.md';

function timed(command: string, args: readonly string[], cwd: string): { seconds: number; stdout: string } {
  const start = performance.now();
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  const seconds = (performance.now() - start) / 1000;
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}${result.stdout.toString()}`,
    );
  return { seconds, stdout: result.stdout.toString() };
}

/** One `sha256sum` process over `files` (in order); checks every digest it prints. */
function sha256sumSeconds(tree: string, files: readonly { path: string; sha256: string }[]): number {
  const t0 = performance.now();
  const result = spawnSync(
    'sha256sum',
    files.map((f) => f.path),
    { cwd: tree, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 },
  );
  const seconds = (performance.now() - t0) / 1000;
  if (result.status !== 0) throw new Error(`sha256sum failed: ${result.stderr.toString()}`);
  const lines = result.stdout.toString().trim().split('\n');
  if (lines.length !== files.length || !lines.every((line, i) => line.startsWith(files[i]?.sha256 ?? '-')))
    throw new Error('sha256sum disagrees with the pinned digests');
  return seconds;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'agentscm-wf-bench-'));
  try {
    const tree = join(root, 'tree');
    const dataDir = join(root, 'data');
    const checked: { path: string; sha256: string }[] = [];
    const all: { path: string; sha256: string }[] = [];
    const entries: RevisionEntry[] = [];
    const auth = createAuthority(dataDir);
    let repository: string;
    let revision: string;
    let totalBytes = 0;
    try {
      repository = writeTransaction(auth, () => createRepository(auth, 'bench')).id;
      writeTransaction(auth, () => {
        for (let i = 0; i < FILES; i++) {
          const path = i === 0 ? SKILL : `src/d${String(i % 100).padStart(2, '0')}/f${i}.bin`;
          const isChecked = i > 0 && i <= STEPS * PER_STEP;
          const bytes =
            i === 0 ? Buffer.from('---\nname: bench\n---\n') : randomBytes(isChecked ? CHECKED_BYTES : FILE_BYTES);
          totalBytes += bytes.byteLength;
          const sha256 = createHash('sha256').update(bytes).digest('hex');
          putSmallBlob(auth, bytes, sha256);
          entries.push({ path, mode: 'file', size: BigInt(bytes.byteLength), blob: sha256 });
          all.push({ path, sha256 });
          if (isChecked) checked.push({ path, sha256 });
          mkdirSync(dirname(join(tree, path)), { recursive: true });
          writeFileSync(join(tree, path), bytes);
        }
      });
      entries.sort((a, b) => comparePaths(a.path, b.path));
      revision = recordRevision(auth, repository, null, entries).id;
    } finally {
      auth.close();
    }
    const definition = {
      version: 1,
      name: 'bench',
      source: { repository, revision, policy_epoch: 0 },
      skill: { entrypoint: SKILL, resources: [] },
      steps: Array.from({ length: STEPS }, (_, s) => ({
        id: `step-${s}`,
        needs: s === 0 ? [] : [`step-${s - 1}`],
        required: true,
        action: { kind: 'source_paths', expectations: checked.slice(s * PER_STEP, (s + 1) * PER_STEP) },
      })),
    };
    const file = join(root, 'workflow.json');
    writeFileSync(file, JSON.stringify(definition));
    const checkedMb = (checked.length * CHECKED_BYTES) / (1024 * 1024);
    process.stdout.write(
      `revision of ${FILES} files (${(totalBytes / 1e6).toFixed(1)} MB); ${STEPS} steps × ${PER_STEP} expectations = ${checked.length} files of ${CHECKED_BYTES} bytes, ${checkedMb.toFixed(1)} MiB checked\n`,
    );
    process.stdout.write(
      `agentscm: built CLI ${BIN}, processes \`skill-workflow plan\` + \`skill-workflow run --max-steps ${STEPS}\`\n`,
    );
    process.stdout.write(
      `baseline: one \`sha256sum\` process over the revision's ${all.length} files; reference: one over the ${checked.length} checked files\n`,
    );

    const floor: number[] = [];
    const inProcess: number[] = [];
    const ours: number[] = [];
    const baseline: number[] = [];
    const checkedBaseline: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const plan = timed(
        process.execPath,
        [BIN, '--data-dir', dataDir, 'skill-workflow', 'plan', file, '--json'],
        root,
      );
      const ran = timed(
        process.execPath,
        [
          BIN,
          '--data-dir',
          dataDir,
          'skill-workflow',
          'run',
          `bench-${run}`,
          file,
          '--max-steps',
          String(STEPS),
          '--json',
        ],
        root,
      );
      ours.push(plan.seconds + ran.seconds);
      const report = JSON.parse(ran.stdout) as { state?: string; executed?: number };
      if (report.state !== 'completed' || report.executed !== STEPS)
        throw new Error(`bench run ended ${String(report.state)} after ${String(report.executed)} steps`);
      floor.push(timed(process.execPath, [BIN, '--version'], root).seconds * 2);

      // The same plan + run through the library in this process (src/ through tsx): the work
      // of the check without process start-up, module loading and schema compilation.
      const started = performance.now();
      const definitionBytes = Buffer.from(JSON.stringify(definition));
      const read = openAuthority(dataDir, { mode: 'read' });
      try {
        compileWorkflow(read, decodeWorkflowDefinition(definitionBytes));
      } finally {
        read.close();
      }
      const store = openStore(dataDir, { mode: 'write' });
      let library;
      try {
        library = await runWorkflow({ store }, `bench-lib-${run}`, definitionBytes, STEPS);
      } finally {
        store.close();
      }
      inProcess.push((performance.now() - started) / 1000);
      if (library.state !== 'completed' || library.executed !== STEPS)
        throw new Error(`library run ended ${library.state} after ${library.executed} steps`);

      baseline.push(sha256sumSeconds(tree, all));
      checkedBaseline.push(sha256sumSeconds(tree, checked));
    }
    const a = median(ours);
    const b = median(baseline);
    const f = median(floor);
    process.stdout.write(`agentscm plan + run (median of ${RUNS}): ${a.toFixed(3)} s\n`);
    process.stdout.write(`  of which CLI start-up floor (2 × \`--version\`, median): ${f.toFixed(3)} s\n`);
    process.stdout.write(`sha256sum of the same ${all.length} files (median of ${RUNS}): ${b.toFixed(3)} s\n`);
    const l = median(inProcess);
    const ratio = a / b;
    process.stdout.write(
      `ratio: ${ratio.toFixed(2)}× (target ≤ 1.5×: ${ratio <= 1.5 ? 'meets target' : 'MISSES target'}); without the start-up floor: ${((a - f) / b).toFixed(2)}×\n`,
    );
    process.stdout.write(
      `in process (library plan + run, median of ${RUNS}): ${l.toFixed(3)} s, ratio ${(l / b).toFixed(2)}×\n`,
    );
    const c = median(checkedBaseline);
    process.stdout.write(
      `reference: sha256sum of only the ${checked.length} checked files ${c.toFixed(3)} s; plan + run is ${(a / c).toFixed(2)}× that, ${(l / c).toFixed(2)}× in process\n`,
    );
  } finally {
    if (process.env.AGENTSCM_BENCH_KEEP === undefined) rmSync(root, { recursive: true, force: true });
    else process.stdout.write(`kept ${root}\n`);
  }
}
