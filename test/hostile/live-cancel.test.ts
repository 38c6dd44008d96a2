/**
 * Hostile reproducer: cancelling a live command from another terminal. Two real processes
 * and the real engine (local/busybox:1 at AGENTSCM_TEST_DOCKER_SOCKET; these tests fail, not
 * skip, without it): a controller runs a command step, and `skill-workflow cancel` with the
 * runtime flags, from a second process, must stop the container (custody by label) instead of
 * failing with WORKFLOW_JOURNAL_ACTIVE for the recipe's whole timeout; the controller must then
 * record the attempt as cancelled (not uncertain) and end with the run cancelled.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { DockerClient } from '../../src/collector/docker-client.js';
import { createUnixSocketTransport } from '../../src/collector/docker-transport.js';
import { LABELS, runContainer } from '../../src/collector/oci-command-collector.js';
import { decodeCommandRecipe } from '../../src/contracts/collector/command-recipe.js';
import { commandAttemptId } from '../../src/workflows/command-attempts.js';
import { journalWrite, updateRunState } from '../../src/workflows/journal.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { tempDir } from '../helpers/tmp.js';
import {
  containersOf,
  createEventsOf,
  DOCKER_SOCKET,
  IMAGE,
  recipeBytes,
  requireEngine,
} from '../support/collector.js';
import { openJournal } from '../support/journal.js';
import { noDockerOnPath } from '../support/runtime.js';

const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';
const RUNTIME = ['--docker', DOCKER, '--docker-socket', DOCKER_SOCKET];

before(async () => {
  await requireEngine();
});

interface Demo {
  readonly dataDir: string;
  readonly workflow: string;
  readonly repository: string;
}

async function cli(demo: Pick<Demo, 'dataDir'>, args: string[]): Promise<Awaited<ReturnType<typeof runCli>>> {
  return runCli(['--data-dir', demo.dataDir, ...args]);
}

/** The scenario world, no requirement installed, whose one command step sleeps a minute (timeout two). */
async function makeDemo(t: TestContext): Promise<Demo> {
  const s = await buildScenario(t, {
    argv: ['/bin/sleep', '60'],
    timeoutMs: 120_000,
    enrollStep: null,
    requirement: false,
  });
  return { dataDir: s.dataDir, workflow: s.workflowFile, repository: s.repository };
}

interface Controller extends ChildProcess {
  stdoutText(): string;
  stderrText(): string;
  done: Promise<number | null>;
}

