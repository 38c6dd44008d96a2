/**
 * The Claude Code transport runs its executable in a process group of its own: a timeout and the
 * output limit kill the whole group and the call resolves on the timer; a normal exit ends what
 * the executable left running (issue #25 item 3). The executables here are `#!/bin/sh` wrappers
 * that start a descendant without `exec`.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { createClaudeCodeTransport } from '../../src/collector/review/claude-code-transport.js';
import { runReview, type ReviewTransport } from '../../src/collector/review/controller.js';
import { openReviewJournal } from '../../src/collector/review/journal.js';
import type { ReviewCallObservation } from '../../src/contracts/review/record.js';
import { tempDir } from '../helpers/tmp.js';
import { answerText, policyBytes, reviewAction, reviewStore } from '../support/review.js';

interface Wrapper {
  readonly transport: ReviewTransport;
  /** Pids the wrapper wrote: its own (`sh`) and its descendant's. */
  readonly pids: () => number[];
}

/** A Claude Code result envelope around `answer`, as one shell-quoted printf argument. */
function envelope(answer: string): string {
  return `'${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: answer }).replaceAll("'", `'\\''`)}'`;
}

/** Install `body` as a `#!/bin/sh` review executable; `$PIDS` names the file it writes pids to. */
function wrapper(t: TestContext, body: string): Wrapper {
  const root = tempDir(t, 'agentscm-review-group-');
  const executable = join(root, 'claude');
  writeFileSync(executable, `#!/bin/sh\necho $$ >> "$PIDS"\n${body}\n`);
  chmodSync(executable, 0o755);
  const workDir = join(root, 'work');
  mkdirSync(workDir, { mode: 0o700 });
  const pidFile = join(root, 'pids');
  const transport = createClaudeCodeTransport({
    executable,
    workDir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PIDS: pidFile },
    model: 'claude-sonnet-4-5',
    providerScope: 'team-a',
  });
  const pids = (): number[] =>
    existsSync(pidFile)
      ? readFileSync(pidFile, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
          .map(Number)
      : [];
  // Whatever the outcome, nothing the test started outlives it.
  t.after(() => {
    for (const pid of pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  return { transport, pids };
}

/**
 * Whether a process still runs. A killed orphan is reparented to PID 1 and is gone (ESRCH) once
 * PID 1 reaps it; where PID 1 does not reap (some VM and container inits), it stays a zombie, which
 * runs nothing and holds nothing open, so it counts as gone.
 */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    assert.equal((error as NodeJS.ErrnoException).code, 'ESRCH');
    return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

async function settledRunning(pids: readonly number[]): Promise<number[]> {
  // SIGKILL is delivered at once; give the kernel a moment to tear the processes down.
  for (let i = 0; i < 20; i += 1) {
    if (pids.every((pid) => !running(pid))) return [];
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return pids.filter(running);
}

/** Without the group kill these calls last 30 s or more (days, for the review): each test then fails at this limit. */
const LIMIT = { timeout: 20_000 };

function dispatch(
  transport: ReviewTransport,
  timeoutMs: number,
  maxResponseBytes = 4096,
): Promise<ReviewCallObservation> {
  return transport.dispatch({
    callIndex: 0,
    request: Buffer.from('{}'),
    requestDigest: 'a'.repeat(64),
    ticket: 'b'.repeat(64),
    maxResponseBytes,
    timeoutMs,
  });
}

test(
  'a wrapper waiting on a descendant past the call timeout: timed_out within 2.5 s and no process of the call survives',
  LIMIT,
  async (t) => {
    // `sleep` runs as a child of the shell (no exec); the shell waits for it, then answers.
    const { transport, pids } = wrapper(
      t,
      `sleep 30 &\necho $! >> "$PIDS"\nwait\nprintf '%s' ${envelope(answerText())}`,
    );
    const started = performance.now();
    const observation = await dispatch(transport, 2000);
    const elapsed = performance.now() - started;
    assert.equal(observation.status, 'timed_out');
    assert.ok(elapsed < 2500, `the call took ${Math.round(elapsed)} ms`);
    assert.equal(observation.response, null);
    assert.match(observation.detail ?? '', /no answer within 2000 ms; the process group was killed/);
    const written = pids();
    assert.equal(written.length, 2, 'the wrapper and its sleep both started');
    assert.deepEqual(await settledRunning(written), []);
  },
);

test('a descendant that left the group and holds stdout open cannot hold the call past the timer', LIMIT, async (t) => {
  // The descendant leaves the group (its own session), keeping the call's stdout open: the call
  // still resolves on the timer rather than when the pipes close.
  const { transport, pids } = wrapper(t, `setsid sleep 30 &\necho $! >> "$PIDS"\nsleep 30`);
  const started = performance.now();
  const observation = await dispatch(transport, 1000);
  assert.equal(observation.status, 'timed_out');
  assert.ok(performance.now() - started < 1500);
  assert.equal(pids().length, 2);
});

test('the output limit kills the whole group at once', LIMIT, async (t) => {
  // A descendant floods stdout (no exec); the cap is maxResponseBytes * 6 + 64 KiB.
  const { transport, pids } = wrapper(t, `yes flood &\necho $! >> "$PIDS"\nwait`);
  const started = performance.now();
  const observation = await dispatch(transport, 20_000, 16);
  assert.equal(observation.status, 'output_limit');
  assert.ok(performance.now() - started < 5000);
  assert.match(observation.detail ?? '', /the process group was killed/);
  assert.equal(pids().length, 2);
  assert.deepEqual(await settledRunning(pids()), []);
});

test(
  'a normal exit ends what the executable left running: the answer is used at once and no descendant survives',
  LIMIT,
  async (t) => {
    // The background sleep keeps the inherited stdout open: before, the call waited for it.
    const { transport, pids } = wrapper(
      t,
      `sleep 30 &\necho $! >> "$PIDS"\nprintf '%s' ${envelope(answerText())}\nexit 0`,
    );
    const started = performance.now();
    const observation = await dispatch(transport, 10_000);
    assert.equal(observation.status, 'answered', observation.detail ?? '');
    assert.equal(observation.exit_code, 0);
    assert.equal(observation.response, answerText());
    assert.ok(performance.now() - started < 5000);
    assert.deepEqual(await settledRunning(pids()), []);
  },
);

test(
  'a review whose calls hang in a descendant ends within its call timeout, not when the descendant ends',
  LIMIT,
  async (t) => {
    const store = reviewStore(t);
    const { transport, pids } = wrapper(
      t,
      `sleep 1000000 &\necho $! >> "$PIDS"\nwait\nprintf '%s' ${envelope(answerText())}`,
    );
    const journal = openReviewJournal(tempDir(t));
    t.after(() => journal.close());
    const started = performance.now();
    const record = await runReview(
      {
        repository: store.repository,
        revision: store.revision,
        action: reviewAction(),
        policyBytes: policyBytes({ call_timeout_ms: 2000 }),
      },
      { sources: store.sources, transport, journal },
    );
    assert.ok(performance.now() - started < 4000);
    assert.deepEqual(
      record.calls.map((c) => c.observation.status),
      ['timed_out'],
    );
    assert.equal(record.outcome, 'incomplete');
    assert.ok(record.reasons.includes('timed_out'));
    assert.deepEqual(await settledRunning(pids()), []);
  },
);
