/**
 * Live tests against the real engine (issue 4 "Tests"): the container sees exactly the
 * revision's bytes; no network; the source mount and root filesystem are read-only; not root;
 * no capabilities; fork bomb, memory bomb, output flood and timeout are stopped and recorded.
 * They fail (not skip) when the engine is unreachable: run `npm run runtime:start`.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { snapshotParentOf } from '../../src/collector/command-step-run.js';
import { createCommandStepRuntime, type CommandRuntimeHandle } from '../../src/collector/command-step-runtime.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { listRevisionEntries } from '../../src/native/revisions.js';
import { openAuthority } from '../../src/native/store.js';
import {
  getCommandAttempt,
  getCommandAttemptForStep,
  getCommandAttemptOutput,
} from '../../src/workflows/command-attempts.js';
import {
  containersOf,
  createEventsOf,
  DOCKER_EXE,
  DOCKER_SOCKET,
  makeRepo,
  makeSuiteRepo,
  recipeBytes,
  requireEngine,
  stepRequest,
  type RecipeFields,
  type Repo,
} from '../support/collector.js';
import { openJournal } from '../support/journal.js';

let runtime: CommandRuntimeHandle;
let shared: Repo & { remove(): void };
let counter = 0;

before(async () => {
  await requireEngine();
  runtime = await createCommandStepRuntime({ docker: DOCKER_EXE, dockerSocket: DOCKER_SOCKET });
  shared = makeSuiteRepo({ 'README.md': 'demo\n' });
});

after(async () => {
  await runtime.close();
  shared.remove();
});

interface Ran {
  readonly result: Awaited<ReturnType<CommandRuntimeHandle['run']>>;
  readonly stdout: string;
  readonly stderr: string;
  readonly record: Record<string, unknown>;
  readonly revision: string;
}

async function run(fields: RecipeFields, repo: Repo = shared): Promise<Ran> {
  counter += 1;
  const request = stepRequest(repo, {
    runId: `run-${counter}`,
    change: `change-${counter}`,
    recipe: recipeBytes(fields),
  });
  const result = await runtime.run(request);
  const journal = openJournal(repo.dataDir, 'read');
  try {
    const attempt = getCommandAttempt(journal.db, result.attemptId);
    const output = getCommandAttemptOutput(journal.db, result.attemptId);
    assert.ok(attempt.record_json !== null, 'a finished attempt has a record');
    const record = parseStrictJson(attempt.record_json, { maxBytes: 1 << 20 }) as Record<string, unknown>;
    return {
      result,
      stdout: output.stdout.toString('utf8'),
      stderr: output.stderr.toString('utf8'),
      record,
      revision: request.revision,
    };
  } finally {
    journal.close();
  }
}

function cleanupConfirmed(record: Record<string, unknown>): void {
  assert.deepEqual(record.cleanup, { container: 'removed', snapshot: 'removed', confirmed: true });
}

test('the container sees exactly the bytes of the revision, mounted read-only at /src', async (t) => {
  const repo = makeRepo(t, {
    'README.md': 'demo\n',
    'src/lib/a.txt': 'alpha\n',
    'data/blob.bin': Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]),
    'deep/er/still/z.txt': 'zeta',
  });
  repo.write('tool.sh', '#!/bin/sh\necho tool\n', 0o755);
  const ran = await run(
    {
      argv: [
        '/bin/sh',
        '-c',
        'cd /src && find . ! -type d | sort | xargs sha256sum; echo MODE $(stat -c %a tool.sh); ./tool.sh',
      ],
    },
    repo,
  );
  assert.equal(ran.result.state, 'succeeded', ran.stderr);
  const auth = openAuthority(repo.dataDir, { mode: 'read' });
  const entries = listRevisionEntries(auth, repo.repository, ran.revision);
  auth.close();
  const seen = ran.stdout
    .split('\n')
    .filter((line) => /^[0-9a-f]{64} {2}\.\//.test(line))
    .map((line) => `${line.slice(68)} ${line.slice(0, 64)}`);
  const expected = entries.map((e) => `${e.path} ${e.blob}`).sort();
  assert.deepEqual(seen.sort(), expected);
  assert.match(ran.stdout, /^MODE 755$/m);
  assert.match(ran.stdout, /^tool$/m);
  cleanupConfirmed(ran.record);
  assert.equal(readdirSync(snapshotParentOf(repo)).length, 0, 'the snapshot was removed');
});

test('no network, read-only source and root, a writable tmpfs, not root, no capabilities', async () => {
  const script = [
    'if nc -w 2 10.1.2.3 80 </dev/null; then echo CONNECTED; fi',
    'ip -o addr | cut -d" " -f2 | sort -u | tr "\\n" " "; echo',
    'touch /src/new 2>&1 || echo SRC-RO',
    'touch /etc/new 2>&1 || echo ROOT-RO',
    'echo scratch > /tmp/s && cat /tmp/s',
    'echo UID=$(id -u) GID=$(id -g)',
    'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status',
    'grep NoNewPrivs /proc/self/status',
  ].join('; ');
  const ran = await run({ argv: ['/bin/sh', '-c', script] });
  assert.equal(ran.result.state, 'succeeded', ran.stderr);
  assert.doesNotMatch(ran.stdout, /CONNECTED/);
  assert.match(ran.stderr, /Network is unreachable|can't connect/);
  assert.match(ran.stdout, /^lo $/m, 'only the loopback interface exists');
  assert.match(ran.stdout, /SRC-RO/);
  assert.match(ran.stdout, /ROOT-RO/);
  assert.match(ran.stdout, /^scratch$/m);
  assert.match(ran.stdout, /UID=65534 GID=65534/);
  for (const cap of ['CapEff', 'CapPrm', 'CapBnd'])
    assert.match(ran.stdout, new RegExp(`^${cap}:\\s+0000000000000000$`, 'm'));
  assert.match(ran.stdout, /^NoNewPrivs:\s+1$/m);
});

test('the environment is exactly the recipe env (plus the image defaults); nothing comes from the host', async (t) => {
  process.env.AGENTSCM_HOST_SECRET = 'do-not-leak';
  t.after(() => delete process.env.AGENTSCM_HOST_SECRET);
  const ran = await run({ argv: ['/usr/bin/env'], env: { FOO: 'bar baz', EMPTY: '' } });
  assert.equal(ran.result.state, 'succeeded');
  assert.match(ran.stdout, /^FOO=bar baz$/m);
  assert.match(ran.stdout, /^EMPTY=$/m);
  assert.doesNotMatch(ran.stdout, /AGENTSCM_HOST_SECRET|do-not-leak/);
});

test('a failing command is recorded as failed with its exit code and both streams', async () => {
  const ran = await run({ argv: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 7'] });
  assert.equal(ran.result.state, 'failed');
  assert.equal(ran.result.outcome, 'failed');
  assert.equal(ran.record.exit_code, 7);
  assert.equal(ran.stdout, 'out\n');
  assert.equal(ran.stderr, 'err\n');
  cleanupConfirmed(ran.record);
});

test('a fork bomb is stopped by the pids limit', async () => {
  // The main shell forks exactly once, before the bomb exists: a non-interactive busybox sh
  // exits on "can't fork", and forking the pipeline `b | b` itself raced the first element's
  // children for the last free pid. After that only builtins, so even the wait is a builtin loop.
  const script = [
    'b() { b | b & }; (b) & i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done',
    'for d in /sys/fs/cgroup/pids /sys/fs/cgroup; do if [ -r $d/pids.max ]; then read m < $d/pids.max; read c < $d/pids.current; echo MAX=$m CURRENT=$c; break; fi; done',
  ].join('; ');
  const ran = await run({ argv: ['/bin/sh', '-c', script], timeout_ms: 30_000, limits: { pids: 16, cpu_millis: 500 } });
  assert.match(ran.stderr, /can't fork|Resource temporarily unavailable/);
  const counts = /MAX=(\d+) CURRENT=(\d+)/.exec(ran.stdout);
  assert.ok(counts !== null, `the pids controller was readable: ${ran.stdout}`);
  assert.equal(Number(counts[1]), 16);
  assert.ok(Number(counts[2]) <= 16, `at most 16 processes existed (saw ${counts[2]})`);
  cleanupConfirmed(ran.record);
});

test('a memory bomb is recorded as OOM-killed and failed', async () => {
  const ran = await run({
    argv: ['/bin/sh', '-c', 'x=0123456789abcdef; while true; do x=$x$x; done'],
    limits: { memory_bytes: 16 * 1024 * 1024 },
  });
  assert.equal(ran.result.state, 'failed');
  assert.equal(ran.result.outcome, 'oom_killed');
  assert.equal(ran.record.oom_killed, true);
  cleanupConfirmed(ran.record);
});

test('an output flood is cut at the bound, recorded as truncated, and stops the command', async () => {
  const bound = 4096;
  const ran = await run({ argv: ['/usr/bin/yes', 'flood'], limits: { output_bytes: bound } });
  assert.equal(ran.result.state, 'failed');
  assert.equal(ran.result.outcome, 'output_limit');
  assert.equal(Buffer.byteLength(ran.stdout), bound, 'exactly the bound is retained');
  const stdout = ran.record.stdout as { retained_bytes: number; observed_bytes: number; truncated: boolean };
  assert.equal(stdout.retained_bytes, bound);
  assert.equal(stdout.truncated, true);
  assert.ok(stdout.observed_bytes > bound);
  cleanupConfirmed(ran.record);
});

test('output exactly at the bound is kept whole and not truncated', async () => {
  const ran = await run({
    argv: ['/bin/sh', '-c', 'head -c 1000 /dev/zero | tr "\\0" x'],
    limits: { output_bytes: 1000 },
  });
  assert.equal(ran.result.state, 'succeeded');
  assert.equal(ran.stdout, 'x'.repeat(1000));
  assert.equal((ran.record.stdout as { truncated: boolean }).truncated, false);
});

test('a timeout kills the container and is recorded', async () => {
  const began = Date.now();
  const ran = await run({ argv: ['/bin/sleep', '30'], timeout_ms: 800 });
  assert.equal(ran.result.state, 'failed');
  assert.equal(ran.result.outcome, 'timed_out');
  assert.equal(ran.record.timed_out, true);
  assert.ok(Date.now() - began < 15_000, 'the 30 s sleep did not run to its end');
  cleanupConfirmed(ran.record);
});

test('a finished attempt is never run again: the same step returns its retained result', async () => {
  const repo = shared;
  const since = Math.floor(Date.now() / 1000) - 1;
  const request = stepRequest(repo, {
    runId: 'retained',
    change: 'retained',
    recipe: recipeBytes({ argv: ['/bin/true'] }),
  });
  const first = await runtime.run(request);
  const second = await runtime.run(request);
  assert.equal(first.state, 'succeeded');
  assert.deepEqual(second, first);
  assert.equal(await createEventsOf(first.attemptId, since), 1, 'one container was ever created for the attempt');
  assert.deepEqual(await containersOf(first.attemptId), []);
});

test('a missing image is a clear error naming it; nothing is reserved and nothing is pulled', async () => {
  const repo = shared;
  const request = stepRequest(repo, {
    runId: 'no-image',
    change: 'no-image',
    recipe: recipeBytes({ argv: ['/bin/true'], image: 'local/absent-image:1' }),
  });
  await assert.rejects(
    runtime.run(request),
    (error: Error & { code?: string }) =>
      error.code === 'IMAGE_NOT_FOUND' && error.message.includes('local/absent-image:1'),
  );
  const journal = openJournal(repo.dataDir, 'read');
  try {
    assert.equal(getCommandAttemptForStep(journal.db, 'no-image', 'check'), null);
  } finally {
    journal.close();
  }
});

test('a recipe whose bytes differ from the bound digest is refused before any reservation', async () => {
  const repo = shared;
  const request = stepRequest(repo, {
    runId: 'digest',
    change: 'digest',
    recipe: recipeBytes({ argv: ['/bin/true'] }),
  });
  await assert.rejects(runtime.run({ ...request, recipeDigest: 'f'.repeat(64) }), { code: 'RECIPE_DIGEST_MISMATCH' });
  assert.equal(existsSync(snapshotParentOf(repo)) ? readdirSync(snapshotParentOf(repo)).length : 0, 0);
});

test('an already-aborted signal records a cancelled attempt without creating a container', async () => {
  const repo = shared;
  const controller = new AbortController();
  controller.abort();
  const request = stepRequest(repo, {
    runId: 'aborted',
    change: 'aborted',
    recipe: recipeBytes({ argv: ['/bin/true'] }),
    signal: controller.signal,
  });
  const result = await runtime.run(request);
  assert.equal(result.state, 'failed');
  assert.equal(result.outcome, 'cancelled');
  assert.deepEqual(await containersOf(result.attemptId), []);
});

test('a signal during the run stops the container and records the cancellation', async () => {
  const repo = shared;
  const controller = new AbortController();
  const request = stepRequest(repo, {
    runId: 'cancel-mid',
    change: 'cancel-mid',
    recipe: recipeBytes({ argv: ['/bin/sleep', '30'] }),
    signal: controller.signal,
  });
  setTimeout(() => controller.abort(), 1500);
  const began = Date.now();
  const result = await runtime.run(request);
  assert.equal(result.state, 'failed');
  assert.equal(result.outcome, 'cancelled');
  assert.ok(Date.now() - began < 15_000);
  assert.deepEqual(await containersOf(result.attemptId), []);
});
