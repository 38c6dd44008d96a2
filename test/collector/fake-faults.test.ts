/**
 * Faults the real engine cannot produce on demand, through the fake transport (issue 4
 * "Tests": lost result, unknown cleanup), plus the Engine API version negotiation and the
 * exact isolation settings sent to the engine.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import test from 'node:test';

import { createCommandStepRuntime, type CommandRuntimeHandle } from '../../src/collector/command-step-runtime.js';
import { reconcileCommandAttempt } from '../../src/collector/custody.js';
import { DockerClient, MAX_API_VERSION } from '../../src/collector/docker-client.js';
import { FakeDockerEngine, type FakeScript } from '../../src/collector/fake-transport.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { getCommandAttempt } from '../../src/workflows/command-attempts.js';
import { DOCKER_EXE, makeRepo, recipeBytes, stepRequest, type Repo } from '../support/collector.js';
import { openJournal } from '../support/journal.js';

const IMAGE_ID = `sha256:${'a'.repeat(64)}`;

function fakeEngine(
  script: FakeScript = { exitCode: 0, stdout: 'ok\n' },
  options: { apiVersion?: string; minApiVersion?: string } = {},
): FakeDockerEngine {
  return new FakeDockerEngine({ images: { 'local/busybox:1': IMAGE_ID }, script: () => script, ...options });
}

async function runtimeFor(t: test.TestContext, engine: FakeDockerEngine): Promise<CommandRuntimeHandle> {
  const runtime = await createCommandStepRuntime({
    docker: DOCKER_EXE,
    dockerSocket: '/nonexistent/fake.sock',
    transport: engine.transport,
    drainMs: 50,
  });
  t.after(() => runtime.close());
  return runtime;
}

function attemptOf(repo: Repo, attemptId: string): ReturnType<typeof getCommandAttempt> {
  const journal = openJournal(repo.dataDir, 'read');
  try {
    return getCommandAttempt(journal.db, attemptId);
  } finally {
    journal.close();
  }
}

async function reconcile(
  repo: Repo,
  engine: FakeDockerEngine,
  attemptId: string,
): Promise<Awaited<ReturnType<typeof reconcileCommandAttempt>>> {
  const client = await DockerClient.connect(engine.transport);
  const journal = openJournal(repo.dataDir, 'write');
  try {
    return await reconcileCommandAttempt(client, journal, getCommandAttempt(journal.db, attemptId));
  } finally {
    journal.close();
  }
}

test('a lost result (the wait answer never arrives) is recorded uncertain, never a pass, and is not run again', async (t) => {
  const engine = fakeEngine();
  engine.faults.loseWait = true;
  const runtime = await runtimeFor(t, engine);
  const repo = makeRepo(t, { 'a.txt': 'a' });
  const request = stepRequest(repo, { runId: 'lost', change: 'lost', recipe: recipeBytes({ argv: ['/bin/true'] }) });
  const result = await runtime.run(request);
  assert.equal(result.state, 'uncertain');
  assert.equal(result.outcome, 'uncertain');
  const again = await runtime.run(request);
  assert.deepEqual(again, result, 'the retained uncertain result comes back');
  assert.equal(engine.created, 1, 'no second container');

  engine.faults.loseWait = false;
  const recovered = await reconcile(repo, engine, result.attemptId);
  assert.equal(recovered.result.state, 'failed');
  assert.equal(recovered.result.outcome, 'interrupted');
  assert.equal(recovered.custody?.confirmed, true);
  assert.equal(engine.created, 1, 'recovery created nothing');
  const record = parseStrictJson(attemptOf(repo, result.attemptId).record_json ?? Buffer.alloc(0), {
    maxBytes: 1 << 20,
  }) as Record<string, unknown>;
  assert.equal(record.recovered, true);
  assert.match(String(record.previous_record_digest), /^[0-9a-f]{64}$/);
});

test('unknown cleanup (removal refused) keeps the attempt uncertain and the snapshot; recovery confirms it later', async (t) => {
  const engine = fakeEngine({ exitCode: 0, stdout: 'passed\n' });
  engine.faults.refuseRemove = true;
  const runtime = await runtimeFor(t, engine);
  const repo = makeRepo(t, { 'a.txt': 'a' });
  const request = stepRequest(repo, {
    runId: 'cleanup',
    change: 'cleanup',
    recipe: recipeBytes({ argv: ['/bin/true'] }),
  });
  const result = await runtime.run(request);
  assert.equal(result.state, 'uncertain', 'an unconfirmed cleanup is never a success');
  assert.equal(result.outcome, 'passed');
  const attempt = attemptOf(repo, result.attemptId);
  assert.ok(existsSync(attempt.snapshot_path), 'the snapshot stays while a container may still use it');
  assert.equal(engine.containers.size, 1);

  const stillRefused = await reconcile(repo, engine, result.attemptId);
  assert.equal(stillRefused.result.state, 'uncertain');
  assert.equal(stillRefused.custody?.confirmed, false);
  assert.ok(existsSync(attempt.snapshot_path));

  engine.faults.refuseRemove = false;
  const confirmed = await reconcile(repo, engine, result.attemptId);
  assert.equal(confirmed.result.state, 'succeeded', 'a fully observed pass stands once cleanup is confirmed');
  assert.equal(confirmed.custody?.containers_removed, 1);
  assert.equal(engine.containers.size, 0);
  assert.ok(!existsSync(attempt.snapshot_path));
  assert.equal(engine.created, 1);
});

test('a lost create answer is uncertain; the container is found by name and removed', async (t) => {
  const engine = fakeEngine();
  engine.faults.loseCreateAnswer = true;
  const runtime = await runtimeFor(t, engine);
  const repo = makeRepo(t, { 'a.txt': 'a' });
  const result = await runtime.run(
    stepRequest(repo, { runId: 'create', change: 'create', recipe: recipeBytes({ argv: ['/bin/true'] }) }),
  );
  assert.equal(result.state, 'uncertain');
  assert.equal(engine.containers.size, 0);
  assert.ok(!engine.calls.some((call) => call.endsWith('/start')), 'nothing was started');
});

test('a command stopped from outside (engine shutdown, docker stop) is uncertain even with exit code 0', async (t) => {
  const engine = fakeEngine({ exitCode: 0 });
  engine.faults.stoppedFromOutside = true;
  const runtime = await runtimeFor(t, engine);
  const repo = makeRepo(t, { 'a.txt': 'a' });
  const result = await runtime.run(
    stepRequest(repo, { runId: 'outside', change: 'outside', recipe: recipeBytes({ argv: ['/bin/true'] }) }),
  );
  assert.equal(result.state, 'uncertain');
  assert.equal(result.outcome, 'uncertain');
});

test('an engine that never reports the stop ends the wait at timeout + grace: uncertain, not hung', async (t) => {
  const engine = fakeEngine({ exitCode: 0, runMs: 60_000 });
  engine.faults.hangWait = true;
  const runtime = await createCommandStepRuntime({
    docker: DOCKER_EXE,
    dockerSocket: '/x',
    transport: engine.transport,
    drainMs: 50,
    graceMs: 300,
  });
  t.after(() => runtime.close());
  const repo = makeRepo(t, { 'a.txt': 'a' });
  const began = Date.now();
  const result = await runtime.run(
    stepRequest(repo, { runId: 'hang', change: 'hang', recipe: recipeBytes({ argv: ['/bin/true'], timeout_ms: 200 }) }),
  );
  assert.equal(result.state, 'uncertain');
  assert.ok(Date.now() - began < 10_000, 'the collector did not hang');
  assert.ok(
    engine.calls.some((call) => call.includes('/kill')),
    'the timeout sent a kill',
  );
});

test('a finished attempt is final: reconciling it does nothing', async (t) => {
  const engine = fakeEngine({ exitCode: 3, stderr: 'boom\n' });
  const runtime = await runtimeFor(t, engine);
  const repo = makeRepo(t, { 'a.txt': 'a' });
  const result = await runtime.run(
    stepRequest(repo, { runId: 'final', change: 'final', recipe: recipeBytes({ argv: ['/bin/false'] }) }),
  );
  assert.equal(result.state, 'failed');
  const calls = engine.calls.length;
  const again = await reconcile(repo, engine, result.attemptId);
  assert.equal(again.reconciled, false);
  assert.equal(again.result.state, 'failed');
  assert.ok(engine.calls.slice(calls).every((call) => !call.startsWith('DELETE') && !call.includes('create')));
});

test('the create body carries every isolation setting and the custody labels', async (t) => {
  const repo = makeRepo(t, { 'a.txt': 'a' });
  const recipe = recipeBytes({
    argv: ['/bin/sh', '-c', 'true'],
    env: { B: '2', A: '1' },
    limits: { memory_bytes: 32 * 1024 * 1024, pids: 40, cpu_millis: 250, scratch_bytes: 8192 },
  });
  let spec: Record<string, unknown> | undefined;
  const engine = new FakeDockerEngine({
    images: { 'local/busybox:1': IMAGE_ID },
    script: (s) => {
      spec = s;
      return { exitCode: 0 };
    },
  });
  const runtime = await runtimeFor(t, engine);
  const result = await runtime.run(stepRequest(repo, { runId: 'spec', change: 'spec', recipe }));
  assert.equal(result.state, 'succeeded');
  assert.ok(spec !== undefined);
  const host = spec.HostConfig as Record<string, unknown>;
  assert.equal(spec.Image, IMAGE_ID, 'the image is pinned by ID');
  assert.deepEqual([spec.Entrypoint, spec.Cmd], [['/bin/sh'], ['-c', 'true']], 'argv as given, no shell added');
  assert.deepEqual(spec.Env, ['A=1', 'B=2', 'HOME=/tmp', 'TMPDIR=/tmp'], 'HOME and TMPDIR point into scratch');
  assert.equal(spec.User, '65534:65534');
  assert.equal(spec.WorkingDir, '/src');
  assert.equal(spec.NetworkDisabled, true);
  assert.equal(host.NetworkMode, 'none');
  assert.equal(host.ReadonlyRootfs, true);
  assert.deepEqual(host.CapDrop, ['ALL']);
  assert.deepEqual(host.SecurityOpt, ['no-new-privileges']);
  assert.equal(host.Privileged, false);
  assert.equal(host.PidsLimit, 40);
  assert.equal(host.Memory, 32 * 1024 * 1024);
  assert.equal(host.MemorySwap, 32 * 1024 * 1024, 'no swap');
  assert.equal(host.NanoCpus, 250_000_000);
  assert.deepEqual(
    host.Tmpfs,
    { '/tmp': 'rw,exec,nosuid,nodev,mode=1777,size=8192' },
    'scratch is exec and sized by the recipe',
  );
  assert.equal(host.IpcMode, 'none', 'no /dev/shm beside scratch');
  assert.deepEqual(host.Ulimits, [{ Name: 'msgqueue', Soft: 0, Hard: 0 }], 'no POSIX message queue can be created');
  const [mount] = host.Mounts as Record<string, unknown>[];
  assert.equal(mount?.Target, '/src');
  assert.equal(mount?.ReadOnly, true);
  assert.match(String(mount?.Source), /\/collector\/snapshots\/[0-9a-f]{64}$/);
  assert.deepEqual(spec.Labels, {
    'io.agentscm.managed': '1',
    'io.agentscm.attempt': result.attemptId,
    'io.agentscm.run': 'spec',
    'io.agentscm.step': 'check',
  });
});

test('the Engine API version is negotiated: capped at ours, refused below our floor or above the engine range', async () => {
  const newer = new FakeDockerEngine({ apiVersion: '1.60', minApiVersion: '1.24' });
  const client = await DockerClient.connect(newer.transport);
  assert.equal(client.apiVersion, MAX_API_VERSION);
  await client.info();
  assert.ok(newer.calls.includes(`GET /info`));
  await assert.rejects(
    DockerClient.connect(new FakeDockerEngine({ apiVersion: '1.40', minApiVersion: '1.12' }).transport),
    { code: 'RUNTIME_API_UNSUPPORTED' },
  );
  await assert.rejects(
    DockerClient.connect(new FakeDockerEngine({ apiVersion: '1.70', minApiVersion: '1.60' }).transport),
    { code: 'RUNTIME_API_UNSUPPORTED' },
  );
  const exact = await DockerClient.connect(new FakeDockerEngine({ apiVersion: '1.41' }).transport);
  assert.equal(exact.apiVersion, '1.41');
});

test('an engine that does not answer is RUNTIME_UNAVAILABLE before anything is reserved', async () => {
  const engine = fakeEngine();
  engine.faults.down = true;
  await assert.rejects(
    createCommandStepRuntime({ docker: DOCKER_EXE, dockerSocket: '/x', transport: engine.transport }),
    { code: 'RUNTIME_UNAVAILABLE' },
  );
});

test('the runtime pair is validated: the executable must exist', async () => {
  const engine = fakeEngine();
  await assert.rejects(
    createCommandStepRuntime({ docker: '/nonexistent/docker', dockerSocket: '/x', transport: engine.transport }),
    { code: 'RUNTIME_FLAGS_INVALID' },
  );
  await assert.rejects(createCommandStepRuntime({ docker: '/etc', dockerSocket: '/x', transport: engine.transport }), {
    code: 'RUNTIME_FLAGS_INVALID',
  });
});
