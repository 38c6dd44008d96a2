/**
 * Workflow runs as an operator meets them, driven through the real CLI, the real native store
 * and the real container engine: every stop leaves a state and a reason; a run refused up front
 * creates nothing; a binding that moves during a run stops the next command before anything is
 * reserved; an interrupted run reports what it ended as. The reproducers are the ones the
 * hardening issue gives (items 7, 16, 17 and 18).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

import { commandAttemptId } from '../../src/workflows/command-attempts.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import {
  containersOf,
  createEventsOf,
  DOCKER_SOCKET,
  IMAGE,
  recipeBytes,
  requireEngine,
  type RecipeFields,
} from '../support/collector.js';
import { bumpPolicy } from '../support/workflows.js';

const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';
const RUNTIME = ['--docker', DOCKER, '--docker-socket', DOCKER_SOCKET];

before(async () => {
  await requireEngine();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON views read loosely in assertions
type Loose = any;

interface Demo {
  readonly root: string;
  readonly ws: string;
  readonly dataDir: string;
  readonly workflow: string;
  readonly repository: string;
}

function cli(
  demo: Pick<Demo, 'dataDir'>,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  return runCli(['--data-dir', demo.dataDir, ...args], { env });
}

// Not buildScenario: the recipe is a hostile variant (missing image, absent workdir) and no requirement.
/**
 * A checkpointed tree with a recipe, SKILL.md and a command/v1 context, and a workflow file:
 * with `source`, a source_paths step "read" comes first and the command step "check" needs it.
 */
async function makeDemo(t: TestContext, fields: RecipeFields, options: { source?: boolean } = {}): Promise<Demo> {
  const root = tempDir(t, 'agentscm-hostile-runs-');
  const ws = join(root, 'ws');
  const dataDir = join(root, 'data');
  mkdirSync(join(ws, 'skills', 'check'), { recursive: true });
  writeFileSync(join(ws, 'hello.txt'), 'hello from the revision\n');
  writeFileSync(
    join(ws, 'skills', 'check', 'SKILL.md'),
    '---\nname: check\ndescription: run the checks\n---\nRun the recipe.\n',
  );
  writeFileSync(join(ws, 'skills', 'check', 'runner.json'), recipeBytes(fields));
  const init = await cli({ dataDir }, ['init-repo', ws, '--name', 'demo', '--json']);
  assert.equal(init.code, 0, init.stderr);
  const checkpoint = await cli({ dataDir }, ['checkpoint', '--change', 'c1', '--workspace', ws, '--json']);
  assert.equal(checkpoint.code, 0, checkpoint.stderr);
  const cp = jsonOf<{ repository: string; revision: string; version: number }>(checkpoint);
  const context = await cli({ dataDir }, [
    'context',
    'create',
    '--change',
    'c1',
    '--runner',
    'skills/check/runner.json',
    '--json',
  ]);
  assert.equal(context.code, 0, context.stderr);
  const contextDigest = jsonOf<{ context_digest: string }>(context).context_digest;
  const steps: unknown[] = [];
  if (options.source === true) {
    steps.push({
      id: 'read',
      needs: [],
      required: true,
      action: {
        kind: 'source_paths',
        expectations: [{ path: 'hello.txt', sha256: sha256Of('hello from the revision\n') }],
      },
    });
  }
  steps.push({
    id: 'check',
    needs: options.source === true ? ['read'] : [],
    required: true,
    action: {
      kind: 'command',
      runner: 'runner.json',
      change: { repository: cp.repository, id: 'c1' },
      change_version: cp.version,
      context_digest: contextDigest,
    },
  });
  const workflow = join(root, 'workflow.json');
  writeFileSync(
    workflow,
    JSON.stringify({
      version: 1,
      name: 'checks',
      source: { repository: cp.repository, revision: cp.revision, policy_epoch: 0 },
      skill: { entrypoint: 'skills/check/SKILL.md', resources: ['skills/check/runner.json'] },
      steps,
    }),
  );
  return { root, ws, dataDir, workflow, repository: cp.repository };
}

