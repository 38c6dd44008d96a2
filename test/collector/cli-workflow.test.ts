/**
 * The command collector as a user drives it, through the real CLI and the real engine:
 * init-repo → checkpoint → context create → plan → skill-workflow run with --docker /
 * --docker-socket → status shows the execution member → check-command-show; a controller
 * killed with SIGKILL mid-command, then recover (no second container); SIGINT and SIGTERM cancellation;
 * cancel of an orphaned attempt; runtime-probe.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { commandAttemptId } from '../../src/workflows/command-attempts.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { tempDir } from '../helpers/tmp.js';
import { containersOf, createEventsOf, DOCKER_SOCKET, requireEngine, type RecipeFields } from '../support/collector.js';
import { noDockerOnPath } from '../support/runtime.js';

/** The operator-selected executable: docker.io's client when installed, else any executable. */
const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';
const RUNTIME = ['--docker', DOCKER, '--docker-socket', DOCKER_SOCKET];

before(async () => {
  await requireEngine();
});

interface Demo {
  readonly root: string;
  readonly dataDir: string;
  readonly workflow: string;
  readonly repository: string;
  readonly contextDigest: string;
}

async function cli(demo: Pick<Demo, 'dataDir'>, args: string[]): Promise<Awaited<ReturnType<typeof runCli>>> {
  return runCli(['--data-dir', demo.dataDir, ...args]);
}

/** The scenario with a recipe running `fields`, checkpointed, with a context and a workflow file. */
async function makeDemo(t: TestContext, fields: Pick<RecipeFields, 'argv' | 'timeout_ms'>): Promise<Demo> {
  const world = await buildScenario(t, {
    argv: fields.argv,
    ...(fields.timeout_ms === undefined ? {} : { timeoutMs: fields.timeout_ms }),
    files: { 'hello.txt': 'hello from the revision\n' },
    requirement: false,
    enrollStep: null,
  });
  assert.match(world.contextDigest, /^[0-9a-f]{64}$/);
  return {
    root: world.root,
    dataDir: world.dataDir,
    workflow: world.workflowFile,
    repository: world.repository,
    contextDigest: world.contextDigest,
  };
}

interface StepJson {
  id: string;
  state: string;
  execution: {
    attempt_id: string;
    generation: number;
    state: string;
    outcome: string | null;
    record_digest: string | null;
  } | null;
}

async function stepOf(demo: Demo, runId: string): Promise<StepJson> {
  const status = await cli(demo, ['skill-workflow', 'status', runId, '--json']);
  assert.equal(status.code, 0, status.stderr);
  const step = jsonOf<{ steps: StepJson[] }>(status).steps.find((s) => s.id === 'check');
  assert.ok(step !== undefined);
  return step;
}