function spawnController(demo: Demo, runId: string): Controller {
  const child = spawn(
    process.execPath,
    [
      ...cliEntryArgv(),
      '--data-dir',
      demo.dataDir,
      'skill-workflow',
      'run',
      runId,
      demo.workflow,
      ...RUNTIME,
      '--json',
    ],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const done = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return Object.assign(child, {
    stdoutText: () => Buffer.concat(out).toString('utf8'),
    stderrText: () => Buffer.concat(err).toString('utf8'),
    done,
  });
}

async function waitForRunningContainer(attemptId: string, child: Controller): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the controller exited early (${child.exitCode}): ${child.stderrText()}`);
    if ((await containersOf(attemptId)).some((c) => c.State === 'running')) return;
    await sleep(100);
  }
  throw new Error('no running container appeared');
}

interface StepJson {
  id: string;
  state: string;
  execution: { attempt_id: string; state: string; outcome: string | null; record_digest: string | null } | null;
}

test(
  'cancel with the runtime flags from another process stops a live command; the controller records ' +
    'it as cancelled',
  async (t) => {
    const demo = await makeDemo(t);
    const runId = 'live-cancel';
    const attemptId = commandAttemptId(demo.repository, runId, 'check', 1n);
    const since = Math.floor(Date.now() / 1000) - 1;
    const controller = spawnController(demo, runId);
    t.after(() => {
      if (controller.exitCode === null) controller.kill('SIGKILL');
    });
    await waitForRunningContainer(attemptId, controller);

    const began = Date.now();
    const cancel = await cli(demo, ['skill-workflow', 'cancel', runId, ...RUNTIME, '--json']);
    assert.equal(cancel.code, 0, `cancel succeeded: ${cancel.stdout}${cancel.stderr}`);
    assert.ok(Date.now() - began < 45_000, 'cancel did not wait for the recipe timeout');
    const cancelled = jsonOf<{ state: string; cancelled_now: boolean; steps: StepJson[] }>(cancel);
    assert.equal(cancelled.state, 'cancelled');
    assert.equal(cancelled.cancelled_now, true);

    // The controller saw its container stopped by the cancellation and ended on its own.
    const code = await controller.done;
    assert.equal(code, 1, controller.stderrText());
    const report = jsonOf<{ state: string; waiting: unknown }>({
      code,
      signal: null,
      stdout: controller.stdoutText(),
      stderr: controller.stderrText(),
      stdoutBytes: Buffer.alloc(0),
    });
    assert.equal(report.state, 'cancelled');
    assert.equal(report.waiting, null);

    const status = await cli(demo, ['skill-workflow', 'status', runId, '--json']);
    assert.equal(status.code, 0, status.stderr);
    const statusJson = jsonOf<{ state: string; steps: StepJson[] }>(status);
    assert.equal(statusJson.state, 'cancelled');
    const step = statusJson.steps.find((s) => s.id === 'check');
    assert.equal(step?.state, 'failed');
    assert.equal(step?.execution?.state, 'failed');
    assert.equal(step?.execution?.outcome, 'cancelled', 'cancelled, not uncertain: the stop was the cancellation');

    const show = await cli(demo, ['check-command-show', attemptId, '--json']);
    assert.equal(show.code, 0, show.stderr);
    const record = jsonOf<{
      record: { outcome: string; cancelled: boolean; recovered: boolean; cleanup: { confirmed: boolean } };
    }>(show).record;
    assert.equal(record.outcome, 'cancelled');
    assert.equal(record.cancelled, true);
    assert.equal(record.recovered, false, 'the live controller wrote the record, not a reconciliation');
    assert.equal(record.cleanup.confirmed, true);

    assert.deepEqual(await containersOf(attemptId), [], 'the container is gone');
    assert.equal(await createEventsOf(attemptId, since), 1, 'nothing was run again');
    assert.deepEqual(readdirSync(join(demo.dataDir, 'collector', 'snapshots')), [], 'the snapshot was removed');

    const again = await cli(demo, ['skill-workflow', 'cancel', runId, '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(jsonOf<{ cancelled_now: boolean }>(again).cancelled_now, false, 'cancelling again is a no-op');
  },
);

test('the cancel itself stops the container by its custody label, even while the controller cannot act', async (t) => {
  const demo = await makeDemo(t);
  const runId = 'live-cancel-frozen';
  const attemptId = commandAttemptId(demo.repository, runId, 'check', 1n);
  const controller = spawnController(demo, runId);
  t.after(() => {
    if (controller.exitCode === null) controller.kill('SIGKILL');
  });
  await waitForRunningContainer(attemptId, controller);
  // A frozen controller neither watches the run nor kills anything: only the cancel can.
  controller.kill('SIGSTOP');
  const cancel = cli(demo, ['skill-workflow', 'cancel', runId, ...RUNTIME, '--json']);
  let stopped = false;
  const deadline = Date.now() + 40_000;
  while (!stopped && Date.now() < deadline) {
    await sleep(200);
    stopped = !(await containersOf(attemptId)).some((c) => c.State === 'running');
  }
  controller.kill('SIGCONT');
  assert.ok(stopped, 'the cancel stopped the container while the controller was frozen');
  const result = await cancel;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(jsonOf<{ state: string }>(result).state, 'cancelled');
  assert.equal(await controller.done, 1, controller.stderrText());
  const status = jsonOf<{ steps: StepJson[] }>(await cli(demo, ['skill-workflow', 'status', runId, '--json']));
  assert.equal(status.steps.find((s) => s.id === 'check')?.execution?.outcome, 'cancelled');
  assert.deepEqual(await containersOf(attemptId), []);
});

test('a controller that dies while a cancel waits for it: the cancel reconciles the stopped attempt itself', async (t) => {
  const demo = await makeDemo(t);
  const runId = 'live-cancel-dies';
  const attemptId = commandAttemptId(demo.repository, runId, 'check', 1n);
  const controller = spawnController(demo, runId);
  t.after(() => {
    if (controller.exitCode === null) controller.kill('SIGKILL');
  });
  await waitForRunningContainer(attemptId, controller);
  controller.kill('SIGSTOP');
  const cancel = cli(demo, ['skill-workflow', 'cancel', runId, ...RUNTIME, '--json']);
  const deadline = Date.now() + 40_000;
  while (Date.now() < deadline && (await containersOf(attemptId)).some((c) => c.State === 'running')) await sleep(200);
  // The cancel stopped the container and waits for the controller's record; the controller dies.
  controller.kill('SIGKILL');
  await controller.done;
  const result = await cancel;
  assert.equal(result.code, 0, result.stderr);
  const report = jsonOf<{ state: string; steps: StepJson[] }>(result);
  assert.equal(report.state, 'cancelled');
  const step = report.steps.find((s) => s.id === 'check');
  assert.equal(step?.state, 'failed', 'the step is recorded, not left running');
  assert.equal(step?.execution?.outcome, 'cancelled');
  assert.deepEqual(await containersOf(attemptId), [], 'the stopped container was removed');
  assert.deepEqual(readdirSync(join(demo.dataDir, 'collector', 'snapshots')), [], 'the snapshot was removed');
});

test('a cancellation recorded while the command runs stops it even when the cancel never reached the engine', async (t) => {
  // Fault injection: the run is recorded cancelled, as `skill-workflow cancel` does first, but
  // its stop of the container never happens (a cancel that lost the engine or died there).
  const demo = await makeDemo(t);
  const runId = 'live-cancel-lost-stop';
  const attemptId = commandAttemptId(demo.repository, runId, 'check', 1n);
  const controller = spawnController(demo, runId);
  t.after(() => {
    if (controller.exitCode === null) controller.kill('SIGKILL');
  });
  await waitForRunningContainer(attemptId, controller);
  const journal = openJournal(demo.dataDir, 'write');
  try {
    journalWrite(journal, () => updateRunState(journal, runId, 'cancelled', 'cancelled by the operator', Date.now()));
  } finally {
    journal.close();
  }
  const began = Date.now();
  assert.equal(await controller.done, 1, controller.stderrText());
  assert.ok(Date.now() - began < 30_000, 'the controller stopped the command itself, long before its 60 s sleep ended');
  const status = jsonOf<{ state: string; steps: StepJson[] }>(
    await cli(demo, ['skill-workflow', 'status', runId, '--json']),
  );
  assert.equal(status.state, 'cancelled');
  assert.equal(status.steps.find((s) => s.id === 'check')?.execution?.outcome, 'cancelled');
  assert.deepEqual(await containersOf(attemptId), []);
});

test('cancel with no runtime (no flags, no docker on PATH) cannot stop a live command: refused, nothing changes', async (t) => {
  const demo = await makeDemo(t);
  const runId = 'live-cancel-bare';
  const attemptId = commandAttemptId(demo.repository, runId, 'check', 1n);
  const controller = spawnController(demo, runId);
  t.after(() => {
    if (controller.exitCode === null) controller.kill('SIGKILL');
  });
  await waitForRunningContainer(attemptId, controller);

  const bare = await runCli(['--data-dir', demo.dataDir, 'skill-workflow', 'cancel', runId, '--json'], {
    env: noDockerOnPath(demo.dataDir),
  });
  assert.equal(bare.code, 3, bare.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(bare).error.code, 'WORKFLOW_JOURNAL_ACTIVE');
  const status = jsonOf<{ state: string }>(await cli(demo, ['skill-workflow', 'status', runId, '--json']));
  assert.equal(status.state, 'running');
  assert.ok(
    (await containersOf(attemptId)).some((c) => c.State === 'running'),
    'the command still runs',
  );

  controller.kill('SIGTERM');
  assert.equal(await controller.done, 1);
  assert.deepEqual(await containersOf(attemptId), []);
});

test('a step whose run is already cancelled when its container would be created creates none', async (t) => {
  // The cancel came between the controller marking the step running and creating the
  // container: there was no running attempt to stop, so the controller must not start one.
  const client = await DockerClient.connect(createUnixSocketTransport(DOCKER_SOCKET));
  t.after(() => client.close());
  const imageId = (await client.inspectImage(IMAGE)).id;
  const attempt = `hostile-precancel-${process.pid}-${Date.now()}`;
  const since = Math.floor(Date.now() / 1000) - 1;
  const observation = await runContainer({
    client,
    containerName: `agentscm-${attempt}`,
    labels: { [LABELS.managed]: '1', [LABELS.attempt]: attempt },
    recipe: decodeCommandRecipe(recipeBytes({ argv: ['/bin/true'] })),
    imageId,
    snapshotPath: tempDir(t),
    cancelRequested: () => true,
  });
  assert.equal(observation.outcome, 'cancelled');
  assert.equal(observation.cancelled, true);
  assert.equal(observation.containerId, null);
  assert.equal(observation.containerCleanup, 'not_created');
  assert.equal(await createEventsOf(attempt, since), 0, 'no container was created');
});
