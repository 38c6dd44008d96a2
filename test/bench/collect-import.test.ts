/**
 * A bounded sample of `npm run bench -- collect`, part (b) (docs/collect.md "Performance"): the
 * bench itself, as a real process against the live engine, with 3 import rounds of 64 KiB
 * envelopes instead of 7 of 16 MiB. Every round claims the task of a fresh subject of the same
 * Change; the padded record is refused by the import, so each round's attempt must be reconciled
 * before the next claim, or the second round dies on TASK_PRIOR_SUBJECT_UNRESOLVED.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { REPO_ROOT, TSX_LOADER } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { requireEngine } from '../support/collector.js';

interface ImportSummary {
  bench: string;
  rounds: number;
  envelope_bytes: number;
  sha256_ms: number;
  verify_ms: number;
  verify_ratio: number;
  sqlite_floor_ms: number;
  import_ms: number | null;
  imports: number;
  refusal: string | null;
  reconciled: number;
}

function runBench(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, join(REPO_ROOT, 'bench', 'run.ts'), 'collect'], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test(
  'the collect bench import part runs every round to its figures: each refused import is reconciled before the next subject is claimed',
  { timeout: 180_000 },
  async (t) => {
    await requireEngine();
    const tmp = tempDir(t, 'agentscm-bench-sample-');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TMPDIR: tmp,
      AGENTSCM_BENCH_COLLECT: 'import',
      AGENTSCM_BENCH_IMPORT_ROUNDS: '3',
      AGENTSCM_BENCH_IMPORT_BYTES: String(64 * 1024),
    };
    delete env.AGENTSCM_DATA_DIR;
    const result = await runBench(env);
    assert.equal(result.code, 0, `the bench failed:\n${result.stderr}`);
    assert.doesNotMatch(result.stderr, /TASK_PRIOR_SUBJECT_UNRESOLVED/);
    for (const round of [1, 2, 3]) assert.match(result.stderr, new RegExp(`import round ${round}/3`));
    const line = result.stdout.split('\n').find((l) => l.startsWith('{"bench":"collect-import"'));
    assert.ok(line !== undefined, `no collect-import summary line in:\n${result.stdout}`);
    const summary = JSON.parse(line) as ImportSummary;
    assert.equal(summary.rounds, 3);
    assert.equal(summary.envelope_bytes, 65_536);
    for (const figure of [summary.sha256_ms, summary.verify_ms, summary.verify_ratio, summary.sqlite_floor_ms])
      assert.ok(Number.isFinite(figure) && figure > 0, `figure ${figure}`);
    // The padded record is not the collector's ExecutionRecord: the import refuses it, once, and
    // every round's attempt (the refused one and the untried ones after it) is reconciled.
    assert.equal(summary.refusal, 'IMPORT_RECORD_INVALID');
    assert.equal(summary.imports, 0);
    assert.equal(summary.import_ms, null);
    assert.equal(summary.reconciled, 3);
    assert.match(result.stdout, /verification stage of a 65536 B envelope .* ratio \d+\.\d\dx/);
    // The bench removes its own stores.
    assert.deepEqual(
      readdirSync(tmp).filter((name) => name.startsWith('agentscm-bench-collect-')),
      [],
    );
  },
);
