/**
 * Skill workflow benchmark (issue 3): plan + run of a 32-step source_paths workflow (32
 * expectations per step, 1,024 checked files) over a revision of 10,000 files, against
 * `sha256sum` of the same 1,024 files written to disk, in the same run. Prints the median
 * wall-clock times and their ratio (target ≤ 1.5×) for two sizes of checked files: 256 KiB
 * (256 MiB checked, hashing dominates) and 10,000 bytes (the checkpoint benchmark's file size,
 * where the one fsync'd journal commit per step dominates).
 *
 * agentscm is measured in process (compileWorkflow + runWorkflow on a real store and journal,
 * every step committed in its own synchronous=FULL transaction before the next starts), so
 * the ratio compares the work of the check, not Node.js start-up; the CLI adds a constant
 * start-up time on top. AGENTSCM_BENCH_WF_FILES / AGENTSCM_BENCH_WF_CHECKED_BYTES (one size
 * only) / AGENTSCM_BENCH_WF_RUNS shrink or grow the run.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { decodeWorkflowDefinition } from '../src/contracts/workflow-definition.js';
import { putSmallBlob } from '../src/native/blobs.js';
import { createRepository } from '../src/native/repositories.js';
import { comparePaths, recordRevision } from '../src/native/revisions.js';
import type { RevisionEntry } from '../src/native/revisions.js';
import { createAuthority, openAuthority, writeTransaction } from '../src/native/store.js';
import { compileWorkflow } from '../src/workflows/plan.js';
import { runWorkflow } from '../src/workflows/runner.js';

const FILES = Number(process.env.AGENTSCM_BENCH_WF_FILES ?? 10_000);
const CHECKED_SIZES = process.env.AGENTSCM_BENCH_WF_CHECKED_BYTES === undefined ? [256 * 1024, 10_000] : [Number(process.env.AGENTSCM_BENCH_WF_CHECKED_BYTES)];
const OTHER_BYTES = 1024;
const RUNS = Number(process.env.AGENTSCM_BENCH_WF_RUNS ?? 5);
const STEPS = 32;
const PER_STEP = 32;
const SKILL = 'skills/bench/SKILL.md';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export async function main(): Promise<void> {
  for (const size of CHECKED_SIZES) await scenario(size);
}

async function scenario(CHECKED_BYTES: number): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'agentscm-wf-bench-'));
  try {
    const tree = join(root, 'tree');
    const dataDir = join(root, 'data');
    const checked: { path: string; sha256: string }[] = [];
    const entries: RevisionEntry[] = [];
    const auth = createAuthority(dataDir);
    let repository: string;
    let revision: string;
    try {
      repository = writeTransaction(auth, () => createRepository(auth, 'bench')).id;
      writeTransaction(auth, () => {
        for (let i = 0; i < FILES; i++) {
          const path = i === 0 ? SKILL : `src/d${String(i % 100).padStart(2, '0')}/f${i}.bin`;
          const isChecked = i > 0 && i <= STEPS * PER_STEP;
          const bytes = i === 0 ? Buffer.from('---\nname: bench\n---\n') : randomBytes(isChecked ? CHECKED_BYTES : OTHER_BYTES);
          const sha256 = createHash('sha256').update(bytes).digest('hex');
          putSmallBlob(auth, bytes, sha256);
          entries.push({ path, mode: 'file', size: BigInt(bytes.byteLength), blob: sha256 });
          if (isChecked) {
            checked.push({ path, sha256 });
            mkdirSync(dirname(join(tree, path)), { recursive: true });
            writeFileSync(join(tree, path), bytes);
          }
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
    const bytes = Buffer.from(JSON.stringify(definition));
    const checkedMb = (checked.length * CHECKED_BYTES) / (1024 * 1024);
    process.stdout.write(`\nrevision of ${FILES} files; ${STEPS} steps × ${PER_STEP} expectations = ${checked.length} files of ${CHECKED_BYTES} bytes, ${checkedMb.toFixed(1)} MiB checked\n`);

    const ours: number[] = [];
    const baseline: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const start = performance.now();
      const read = openAuthority(dataDir, { mode: 'read' });
      try {
        compileWorkflow(read, decodeWorkflowDefinition(bytes));
      } finally {
        read.close();
      }
      const report = await runWorkflow({ dataDir }, `bench-${run}`, bytes, STEPS);
      ours.push((performance.now() - start) / 1000);
      if (report.state !== 'completed' || report.executed !== STEPS) throw new Error(`bench run ended ${report.state} after ${report.executed} steps`);

      const t0 = performance.now();
      const result = spawnSync('sha256sum', checked.map((c) => c.path), { cwd: tree, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 * 1024 * 1024 });
      baseline.push((performance.now() - t0) / 1000);
      if (result.status !== 0) throw new Error(`sha256sum failed: ${result.stderr.toString()}`);
      const lines = result.stdout.toString().trim().split('\n');
      if (lines.length !== checked.length || !lines.every((line, i) => line.startsWith(checked[i]?.sha256 ?? '-'))) throw new Error('sha256sum disagrees with the pinned digests');
    }
    const a = median(ours);
    const b = median(baseline);
    process.stdout.write(`agentscm plan + run (median of ${RUNS}): ${a.toFixed(3)} s\n`);
    process.stdout.write(`sha256sum of the same files (median of ${RUNS}): ${b.toFixed(3)} s\n`);
    process.stdout.write(`ratio: ${(a / b).toFixed(2)}× (target ≤ 1.5×)\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
