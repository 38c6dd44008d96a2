/**
 * Real controller processes stopped at exact points (the AGENTSCM_WORKFLOW_TEST_PAUSE hook of
 * src/workflows/runner.ts): SIGKILL mid-run and reopen, two controllers on one run, cancel
 * while a controller is between steps, and SIGTERM.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import {
  definition,
  makeStore,
  SKILL_PATH,
  SKILL_TEXT,
  sourcePaths,
  writeDefinition,
  type Store,
} from '../support/workflows.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

interface Controller {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves when the pause marker appears on stderr. */
  readonly paused: Promise<void>;
  /** Resolves with the exit code (null after a signal) and stdout. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function startController(t: TestContext, args: readonly string[], pause: string, release?: string): Controller {
  const env: Record<string, string | undefined> = {
    ...process.env,
    AGENTSCM_DATA_DIR: undefined,
    AGENTSCM_WORKFLOW_TEST_PAUSE: pause,
    AGENTSCM_WORKFLOW_TEST_RELEASE: release,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const paused = new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('agentscm-test-pause')) resolve();
    });
    child.on('close', () => reject(new Error(`controller exited before pausing:\n${stderr}`)));
  });
  paused.catch(() => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => {
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    },
  );
  return { child, paused, exited };
}

function fourSteps(t: TestContext): { store: Store; file: string; release: string } {
  const dir = tempDir(t);
  const store = makeStore(join(dir, 'data'), {
    [SKILL_PATH]: SKILL_TEXT,
    'a.txt': 'a',
    'b.txt': 'b',
    'c.txt': 'c',
    'd.txt': 'd',
  });
  const file = writeDefinition(
    dir,
    'wf.json',
    definition(store, [
      { id: 's1', action: sourcePaths(store, ['a.txt']) },
      { id: 's2', needs: ['s1'], action: sourcePaths(store, ['b.txt']) },
      { id: 's3', needs: ['s2'], action: sourcePaths(store, ['c.txt']) },
      { id: 's4', action: sourcePaths(store, ['d.txt']) },
    ]),
  );
  return { store, file, release: join(dir, 'release') };
}

async function status(store: Store, runId: string): Promise<Loose> {
  const result = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'status', runId, '--json']);
  assert.equal(result.code, 0, result.stderr);
  return jsonOf<Loose>(result);
}

test('SIGKILL after a step commit: a second controller meets the lease; reopening runs no recorded step again', async (t) => {
  const { store, file } = fourSteps(t);
  const controller = startController(
    t,
    ['--data-dir', store.dataDir, 'skill-workflow', 'run', 'crash-1', file],
    'after-commit:s2',
  );
  await controller.paused;

  const second = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'run', 'crash-1', file, '--json']);
  assert.equal(second.code, 3, second.stderr);
  assert.equal(jsonOf<Loose>(second).error.code, 'WORKFLOW_JOURNAL_ACTIVE');
  assert.match(second.stderr, /workflow journal is active/);
  const during = await status(store, 'crash-1');
  assert.equal(during.controller.active, true);
  assert.deepEqual(
    during.steps.map((s: Loose) => String(s.state)),
    ['succeeded', 'succeeded', 'pending', 'pending'],
  );

  controller.child.kill('SIGKILL');
  const killed = await controller.exited;
  assert.equal(killed.signal, 'SIGKILL');

  const after = await status(store, 'crash-1');
  assert.equal(after.controller.active, false, 'a dead local holder does not keep the lease');
  const resumed = await runCli([
    '--data-dir',
    store.dataDir,
    'skill-workflow',
    'resume',
    'crash-1',
    '--max-steps',
    '32',
    '--json',
  ]);
  assert.equal(resumed.code, 0, resumed.stderr);
  const done = jsonOf<Loose>(resumed);
  assert.equal(done.state, 'completed');
  assert.equal(done.executed, 2);
  // The two recorded steps were not run again: same timestamps, same observations.
  assert.deepEqual(done.steps.slice(0, 2), during.steps.slice(0, 2));
});

test('SIGKILL before a step commit: the step is not marked done and runs once on reopen', async (t) => {
  const { store, file } = fourSteps(t);
  const controller = startController(
    t,
    ['--data-dir', store.dataDir, 'skill-workflow', 'run', 'crash-2', file],
    'before-commit:s2',
  );
  await controller.paused;
  controller.child.kill('SIGKILL');
  await controller.exited;
  const after = await status(store, 'crash-2');
  assert.deepEqual(
    after.steps.map((s: Loose) => String(s.state)),
    ['succeeded', 'pending', 'pending', 'pending'],
  );
  assert.equal(after.steps[1].result, null);
  const resumed = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'run', 'crash-2', file, '--json']);
  assert.equal(resumed.code, 0, resumed.stderr);
  const done = jsonOf<Loose>(resumed);
  assert.equal(done.state, 'completed');
  assert.equal(done.executed, 3);
  assert.deepEqual(done.steps[0], after.steps[0]);
});

test('cancel while a controller is between steps: the controller stops before its next step', async (t) => {
  const { store, file, release } = fourSteps(t);
  const controller = startController(
    t,
    ['--data-dir', store.dataDir, 'skill-workflow', 'run', 'cancel-1', file, '--json'],
    'after-commit:s1',
    release,
  );
  await controller.paused;
  const cancel = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'cancel', 'cancel-1', '--json']);
  assert.equal(cancel.code, 0, cancel.stderr);
  assert.equal(jsonOf<Loose>(cancel).state, 'cancelled');
  writeFileSync(release, '');
  const finished = await controller.exited;
  assert.equal(finished.code, 1, finished.stderr);
  const report: Loose = JSON.parse(finished.stdout);
  assert.equal(report.state, 'cancelled');
  assert.equal(report.executed, 1);
  assert.deepEqual(
    report.steps.map((s: Loose) => String(s.state)),
    ['succeeded', 'not_run', 'not_run', 'not_run'],
  );
});

test('SIGTERM: the controller finishes the current step, records it, and stops with the run still running', async (t) => {
  const { store, file, release } = fourSteps(t);
  const controller = startController(
    t,
    ['--data-dir', store.dataDir, 'skill-workflow', 'run', 'term-1', file, '--json'],
    'after-commit:s1',
    release,
  );
  await controller.paused;
  controller.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 500));
  writeFileSync(release, '');
  const finished = await controller.exited;
  assert.equal(finished.code, 1, finished.stderr);
  assert.match(finished.stderr, /received SIGTERM/);
  const report: Loose = JSON.parse(finished.stdout);
  assert.equal(report.state, 'running');
  assert.equal(report.waiting.reason, 'interrupted');
  assert.deepEqual(
    report.steps.map((s: Loose) => String(s.state)),
    ['succeeded', 'pending', 'pending', 'pending'],
  );
  const after = await status(store, 'term-1');
  assert.equal(after.controller.active, false, 'the lease was released');
});