function spawnRun(demo: Demo, runId: string): ChildProcess & { stderrText: () => string } {
  const child = spawn(
    process.execPath,
    [...cliEntryArgv(), '--data-dir', demo.dataDir, 'skill-workflow', 'run', runId, demo.workflow, ...RUNTIME],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const chunks: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stdout.resume();
  return Object.assign(child, { stderrText: () => Buffer.concat(chunks).toString('utf8') });
}

async function waitForRunningContainer(
  attemptId: string,
  child: ChildProcess & { stderrText: () => string },
): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the controller exited early (${child.exitCode}): ${child.stderrText()}`);
    const containers = await containersOf(attemptId);
    if (containers.some((c) => c.State === 'running')) return;
    await sleep(100);
  }
  throw new Error('no running container appeared');
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

test('end to end: run executes the command step, status shows the execution member, check-command-show the record', async (t) => {
  const demo = await makeDemo(t, { argv: ['/bin/sh', '-c', 'cat /src/hello.txt'] });
  const plan = await cli(demo, ['skill-workflow', 'plan', demo.workflow, '--json']);
  assert.equal(plan.code, 0, plan.stderr);

  const run = await cli(demo, ['skill-workflow', 'run', 'r1', demo.workflow, ...RUNTIME, '--json']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(jsonOf<{ state: string }>(run).state, 'completed');

  const step = await stepOf(demo, 'r1');
  assert.equal(step.state, 'succeeded');
  assert.ok(step.execution !== null);
  assert.equal(step.execution.attempt_id, commandAttemptId(demo.repository, 'r1', 'check', 1n));
  assert.equal(step.execution.generation, 1);
  assert.equal(step.execution.state, 'succeeded');
  assert.equal(step.execution.outcome, 'passed');
  assert.match(step.execution.record_digest ?? '', /^[0-9a-f]{64}$/);

  const show = await cli(demo, ['check-command-show', step.execution.attempt_id, '--json']);
  assert.equal(show.code, 0, show.stderr);
  const view = jsonOf<{
    record_digest: string;
    stdout: { text: string };
    record: { outcome: string; exit_code: number };
    request: { runtime_identity_digest: string; context_digest: string };
  }>(show);
  assert.equal(view.stdout.text, 'hello from the revision\n');
  assert.equal(view.record_digest, step.execution.record_digest);
  assert.equal(view.record.outcome, 'passed');
  assert.equal(view.record.exit_code, 0);
  assert.equal(view.request.context_digest, demo.contextDigest);

  const human = await cli(demo, ['check-command-show', step.execution.attempt_id]);
  assert.equal(human.code, 0);
  assert.match(human.stdout, /hello from the revision/);

  const probe = await runCli(['agent-task', 'runtime-probe', ...RUNTIME, '--image', 'local/busybox:1', '--json']);
  assert.equal(probe.code, 0, probe.stderr);
  const identity = jsonOf<{ identity_sha256: string; identity: { image: { id: string }; executable_sha256: string } }>(
    probe,
  );
  assert.equal(
    identity.identity_sha256,
    view.request.runtime_identity_digest,
    'the step ran under the probed runtime identity',
  );
  assert.match(identity.identity.image.id, /^sha256:[0-9a-f]{64}$/);

  const again = await cli(demo, ['skill-workflow', 'run', 'r1', demo.workflow, ...RUNTIME, '--json']);
  assert.equal(again.code, 0);
  assert.equal(
    (await stepOf(demo, 'r1')).execution?.record_digest,
    step.execution.record_digest,
    'reopening the run does not run the command again',
  );
});

test('the built CLI (bin/run.js over dist/) runs the command step in a container too', async (t) => {
  // The collector runtime is a chunk of its own in the bundle, reached through a dynamic import.
  const demo = await makeDemo(t, { argv: ['/bin/sh', '-c', 'cat /src/hello.txt'] });
  const run = await runCli(
    ['--data-dir', demo.dataDir, 'skill-workflow', 'run', 'r-built', demo.workflow, ...RUNTIME, '--json'],
    { entry: 'built' },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(jsonOf<{ state: string }>(run).state, 'completed');
  const step = await stepOf(demo, 'r-built');
  assert.equal(step.execution?.outcome, 'passed');
  const show = await runCli(
    ['--data-dir', demo.dataDir, 'check-command-show', step.execution?.attempt_id ?? '', '--json'],
    { entry: 'built' },
  );
  assert.equal(jsonOf<{ stdout: { text: string } }>(show).stdout.text, 'hello from the revision\n');
});

test('SIGKILL mid-command leaves a running attempt; recover finalizes it without a second container', async (t) => {
  const demo = await makeDemo(t, { argv: ['/bin/sleep', '60'], timeout_ms: 120_000 });
  const attemptId = commandAttemptId(demo.repository, 'r2', 'check', 1n);
  const since = Math.floor(Date.now() / 1000) - 1;
  const child = spawnRun(demo, 'r2');
  await waitForRunningContainer(attemptId, child);
  child.kill('SIGKILL');
  await exited(child);

  const running = await stepOf(demo, 'r2');
  assert.equal(running.state, 'running');
  assert.equal(running.execution?.state, 'running');
  assert.equal(running.execution?.outcome, null);

  const resumed = await cli(demo, ['skill-workflow', 'resume', 'r2', ...RUNTIME, '--json']);
  assert.equal(resumed.code, 1, 'resume stops at the unfinished attempt');
  assert.equal(
    jsonOf<{ waiting: { reason: string; attempt_id: string } }>(resumed).waiting.reason,
    'command_attempt_unfinished',
  );
  assert.equal((await containersOf(attemptId)).length, 1, 'resume started nothing');

  const recover = await cli(demo, ['skill-workflow', 'recover', 'r2', 'check', ...RUNTIME, '--json']);
  assert.equal(recover.code, 0, recover.stderr);
  const report = jsonOf<{
    state: string;
    outcome: string;
    reconciled: boolean;
    step_state: string;
    custody: { containers_found: number; confirmed: boolean };
  }>(recover);
  assert.equal(report.state, 'failed');
  assert.equal(report.outcome, 'interrupted');
  assert.equal(report.reconciled, true);
  assert.equal(report.custody.containers_found, 1);
  assert.equal(report.custody.confirmed, true);
  assert.equal(report.step_state, 'failed');

  assert.deepEqual(await containersOf(attemptId), []);
  assert.equal(await createEventsOf(attemptId, since), 1, 'exactly one container was ever created for the attempt');
  assert.deepEqual(readdirSync(join(demo.dataDir, 'collector', 'snapshots')), [], 'the snapshot was removed');
  const step = await stepOf(demo, 'r2');
  assert.equal(step.state, 'failed');
  assert.equal(step.execution?.outcome, 'interrupted');

  const twice = await cli(demo, ['skill-workflow', 'recover', 'r2', 'check', ...RUNTIME, '--json']);
  assert.equal(twice.code, 0);
  assert.equal(jsonOf<{ reconciled: boolean }>(twice).reconciled, false);
  assert.equal(await createEventsOf(attemptId, since), 1);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} stops the running container, records the cancellation and cleans up`, async (t) => {
    const runId = `r3-${signal.toLowerCase()}`;
    const demo = await makeDemo(t, { argv: ['/bin/sleep', '60'], timeout_ms: 120_000 });
    const attemptId = commandAttemptId(demo.repository, runId, 'check', 1n);
    const child = spawnRun(demo, runId);
    await waitForRunningContainer(attemptId, child);
    child.kill(signal);
    const { code } = await exited(child);
    assert.equal(code, 1, child.stderrText());
    const step = await stepOf(demo, runId);
    assert.equal(step.execution?.state, 'failed');
    assert.equal(step.execution?.outcome, 'cancelled');
    assert.deepEqual(await containersOf(attemptId), []);
  });
}

