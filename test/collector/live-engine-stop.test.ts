/**
 * The engine stopped mid-run gives an uncertain record, not a pass (issue 4 "Tests"). The
 * shared engine is not touched: the test starts a private engine with the project's own
 * script (bin/start-runtime.sh with its RUNTIME_* settings), stops it by PID while a command
 * runs, then starts it again and reconciles the attempt's custody.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

import { createCommandStepRuntime } from '../../src/collector/command-step-runtime.js';
import { reconcileCommandAttempt } from '../../src/collector/custody.js';
import { DockerClient } from '../../src/collector/docker-client.js';
import { createUnixSocketTransport } from '../../src/collector/docker-transport.js';
import { commandAttemptId, getCommandAttempt } from '../../src/workflows/command-attempts.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { DOCKER_EXE, makeSuiteRepo, recipeBytes, requireEngine, stepRequest } from '../support/collector.js';
import { openJournal } from '../support/journal.js';

const run = promisify(execFile);
/** Kept between runs so the image import happens once per machine. */
const ROOT = '/var/tmp/agentscm-test-engine-stop';
const SOCKET = join(ROOT, 'docker.sock');
const ENV = {
  ...process.env,
  RUNTIME_SOCK: SOCKET,
  RUNTIME_DATA_ROOT: join(ROOT, 'data-root'),
  RUNTIME_EXEC_ROOT: join(ROOT, 'exec-root'),
  RUNTIME_PIDFILE: join(ROOT, 'docker.pid'),
  RUNTIME_LOG: join(ROOT, 'dockerd.log'),
  RUNTIME_LOCKFILE: join(ROOT, 'start.lock'),
};

async function engine(action: 'start' | 'stop'): Promise<void> {
  await run('bash', [join(REPO_ROOT, 'bin', 'start-runtime.sh'), action], { env: ENV, timeout: 300_000 });
}

async function containerState(client: DockerClient, name: string): Promise<string | null> {
  return (await client.inspectContainer(name))?.status ?? null;
}

before(async () => {
  await requireEngine();
  mkdirSync(ROOT, { recursive: true, mode: 0o700 });
  await engine('start');
});

after(async () => {
  await engine('stop');
});

test('stopping the engine mid-run records uncertain (never a pass); recover then confirms custody', async () => {
  const repo = makeSuiteRepo({ 'a.txt': 'a\n' });
  try {
    const runtime = await createCommandStepRuntime({ docker: DOCKER_EXE, dockerSocket: SOCKET, drainMs: 500 });
    // Exits at once on the engine's SIGTERM, so the stop does not wait out a grace period.
    const recipe = recipeBytes({ argv: ['/bin/sh', '-c', 'trap "exit 0" TERM; sleep 60 & wait'], timeout_ms: 120_000 });
    const request = stepRequest(repo, { runId: 'engine-stop', change: 'engine-stop', recipe });
    const attemptId = commandAttemptId(request.repository, 'engine-stop', 'check', 1n);
    const running = runtime.run(request);

    const probe = await DockerClient.connect(createUnixSocketTransport(SOCKET));
    const deadline = Date.now() + 60_000;
    while ((await containerState(probe, `agentscm-${attemptId}`)) !== 'running') {
      assert.ok(Date.now() < deadline, 'the container never started');
      await sleep(100);
    }
    await probe.close();
    await engine('stop');

    const result = await running;
    await runtime.close();
    assert.equal(result.state, 'uncertain', 'a run the engine could not finish is never a pass');
    const journal = openJournal(repo.dataDir, 'write');
    try {
      const attempt = getCommandAttempt(journal.db, attemptId);
      assert.equal(attempt.state, 'uncertain');
      assert.ok(attempt.record_json !== null);
      const record = JSON.parse(attempt.record_json.toString('utf8')) as {
        outcome: string;
        cleanup: { confirmed: boolean };
        error: string;
      };
      assert.equal(record.outcome, 'uncertain');
      assert.match(record.error, /stopped from outside|did not answer|connect|socket/);
      // Depending on how far the engine's shutdown got, cleanup was confirmed or not; the
      // snapshot stays exactly while it was not.
      assert.equal(existsSync(attempt.snapshot_path), !record.cleanup.confirmed);

      await engine('start');
      const client = await DockerClient.connect(createUnixSocketTransport(SOCKET));
      try {
        const recovered = await reconcileCommandAttempt(client, journal, attempt);
        assert.equal(recovered.custody?.confirmed, true);
        assert.notEqual(recovered.result.state, 'succeeded');
        assert.equal(await containerState(client, `agentscm-${attemptId}`), null, 'the container is gone');
        assert.ok(!existsSync(attempt.snapshot_path));
      } finally {
        await client.close();
      }
    } finally {
      journal.close();
    }
  } finally {
    repo.remove();
  }
});