function sha256Of(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A source-only workflow over a fresh store (no engine involved). */
async function makeSourceDemo(t: TestContext): Promise<Demo> {
  const root = tempDir(t, 'agentscm-hostile-runs-');
  const ws = join(root, 'ws');
  const dataDir = join(root, 'data');
  mkdirSync(join(ws, 'skills', 'read'), { recursive: true });
  writeFileSync(join(ws, 'a.txt'), 'alpha\n');
  writeFileSync(join(ws, 'skills', 'read', 'SKILL.md'), '---\nname: read\ndescription: read the sources\n---\nRead.\n');
  assert.equal((await cli({ dataDir }, ['init-repo', ws, '--name', 'demo'])).code, 0);
  const checkpoint = await cli({ dataDir }, ['checkpoint', '--change', 'c1', '--workspace', ws, '--json']);
  assert.equal(checkpoint.code, 0, checkpoint.stderr);
  const cp = jsonOf<{ repository: string; revision: string }>(checkpoint);
  const expect = { kind: 'source_paths', expectations: [{ path: 'a.txt', sha256: sha256Of('alpha\n') }] };
  const workflow = join(root, 'source.json');
  writeFileSync(
    workflow,
    JSON.stringify({
      version: 1,
      name: 'reads',
      source: { repository: cp.repository, revision: cp.revision, policy_epoch: 0 },
      skill: { entrypoint: 'skills/read/SKILL.md', resources: [] },
      steps: [
        { id: 'one', needs: [], required: true, action: expect },
        { id: 'two', needs: ['one'], required: true, action: expect },
      ],
    }),
  );
  return { root, ws, dataDir, workflow, repository: cp.repository };
}

async function engineCall(method: 'POST' | 'DELETE', path: string): Promise<number> {
  const pool = new Pool('http://localhost', { socketPath: DOCKER_SOCKET });
  try {
    const response = await pool.request({ path, method, headersTimeout: 10_000 });
    await response.body.text();
    return response.statusCode;
  } finally {
    await pool.close();
  }
}

/** Give the test image a second, test-owned name (a local tag: nothing is pulled). */
async function tagImage(repo: string, tag: string): Promise<void> {
  assert.equal(
    await engineCall('POST', `/images/${encodeURIComponent(IMAGE)}/tag?repo=${encodeURIComponent(repo)}&tag=${tag}`),
    201,
  );
}

async function untagImage(reference: string): Promise<void> {
  assert.equal(await engineCall('DELETE', `/images/${encodeURIComponent(reference)}?noprune=1`), 200);
}

interface Spawned extends ChildProcess {
  stderrText(): string;
  stdoutText(): string;
}

function spawnCli(demo: Demo, args: readonly string[], env: Record<string, string> = {}): Spawned {
  const child = spawn(process.execPath, [...cliEntryArgv(), '--data-dir', demo.dataDir, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  return Object.assign(child, {
    stderrText: () => Buffer.concat(err).toString('utf8'),
    stdoutText: () => Buffer.concat(out).toString('utf8'),
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('close', (code) => resolve(code));
  });
}

async function waitFor(what: string, child: Spawned, ready: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (await ready()) return;
    if (child.exitCode !== null)
      throw new Error(`the controller exited before ${what} (${child.exitCode}): ${child.stderrText()}`);
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}: ${child.stderrText()}`);
}

async function statusOf(demo: Demo, runId: string): Promise<Loose> {
  const status = await cli(demo, ['skill-workflow', 'status', runId, '--json']);
  assert.equal(status.code, 0, status.stderr);
  return jsonOf<Loose>(status);
}

function stepOf(view: Loose, id: string): Loose {
  const step = (view.steps as Loose[]).find((s) => s.id === id);
  assert.ok(step !== undefined, `step ${id}`);
  return step;
}

// Item 18: "A run refused for missing runtime flags still creates a running run row".
test('a run refused for missing runtime flags creates nothing: no journal, and no run row in an existing journal', async (t) => {
  const demo = await makeDemo(t, { argv: ['/bin/true'] });
  // No --docker and no docker on PATH (the default): no runtime at all.
  const noDocker = { PATH: tempDir(t, 'agentscm-no-docker-') };
  const refused = await cli(demo, ['skill-workflow', 'run', 'r-noflags', demo.workflow, '--json'], noDocker);
  assert.equal(refused.code, 4, refused.stderr);
  assert.equal(jsonOf<Loose>(refused).error.code, 'WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED');
  assert.equal(existsSync(join(demo.dataDir, 'skill-workflows')), false, 'not even the journal was created');

  // With a journal that exists (another run made it), the refused run leaves no row either.
  const other = await cli(demo, ['skill-workflow', 'run', 'r-other', demo.workflow, ...RUNTIME, '--json']);
  assert.equal(other.code, 0, other.stderr);
  const again = await cli(demo, ['skill-workflow', 'run', 'r-noflags', demo.workflow, '--json'], noDocker);
  assert.equal(again.code, 4, again.stderr);
  const status = await cli(demo, ['skill-workflow', 'status', 'r-noflags', '--json']);
  assert.equal(status.code, 2);
  assert.equal(jsonOf<Loose>(status).error.code, 'WORKFLOW_RUN_NOT_FOUND');
});

// Item 18: "Runtime flags on a run with no command step still connect to the engine and fail if it is down."
test('runtime flags on a source-only run never touch the engine: a dead socket does not matter', async (t) => {
  const demo = await makeSourceDemo(t);
  const deadSocket = join(demo.root, 'no-engine.sock');
  const run = await cli(demo, [
    'skill-workflow',
    'run',
    'r-src',
    demo.workflow,
    '--docker',
    DOCKER,
    '--docker-socket',
    deadSocket,
    '--json',
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(jsonOf<Loose>(run).state, 'completed');
  // The pair itself is still validated up front.
  const bad = await cli(demo, [
    'skill-workflow',
    'run',
    'r-src2',
    demo.workflow,
    '--docker',
    join(demo.root, 'no-docker'),
    '--docker-socket',
    deadSocket,
    '--json',
  ]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.equal(jsonOf<Loose>(bad).error.code, 'RUNTIME_FLAGS_INVALID');
});

// Item 16: "a workdir absent from the revision is found only at run time".
test('a recipe workdir absent from the revision is refused by plan and by run, before anything is created', async (t) => {
  const demo = await makeDemo(t, { argv: ['/bin/true'], workdir: 'no/such/dir' });
  const plan = await cli(demo, ['skill-workflow', 'plan', demo.workflow, '--json']);
  assert.equal(plan.code, 2, plan.stderr);
  assert.equal(jsonOf<Loose>(plan).error.code, 'RECIPE_WORKDIR_MISSING');
  assert.match(plan.stderr, /step "check"/);
  const run = await cli(demo, ['skill-workflow', 'run', 'r-wd', demo.workflow, ...RUNTIME, '--json']);
  assert.equal(run.code, 2, run.stderr);
  assert.equal(jsonOf<Loose>(run).error.code, 'RECIPE_WORKDIR_MISSING');
  assert.equal(existsSync(join(demo.dataDir, 'skill-workflows')), false);
});

// Item 16: "a missing image ... leaves the step running with execution: null".
test('a missing image is refused before the run is created (IMAGE_NOT_FOUND), with nothing reserved', async (t) => {
  const demo = await makeDemo(t, { argv: ['/bin/true'], image: 'local/agentscm-hostile-absent:1' });
  const run = await cli(demo, ['skill-workflow', 'run', 'r-img', demo.workflow, ...RUNTIME, '--json']);
  assert.equal(run.code, 4, run.stderr);
  assert.equal(jsonOf<Loose>(run).error.code, 'IMAGE_NOT_FOUND');
  assert.match(run.stderr, /step "check"/);
  assert.equal(existsSync(join(demo.dataDir, 'skill-workflows')), false);
});

test(
  'an image that disappears after the run started leaves the command step pending, never running ' +
    'without an attempt; the run finishes once it is back',
  async (t) => {
    const tag = `t${process.pid}${Date.now()}`;
    const repo = 'local/agentscm-hostile-vanish';
    await tagImage(repo, tag);
    t.after(async () => {
      await engineCall('DELETE', `/images/${encodeURIComponent(`${repo}:${tag}`)}?noprune=1`);
    });
    const demo = await makeDemo(t, { argv: ['/bin/true'], image: `${repo}:${tag}` }, { source: true });
    const first = await cli(demo, [
      'skill-workflow',
      'run',
      'r-vanish',
      demo.workflow,
      ...RUNTIME,
      '--max-steps',
      '1',
      '--json',
    ]);
    assert.equal(first.code, 0, first.stderr);
    await untagImage(`${repo}:${tag}`);

    const resumed = await cli(demo, ['skill-workflow', 'resume', 'r-vanish', ...RUNTIME, '--json']);
    assert.equal(resumed.code, 4, resumed.stderr);
    assert.equal(jsonOf<Loose>(resumed).error.code, 'IMAGE_NOT_FOUND');
    const view = await statusOf(demo, 'r-vanish');
    assert.equal(view.state, 'running');
    assert.equal(stepOf(view, 'check').state, 'pending', 'nothing of the step ran: it is pending, not running');
    assert.equal(stepOf(view, 'check').execution, null);

    await tagImage(repo, tag);
    const done = await cli(demo, ['skill-workflow', 'resume', 'r-vanish', ...RUNTIME, '--json']);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(jsonOf<Loose>(done).state, 'completed');
  },
);

// Item 16: "after drift the run stays running with a null reason and re-running the same file exits 3".
test(
  'after a policy bump the run stops as blocked with a reason, and reopening it with the same file ' +
    'returns that state',
  async (t) => {
    const demo = await makeSourceDemo(t);
    const first = await cli(demo, ['skill-workflow', 'run', 'r-drift', demo.workflow, '--max-steps', '1', '--json']);
    assert.equal(first.code, 0, first.stderr);
    bumpPolicy(demo.dataDir, demo.repository);

    for (let i = 0; i < 2; i++) {
      const again = await cli(demo, ['skill-workflow', 'run', 'r-drift', demo.workflow, '--json']);
      assert.equal(again.code, 1, again.stderr);
      const view = jsonOf<Loose>(again);
      assert.equal(view.state, 'blocked');
      assert.match(String(view.state_reason), /^binding changed: .*policy epoch 1/);
      assert.equal(stepOf(view, 'one').state, 'succeeded', 'the recorded observation stays');
      assert.equal(stepOf(view, 'two').state, 'not_run');
      assert.equal(view.source_current, false);
    }
    const resume = await cli(demo, ['skill-workflow', 'resume', 'r-drift', '--json']);
    assert.equal(resume.code, 1, resume.stderr);
    assert.equal(jsonOf<Loose>(resume).state, 'blocked');
  },
);

// Item 16: "source_current ignores a Change that moved on".
test('source_current turns false when a Change bound by a command step moved to a new version', async (t) => {
  const demo = await makeDemo(t, { argv: ['/bin/true'] });
  const run = await cli(demo, ['skill-workflow', 'run', 'r-moved', demo.workflow, ...RUNTIME, '--json']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(jsonOf<Loose>(run).source_current, true);
  writeFileSync(join(demo.ws, 'hello.txt'), 'the Change moved on\n');
  assert.equal((await cli(demo, ['checkpoint', '--change', 'c1', '--workspace', demo.ws])).code, 0);
  const view = await statusOf(demo, 'r-moved');
  assert.equal(view.state, 'completed', 'historical state is kept');
  assert.equal(view.source_current, false);
});

// Item 7: "A command step runs after a policy bump made during the run."
for (const drift of ['policy', 'change'] as const) {
  test(
    `a ${drift === 'policy' ? 'policy bump' : 'new Change version'} made during the run stops the next ` +
      'command step before anything is reserved',
    async (t) => {
      const demo = await makeDemo(t, { argv: ['/bin/true'] }, { source: true });
      const runId = `r-mid-${drift}`;
      const attemptId = commandAttemptId(demo.repository, runId, 'check', 1n);
      const since = Math.floor(Date.now() / 1000) - 1;
      const release = join(demo.root, 'release');
      const child = spawnCli(demo, ['skill-workflow', 'run', runId, demo.workflow, ...RUNTIME, '--json'], {
        AGENTSCM_WORKFLOW_TEST_PAUSE: 'after-commit:read',
        AGENTSCM_WORKFLOW_TEST_RELEASE: release,
      });
      t.after(() => child.kill('SIGKILL'));
      await waitFor('the pause after the source step', child, () =>
        child.stderrText().includes('agentscm-test-pause after-commit read'),
      );
      if (drift === 'policy') bumpPolicy(demo.dataDir, demo.repository);
      else {
        writeFileSync(join(demo.ws, 'hello.txt'), 'the Change moved on\n');
        assert.equal((await cli(demo, ['checkpoint', '--change', 'c1', '--workspace', demo.ws])).code, 0);
      }
      writeFileSync(release, '');
      const code = await exited(child);
      assert.equal(code, 1, child.stderrText());
      const report = JSON.parse(child.stdoutText());
      assert.equal(report.state, 'blocked');
      assert.match(String(report.state_reason), drift === 'policy' ? /policy epoch/ : /WORKFLOW_COMMAND_STALE/);
      assert.equal(stepOf(report, 'check').state, 'not_run');
      assert.equal(stepOf(report, 'check').execution, null, 'no attempt was reserved');
      assert.equal(await createEventsOf(attemptId, since), 0, 'no container was created');
      assert.deepEqual(await containersOf(attemptId), []);
    },
  );
}

// Item 17: "After SIGINT the attempt is cancelled and the run failed, but the report says
// 'interrupted … resume the run to continue'."
test('SIGINT during a command: the report says what the run ended as and does not ask to resume it', async (t) => {
  const demo = await makeDemo(t, { argv: ['/bin/sleep', '60'], timeout_ms: 120_000 });
  const attemptId = commandAttemptId(demo.repository, 'r-int', 'check', 1n);
  const child = spawnCli(demo, ['skill-workflow', 'run', 'r-int', demo.workflow, ...RUNTIME, '--json']);
  t.after(() => child.kill('SIGKILL'));
  await waitFor('a running container', child, async () =>
    (await containersOf(attemptId)).some((c) => c.State === 'running'),
  );
  child.kill('SIGINT');
  const code = await exited(child);
  assert.equal(code, 1, child.stderrText());
  const report = JSON.parse(child.stdoutText());
  assert.equal(report.state, 'failed');
  assert.equal(stepOf(report, 'check').execution.outcome, 'cancelled');
  assert.equal(report.waiting, null, 'a run that ended waits for nothing');
  assert.doesNotMatch(child.stderrText(), /resume the run/);
  const view = await statusOf(demo, 'r-int');
  assert.equal(view.state, 'failed');
  assert.match(String(view.state_reason), /required step "check" is failed/);
});
