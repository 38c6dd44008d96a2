/**
 * examples/node-project under the gate: its own `node:test` suite passes on the host after `npm ci`
 * (its tests import the dev dependency `dequal`); on the image bin/build-node-image.sh builds offline
 * from the host's node, `deps build` makes the project's dependency image, which runs that suite as
 * a command step (`init-repo` on a copy, `checkpoint`, `context create`, `skill-workflow run` →
 * completed, the lockfile compared before the container); and
 * a failing test, checkpointed as the next version of the Change, makes the step fail with the
 * test's name in the retained output. Skipped, with the reason, only when no Docker Engine
 * answers; `npm test` starts one first (npm run runtime:start).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Pool } from 'undici';

import { jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { buildDepsImage, EXAMPLE_DEPS_IMAGE, NPM_ENV } from '../support/npm-deps.js';
import { DOCKER_EXE, DOCKER_SOCKET } from '../support/runtime.js';
import { spawned, type Spawned } from '../support/spawned.js';

const PROJECT = join(REPO_ROOT, 'examples', 'node-project');
const NODE_IMAGE = 'local/node:20';
const RECIPE = 'skills/node-test/runner.json';
const FAILING_TEST = 'formatDuration prints a minute as 60s';

/**
 * The environment of a child process: this one's, without NODE_TEST_CONTEXT (with it, a child
 * `node --test` reports to this test runner instead of printing its own results).
 */
function childEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

