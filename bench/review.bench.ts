/**
 * Review benchmark (issue 18 "Benchmark"), `npm run bench -- review`: the validation-only replay
 * of a review with 32 recorded calls against the controller's own live run of the same review,
 * in the same run, alternating, medians:
 *
 * - live: the controller over the Claude Code transport driving the stand-in executable
 *   `test/review/fixtures/claude` (one process per call, the executable hashed before and after
 *   each), journal on disk — the baseline of the target, replay ≤ 0.5× of it;
 * - live in process: the same review over the in-process fixture transport (no process, no
 *   hashing), for scale;
 * - replay: strict decoding of the record, the tamper checks, the controller over the replay
 *   transport with an in-memory journal, and the byte comparison of the derived record.
 *
 * Progress goes to stderr; the figures and one JSON summary to stdout. AGENTSCM_BENCH_ROUNDS
 * (default 5) sets the rounds. No model is called.
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createClaudeCodeTransport } from '../src/collector/review/claude-code-transport.js';
import { runReview, type ReviewTransport } from '../src/collector/review/controller.js';
import { listJournalRequests, openReviewJournal } from '../src/collector/review/journal.js';
import { replayReviewRecord } from '../src/collector/review/replay.js';
import { revisionReviewSources } from '../src/collector/review/sources.js';
import { createFixtureTransport } from '../src/collector/review/transports.js';
import { encodeCanonical } from '../src/contracts/json/canonical-json.js';
import type { ReviewAction } from '../src/contracts/review/policy.js';
import { reviewRecordToJson } from '../src/contracts/review/record.js';
import { putSmallBlob } from '../src/native/blobs.js';
import { createRepository } from '../src/native/repositories.js';
import { comparePaths, recordRevision, type RevisionEntry } from '../src/native/revisions.js';
import { createAuthority, writeTransaction } from '../src/native/store.js';

const ROUNDS = Number(process.env.AGENTSCM_BENCH_ROUNDS ?? 5);
const CALLS = 32;
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const CRITERIA = [
  { criterion: 'correctness', description: 'The code does what its names say.' },
  { criterion: 'no-secrets', description: 'No credential is committed.' },
];
const ANSWER = JSON.stringify({
  version: 1,
  verdicts: CRITERIA.map((c) => ({ criterion: c.criterion, verdict: 'pass' })),
  findings: [],
});

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

function progress(message: string): void {
  process.stderr.write(`review bench: ${message}\n`);
}

export async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'agentscm-review-bench-'));
  try {
    // 32 source files of ~1 KiB; at most 1 KiB of excerpts per call, so one file per call.
    const auth = createAuthority(join(root, 'data'));
    const repository = createRepository(auth, 'review-bench').id;
    const paths = Array.from({ length: CALLS }, (_, i) => `src/file-${String(i).padStart(2, '0')}.ts`);
    const entries: RevisionEntry[] = writeTransaction(auth, () =>
      paths.map((path, i) => {
        const bytes = Buffer.from(`// ${path}\n${`export const value${i} = ${i}; // naïve ✓\n`.repeat(24)}`, 'utf8');
        return { path, mode: 'file' as const, size: BigInt(bytes.length), blob: putSmallBlob(auth, bytes).digest };
      }),
    );
    entries.sort((x, y) => comparePaths(x.path, y.path));
    const revision = recordRevision(auth, repository, null, entries).id;
    const sources = revisionReviewSources(auth, repository, revision);
    const policyBytes = encodeCanonical({
      version: 1,
      instructions: 'Review every excerpt.',
      exposure: ['src'],
      max_excerpt_bytes: 1024,
      max_call_excerpt_bytes: 1024,
      call_timeout_ms: 30_000,
    });
    const action: ReviewAction = {
      kind: 'review',
      policy: 'review-policy.json',
      coverage: paths,
      criteria: CRITERIA,
      budgets: {
        model_calls: CALLS,
        input_bytes: 1024 * 1024,
        output_bytes: 64 * 1024,
        files_exposed: CALLS,
        wall_time_ms: 600_000,
      },
    };
    const input = { repository, revision, action, policyBytes };

    // The stand-in executable, with a plan that answers pass to every call.
    const bin = join(root, 'bin');
    mkdirSync(bin);
    const executable = join(bin, 'claude');
    copyFileSync(join(REPO_ROOT, 'test', 'review', 'fixtures', 'claude'), executable);
    chmodSync(executable, 0o755);
    const workDir = join(root, 'work');
    mkdirSync(workDir, { mode: 0o700 });
    const plan = join(root, 'plan.json');
    writeFileSync(plan, JSON.stringify(paths.map(() => ({ mode: 'answer', response: JSON.parse(ANSWER) as unknown }))));
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', FIXTURE_PLAN: plan, FIXTURE_LOG: join(root, 'calls.log') };
    const claude = createClaudeCodeTransport({
      executable,
      workDir,
      env,
      model: 'claude-sonnet-4-5',
      providerScope: 'bench',
    });
    const inProcess = createFixtureTransport(paths.map(() => ({ response: ANSWER })));

    let rounds = 0;
    const live = async (transport: ReviewTransport): Promise<{ record: Buffer; requests: Buffer[] }> => {
      rounds += 1;
      const journal = openReviewJournal(join(root, `state-${rounds}`));
      try {
        const record = await runReview(input, { sources, transport, journal });
        if (record.outcome !== 'passed' || record.calls.length !== CALLS)
          throw new Error(
            `the live review did not pass with ${CALLS} calls (${record.outcome}, ${record.calls.length})`,
          );
        return {
          record: encodeCanonical(reviewRecordToJson(record)),
          requests: listJournalRequests(journal, record.review_id),
        };
      } finally {
        journal.close();
      }
    };
    const recorded = await live(claude);
    const replay = (): Promise<unknown> =>
      replayReviewRecord({ ...input, sources, requests: recorded.requests, record: recorded.record });
    await replay();
    await live(inProcess);

    const liveMs: number[] = [];
    const inProcessMs: number[] = [];
    const replayMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      liveMs.push(await timed(() => live(claude)));
      inProcessMs.push(await timed(() => live(inProcess)));
      replayMs.push(await timed(replay));
      progress(`round ${round + 1}/${ROUNDS}`);
    }
    auth.close();
    const summary = {
      bench: 'review',
      calls: CALLS,
      rounds: ROUNDS,
      record_bytes: recorded.record.length,
      live_claude_code_fixture_ms: Number(median(liveMs).toFixed(1)),
      live_in_process_fixture_ms: Number(median(inProcessMs).toFixed(1)),
      replay_ms: Number(median(replayMs).toFixed(1)),
      replay_vs_live: Number((median(replayMs) / median(liveMs)).toFixed(3)),
      replay_vs_live_in_process: Number((median(replayMs) / median(inProcessMs)).toFixed(3)),
      target_replay_vs_live: 0.5,
    };
    process.stdout.write(
      `live (Claude Code transport, stand-in executable, ${CALLS} calls): ${summary.live_claude_code_fixture_ms} ms\n`,
    );
    process.stdout.write(
      `live (in-process fixture transport):                     ${summary.live_in_process_fixture_ms} ms\n`,
    );
    process.stdout.write(`replay (validation only):                                ${summary.replay_ms} ms\n`);
    process.stdout.write(
      `replay / live: ${summary.replay_vs_live}× (target ≤ 0.5×); replay / live in process: ${summary.replay_vs_live_in_process}×\n`,
    );
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