test('cancel needs the runtime flags only while an attempt is running, then stops and records it', async (t) => {
  const demo = await makeDemo(t, { argv: ['/bin/sleep', '60'], timeout_ms: 120_000 });
  const attemptId = commandAttemptId(demo.repository, 'r4', 'check', 1n);
  const child = spawnRun(demo, 'r4');
  await waitForRunningContainer(attemptId, child);
  child.kill('SIGKILL');
  await exited(child);

  // No docker on PATH and no --docker: no runtime, so the attempt cannot be stopped.
  const bare = await runCli(['--data-dir', demo.dataDir, 'skill-workflow', 'cancel', 'r4', '--json'], {
    env: noDockerOnPath(demo.dataDir),
  });
  assert.notEqual(bare.code, 0);
  assert.equal(jsonOf<{ error: { code: string } }>(bare).error.code, 'WORKFLOW_COMMAND_ATTEMPT_UNFINISHED');
  assert.equal((await containersOf(attemptId)).length, 1, 'without the runtime nothing was touched');

  const cancel = await cli(demo, ['skill-workflow', 'cancel', 'r4', ...RUNTIME, '--json']);
  assert.equal(cancel.code, 0, cancel.stderr);
  assert.equal(jsonOf<{ state: string }>(cancel).state, 'cancelled');
  const step = await stepOf(demo, 'r4');
  assert.equal(step.execution?.state, 'failed');
  assert.equal(step.execution?.outcome, 'cancelled');
  assert.notEqual(step.state, 'running');
  assert.deepEqual(await containersOf(attemptId), []);
});

test('an empty runtime flag is refused; runtime-probe refuses a missing image', async (t) => {
  const dataDir = tempDir(t);
  const empty = await runCli(['--data-dir', dataDir, 'skill-workflow', 'recover', 'r', 's', '--docker', '', '--json']);
  assert.equal(empty.code, 2, empty.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(empty).error.code, 'RUNTIME_FLAGS_INVALID');
  const missing = await runCli(['agent-task', 'runtime-probe', ...RUNTIME, '--image', 'local/not-there:1', '--json']);
  assert.equal(missing.code, 4);
  assert.equal(jsonOf<{ error: { code: string } }>(missing).error.code, 'IMAGE_NOT_FOUND');
  assert.match(missing.stderr, /local\/not-there:1/);
  const noSocket = await runCli([
    'agent-task',
    'runtime-probe',
    '--docker',
    DOCKER,
    '--docker-socket',
    join(dataDir, 'none.sock'),
    '--image',
    'local/busybox:1',
  ]);
  assert.equal(noSocket.code, 4);
  assert.match(noSocket.stderr, /error\[RUNTIME_UNAVAILABLE\]/);
});