function spawnedHere(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<Spawned> {
  return spawned(command, args, { cwd, env: childEnv(env) });
}

/** Why the container half cannot run here, or null when the engine answers /_ping. */
async function engineProblem(): Promise<string | null> {
  const pool = new Pool('http://localhost', { socketPath: DOCKER_SOCKET });
  try {
    const ping = await pool.request({ path: '/_ping', method: 'GET', headersTimeout: 5000, bodyTimeout: 5000 });
    const body = await ping.body.text();
    return ping.statusCode === 200 && body === 'OK'
      ? null
      : `the engine at ${DOCKER_SOCKET} answered HTTP ${ping.statusCode}`;
  } catch (error) {
    return `no Docker Engine answers at ${DOCKER_SOCKET} (${(error as Error).message}); npm run runtime:start starts one`;
  } finally {
    await pool.close();
  }
}

const ENGINE_PROBLEM = await engineProblem();

interface ImageInspect {
  readonly Config?: { readonly Cmd?: string[]; readonly Labels?: Record<string, string> | null };
}

async function engineGet(path: string): Promise<{ status: number; body: ImageInspect }> {
  const pool = new Pool('http://localhost', { socketPath: DOCKER_SOCKET });
  try {
    const response = await pool.request({ path, method: 'GET', headersTimeout: 10_000 });
    return { status: response.statusCode, body: (await response.body.json()) as ImageInspect };
  } finally {
    await pool.close();
  }
}

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}${result.stdout}`);
  return result;
}

/** The recipe the example's README shows: node --test, 512 MiB, 128 pids, no network. */
function recipe(): Record<string, unknown> {
  return {
    version: 1,
    image: EXAMPLE_DEPS_IMAGE,
    argv: ['node', '--test'],
    env: { NODE_PATH: '/node_modules', AGENTSCM_DEPS_LOCKFILE: 'package-lock.json' },
    workdir: '.',
    timeout_ms: 60_000,
    limits: {
      memory_bytes: 512 * 1024 * 1024,
      pids: 128,
      cpu_millis: 1000,
      output_bytes: 256 * 1024,
      scratch_bytes: 16 * 1024 * 1024,
    },
    toolchain: 'node-20',
    environment: 'node-test-offline',
  };
}

test('the example project passes its own node:test suite on the host', { timeout: 300_000 }, async (t) => {
  const copy = join(tempDir(t, 'agentscm-node-project-host-'), 'duration-kit');
  cpSync(PROJECT, copy, { recursive: true, filter: (source) => !source.includes('node_modules') });
  const install = await spawnedHere('npm', ['ci', '--ignore-scripts', '--loglevel=error'], copy, NPM_ENV);
  assert.equal(install.code, 0, install.stdout + install.stderr);
  const result = await spawnedHere(process.execPath, ['--test'], copy);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /^# tests 15$/m);
  assert.match(result.stdout, /^# fail 0$/m);
});

test('build-node-image.sh refuses a bad image name and, with no engine, says how to start one', async (t) => {
  const script = join(REPO_ROOT, 'bin', 'build-node-image.sh');
  const bad = await spawnedHere('bash', [script, 'Local/Node:20'], REPO_ROOT);
  assert.equal(bad.code, 1);
  assert.equal(bad.stdout, '');
  assert.match(
    bad.stderr,
    /^build-node-image: ERROR: image reference 'Local\/Node:20' is not of the form name\[:tag\]/,
  );
  const usage = await spawnedHere('bash', [script, 'local/a:1', 'local/b:1'], REPO_ROOT);
  assert.equal(usage.code, 1);
  assert.match(usage.stderr, /usage: build-node-image\.sh \[--force\] \[IMAGE\]/);
  const socket = join(tempDir(t), 'no-engine.sock');
  const none = await spawnedHere('bash', [script], REPO_ROOT, { RUNTIME_SOCK: socket });
  assert.equal(none.code, 1);
  assert.equal(none.stdout, '');
  assert.equal(
    none.stderr,
    `build-node-image: ERROR: no Docker Engine answers on ${socket}: start one as root with npm run runtime:start ` +
      '(or set RUNTIME_SOCK)\n',
  );
});

test(
  'the example project runs in the offline Node image: completed, then a failing test fails the step',
  { timeout: 600_000 },
  async (t: TestContext) => {
    // Like every live container test, this fails rather than skips without an engine (docs/runtime.md "Tests").
    assert.equal(ENGINE_PROBLEM, null, ENGINE_PROBLEM ?? '');
    const build = await spawnedHere('bash', [join(REPO_ROOT, 'bin', 'build-node-image.sh')], REPO_ROOT, {
      RUNTIME_SOCK: DOCKER_SOCKET,
    });
    assert.equal(build.code, 0, build.stderr);
    assert.equal(build.stdout, `${NODE_IMAGE}\n`, 'only the image reference goes to stdout');
    const image = await engineGet(`/images/${NODE_IMAGE}/json`);
    assert.equal(image.status, 200);
    assert.equal(image.body.Config?.Labels?.['io.agentscm.node-version'], process.version, 'built from the host node');
    assert.deepEqual(image.body.Config?.Cmd, ['node']);
    t.diagnostic(`build-node-image.sh: ${build.ms} ms (${build.stderr.trim().split('\n').at(-1) ?? ''})`);

    const root = tempDir(t, 'agentscm-node-project-');
    const ws = join(root, 'duration-kit');
    const data = join(root, 'data');
    cpSync(PROJECT, ws, { recursive: true, filter: (source) => !source.includes('node_modules') });
    const cli = (args: readonly string[]): Promise<CliResult> => runCli(['--data-dir', data, ...args]);
    ok(await cli(['init-repo', ws, '--name', 'duration-kit', '--json']), 'init-repo');
    const deps = await buildDepsImage(data, ws, NODE_IMAGE);
    t.diagnostic(`deps build: ${deps.stdout.trim().split('\n').join(' | ')}`);

    // The check: a skill whose recipe runs the project's suite in the Node image.
    mkdirSync(join(ws, 'skills', 'node-test'), { recursive: true });
    writeFileSync(
      join(ws, 'skills', 'node-test', 'SKILL.md'),
      '---\nname: node-test\ndescription: run the node:test suite in an isolated container\n---\n\nRun runner.json.\n',
    );
    writeFileSync(join(ws, RECIPE), `${JSON.stringify(recipe(), null, 2)}\n`);

    /** Checkpoint the workspace onto Change add-check, bind a workflow to it and run it. */
    const checkAndRun = async (runId: string): Promise<{ run: CliResult; status: WorkflowStatus }> => {
      const cp = jsonOf<{ repository: string; revision: string; version: number }>(
        ok(await cli(['checkpoint', '--change', 'add-check', '--workspace', ws, '--json']), 'checkpoint'),
      );
      const context = jsonOf<{ context_digest: string }>(
        ok(await cli(['context', 'create', '--change', 'add-check', '--runner', RECIPE, '--json']), 'context create'),
      );
      const workflow = join(root, `${runId}.json`);
      writeFileSync(
        workflow,
        JSON.stringify({
          version: 1,
          name: 'node-test',
          source: { repository: cp.repository, revision: cp.revision, policy_epoch: 0 },
          skill: { entrypoint: 'skills/node-test/SKILL.md', resources: [RECIPE] },
          steps: [
            {
              id: 'test',
              needs: [],
              required: true,
              action: {
                kind: 'command',
                runner: 'runner.json',
                change: { repository: cp.repository, id: 'add-check' },
                change_version: cp.version,
                context_digest: context.context_digest,
              },
            },
          ],
        }),
      );
      const started = Date.now();
      const run = await cli([
        'skill-workflow',
        'run',
        runId,
        workflow,
        '--docker',
        DOCKER_EXE,
        '--docker-socket',
        DOCKER_SOCKET,
      ]);
      t.diagnostic(`skill-workflow run ${runId}: ${Date.now() - started} ms, exit ${String(run.code)}`);
      const status = jsonOf<WorkflowStatus>(ok(await cli(['skill-workflow', 'status', runId, '--json']), 'status'));
      return { run, status };
    };

    const passing = await checkAndRun('r1');
    assert.equal(passing.run.code, 0, passing.run.stdout + passing.run.stderr);
    assert.equal(passing.status.state, 'completed', JSON.stringify(passing.status));
    assert.equal(passing.status.steps[0]?.result?.outcome, 'passed');
    const passed = await show(cli, passing.status);
    t.diagnostic(`container step r1: ${/"duration_ms":(\d+)/.exec(JSON.stringify(passed))?.[1] ?? '?'} ms`);
    assert.match(passed.stdout.text, /^# pass 15$/m, passed.stdout.text);
    assert.match(passed.stdout.text, /^# fail 0$/m);

    // The same Change, next version: one failing test added.
    writeFileSync(
      join(ws, 'test', 'refused.test.js'),
      [
        "import assert from 'node:assert/strict';",
        "import { test } from 'node:test';",
        '',
        "import { formatDuration } from '../src/duration.js';",
        '',
        `test('${FAILING_TEST}', () => {`,
        "  assert.equal(formatDuration(60_000), '60s');",
        '});',
        '',
      ].join('\n'),
    );
    const failing = await checkAndRun('r2');
    assert.equal(failing.run.code, 1, failing.run.stdout + failing.run.stderr);
    assert.equal(failing.status.state, 'failed', JSON.stringify(failing.status));
    assert.equal(failing.status.steps[0]?.result?.outcome, 'failed');
    const failed = await show(cli, failing.status);
    t.diagnostic(`container step r2: ${/"duration_ms":(\d+)/.exec(JSON.stringify(failed))?.[1] ?? '?'} ms`);
    assert.equal(failed.outcome, 'failed');
    assert.match(failed.stdout.text, new RegExp(`^not ok \\d+ - ${FAILING_TEST}$`, 'm'), failed.stdout.text);
    assert.match(failed.stdout.text, /^# pass 15$/m);
    assert.match(failed.stdout.text, /^# fail 1$/m);
  },
);

interface WorkflowStatus {
  readonly state: string;
  readonly steps: readonly { readonly result?: { readonly attempt_id?: string; readonly outcome?: string } }[];
}

/** check-command-show --json of the run's only command step. */
async function show(
  cli: (args: readonly string[]) => Promise<CliResult>,
  status: WorkflowStatus,
): Promise<{ outcome: string; stdout: { text: string } }> {
  const attempt = status.steps[0]?.result?.attempt_id;
  assert.ok(attempt !== undefined, JSON.stringify(status));
  return jsonOf(ok(await cli(['check-command-show', attempt, '--json']), 'check-command-show'));
}
