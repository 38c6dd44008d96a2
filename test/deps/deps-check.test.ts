/**
 * Checks that need dependencies (docs/deps.md), with real packages from the npm registry, the
 * real CLI, store and Docker Engine: a project whose tests `require('tape')` and run through
 * tape's own binary (node_modules/.bin/tape). `deps build` makes its dependency image (a second
 * build reuses it without npm); `check add --deps npm` makes the check pass on it, while the same
 * tests on the plain Node image fail with the missing-module message in the output the agent
 * sees; a Change that edits the lockfile is refused before any container until `deps build` and
 * `collector add` pin the new image; a lockfile with install scripts is refused without
 * --allow-scripts. npm's downloads are cached under a test-owned directory across runs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Pool } from 'undici';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_EXE, DOCKER_SOCKET } from '../support/runtime.js';

const NODE_IMAGE = 'local/node:20';
const RUNTIME = ['--docker', DOCKER_EXE, '--docker-socket', DOCKER_SOCKET];
/** npm's own cache, owned by these tests and kept between runs so the registry is asked once. */
const NPM_CACHE = join(tmpdir(), 'agentscm-test-npm-cache');
const NPM_ENV = { npm_config_cache: NPM_CACHE, npm_config_update_notifier: 'false' };

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}${result.stdout}`);
  return result;
}

async function removeImages(references: readonly string[]): Promise<void> {
  const pool = new Pool('http://localhost', { socketPath: DOCKER_SOCKET });
  try {
    for (const reference of references) {
      const answer = await pool.request({ path: `/images/${reference}?force=1`, method: 'DELETE' });
      await answer.body.text();
    }
  } finally {
    await pool.close();
  }
}

interface DepsAnswer {
  readonly image_id: string;
  readonly image: string;
  readonly reference: string;
  readonly lockfile_sha256: string;
  readonly reused: boolean;
}
interface QualificationJson {
  readonly tasks: readonly { readonly task_id: string; readonly step_id: string }[];
  readonly failures: readonly { readonly task_id: string; readonly code: string }[];
}
interface CollectAnswer {
  readonly outcome: string;
  readonly output_tail: unknown;
}

/** A project whose tests need tape: package.json, the lockfile npm writes for it, two tests. */
function writeProject(dir: string, name: string): void {
  mkdirSync(join(dir, 'test'), { recursive: true });
  mkdirSync(join(dir, 'src'), { recursive: true });
  const pkg = { name, version: '1.0.0', private: true, devDependencies: { tape: '5.9.0' } };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
  writeFileSync(join(dir, 'src', 'add.js'), 'module.exports = (a, b) => a + b;\n');
  writeFileSync(
    join(dir, 'test', 'add.test.js'),
    "const test = require('tape');\nconst add = require('../src/add.js');\n" +
      "test('add adds', (t) => { t.equal(add(2, 3), 5); t.end(); });\n",
  );
  execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    env: { ...process.env, ...NPM_ENV },
    stdio: 'pipe',
  });
}

test(
  'a check with dependencies: deps build, --deps npm passes, plain node fails, a lockfile change is refused',
  { timeout: 900_000 },
  async (t: TestContext) => {
    const root = tempDir(t, 'agentscm-deps-');
    const ws = join(root, 'ws');
    const dataDir = join(root, 'data');
    const stateDir = join(root, 'collector');
    const tokenFile = join(root, 'tokens', 'agent.token');
    const name = `deps-tape-${process.pid}`;
    writeProject(ws, name);
    const cli = (args: readonly string[]): Promise<CliResult> =>
      runCli(['--data-dir', dataDir, ...args], { cwd: ws, env: NPM_ENV, timeoutMs: 600_000 });
    const images: string[] = [`agentscm-deps/${name}:npm`];
    t.after(() => removeImages(images));

    ok(await cli(['init-repo', ws, '--name', name]), 'init-repo');
    // Before deps build, --deps npm has no image to name.
    const early = await cli(['check', 'add', 'tests', '--image', NODE_IMAGE, '--deps', 'npm', '--', 'tape', 'x']);
    assert.equal(early.code, 1, early.stderr);
    assert.match(early.stderr, /^error\[DEPS_IMAGE_NOT_BUILT\]: .*agentscm deps build --lockfile package-lock\.json/m);

    const built = await cli(['deps', 'build', '--lockfile', 'package-lock.json', '--image', NODE_IMAGE, '--json']);
    const first = jsonOf<DepsAnswer>(ok(built, 'deps build'));
    images.push(first.image);
    assert.equal(first.reused, false);
    assert.equal(first.reference, `agentscm-deps/${name}:npm`);
    assert.equal(
      first.lockfile_sha256,
      execFileSync('sha256sum', [join(ws, 'package-lock.json')])
        .toString()
        .slice(0, 64),
    );
    assert.match(built.stderr, /deps: npm ci .*--ignore-scripts/);
    const again = await cli(['deps', 'build', '--image', NODE_IMAGE, '--json']);
    const second = jsonOf<DepsAnswer>(ok(again, 'deps build again'));
    assert.equal(second.reused, true);
    assert.equal(second.image_id, first.image_id);
    assert.doesNotMatch(again.stderr, /npm ci/, 'the reuse path does not start npm');

    ok(
      await cli([
        'check',
        'add',
        'tests',
        '--image',
        NODE_IMAGE,
        '--deps',
        'npm',
        '--env',
        'TZ=UTC',
        '--docker-socket',
        DOCKER_SOCKET,
        '--memory',
        '512m',
        '--',
        'tape',
        'test/*.test.js',
      ]),
      'check add --deps npm',
    );
    ok(
      await cli([
        'check',
        'add',
        'plain',
        '--image',
        NODE_IMAGE,
        '--docker-socket',
        DOCKER_SOCKET,
        '--memory',
        '512m',
        '--',
        'node',
        'test/add.test.js',
      ]),
      'check add plain',
    );
    const recipe = JSON.parse(readFileSync(join(ws, '.agentscm-checks', 'tests.runner.json'), 'utf8')) as {
      image: string;
      env: Record<string, string>;
      toolchain: string;
    };
    assert.equal(recipe.image, `agentscm-deps/${name}:npm`);
    assert.deepEqual(recipe.env, {
      NODE_PATH: '/node_modules',
      AGENTSCM_DEPS_LOCKFILE: 'package-lock.json',
      TZ: 'UTC',
    });
    assert.equal(recipe.toolchain, NODE_IMAGE);
    for (const step of ['tests', 'plain'])
      ok(await cli(['agent-task', 'collector', 'add', '--step', step, '--state-dir', stateDir, ...RUNTIME]), step);
    ok(await cli(['grant', 'create', '--actor', 'me/agent-1', '--token-file', tokenFile]), 'grant create');

    const claim = async (change: string, step: string): Promise<string> => {
      const descriptor = join(root, `${change}.${step}.${Date.now()}.json`);
      const args = ['--change', change, '--step', step, '--token-file', tokenFile, '--out', descriptor];
      ok(await cli(['agent-task', 'claim', ...args]), `claim ${step}`);
      return descriptor;
    };
    const collectWith = (descriptor: string): Promise<CliResult> =>
      cli([
        'agent-task',
        'collect',
        '--descriptor',
        descriptor,
        '--key',
        join(stateDir, 'signing-key.json'),
        '--state-dir',
        stateDir,
        '--token-file',
        tokenFile,
        ...RUNTIME,
        '--json',
      ]);
    const collect = async (change: string, step: string): Promise<CliResult> => collectWith(await claim(change, step));
    /** The failure codes qualification gives each step's task of a Change (read from the store only). */
    const failuresOf = async (change: string): Promise<Record<string, string[]>> => {
      const answer = await cli(['qualification', '--change', change, '--json']);
      const parsed = JSON.parse(answer.stdout) as QualificationJson;
      const byStep: Record<string, string[]> = {};
      for (const task of parsed.tasks)
        byStep[task.step_id] = parsed.failures.filter((f) => f.task_id === task.task_id).map((f) => f.code);
      return byStep;
    };

    writeFileSync(join(ws, 'src', 'add.js'), 'module.exports = (a, b) => b + a;\n');
    ok(await cli(['checkpoint', '--change', 'fix-1']), 'checkpoint fix-1');
    // The lockfile is main's: qualification names no changed lockfile, only the pending tasks.
    assert.deepEqual(await failuresOf('fix-1'), { tests: ['task_pending'], plain: ['task_pending'] });
    const passed = jsonOf<CollectAnswer>(ok(await collect('fix-1', 'tests'), 'collect tests'));
    assert.equal(passed.outcome, 'passed');
    const plain = jsonOf<CollectAnswer>(await collect('fix-1', 'plain'));
    assert.equal(plain.outcome, 'failed');
    assert.match(JSON.stringify(plain.output_tail), /Cannot find module 'tape'/);

    // A Change that edits the lockfile: refused before any container, until rebuilt and pinned.
    const lock = JSON.parse(readFileSync(join(ws, 'package-lock.json'), 'utf8')) as { version: string };
    lock.version = '1.0.1';
    writeFileSync(join(ws, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
    const pkg = JSON.parse(readFileSync(join(ws, 'package.json'), 'utf8')) as { version: string };
    pkg.version = '1.0.1';
    writeFileSync(join(ws, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    ok(await cli(['checkpoint', '--change', 'fix-2']), 'checkpoint fix-2');
    // Qualification names the changed lockfile for the step on the dependency image, before any claim.
    assert.deepEqual(await failuresOf('fix-2'), {
      tests: ['task_pending', 'deps_lockfile_changed'],
      plain: ['task_pending'],
    });
    const staleDescriptor = await claim('fix-2', 'tests');
    const stale = await collectWith(staleDescriptor);
    assert.equal(stale.code, 1, stale.stderr);
    assert.match(stale.stderr, /^error\[DEPS_LOCKFILE_CHANGED\]: step "tests": package-lock\.json in the revision/m);
    assert.match(stale.stderr, /agentscm deps build --lockfile package-lock\.json/);
    const rebuilt = jsonOf<DepsAnswer>(ok(await cli(['deps', 'build', '--image', NODE_IMAGE, '--json']), 'rebuild'));
    images.push(rebuilt.image);
    assert.equal(rebuilt.reused, false);
    assert.notEqual(rebuilt.image_id, first.image_id);
    // The lockfile now matches the image, but the profile still pins the old one.
    const unpinned = await collectWith(staleDescriptor);
    assert.equal(unpinned.code, 2, unpinned.stderr);
    assert.match(unpinned.stderr, /^error\[COLLECT_RUNTIME_MISMATCH\]/m);
    ok(await cli(['agent-task', 'collector', 'add', '--step', 'tests', '--state-dir', stateDir, ...RUNTIME]), 'pin');
    // The refused attempt never ran: it is reconciled, and the agent checkpoints again.
    const staleTask = (JSON.parse(readFileSync(staleDescriptor, 'utf8')) as { task: { task_id: string } }).task.task_id;
    ok(await cli(['agent-task', 'call', 'reconcile', '--token-file', tokenFile, '--task', staleTask]), 'reconcile');
    writeFileSync(join(ws, 'src', 'add.js'), 'module.exports = (a, b) => a + b;\n');
    ok(await cli(['checkpoint', '--change', 'fix-2']), 'checkpoint fix-2 again');
    const now = jsonOf<CollectAnswer>(ok(await collect('fix-2', 'tests'), 'collect after rebuild'));
    assert.equal(now.outcome, 'passed');
    // Passed on the rebuilt image: the changed lockfile is no longer a failure.
    assert.deepEqual((await failuresOf('fix-2')).tests, []);
  },
);

test('a lockfile with install scripts is refused without --allow-scripts, before npm runs', async (t) => {
  const dir = tempDir(t, 'agentscm-deps-scripts-');
  writeFileSync(join(dir, 'package.json'), '{"name":"scripts","version":"1.0.0","dependencies":{"x":"1.0.0"}}\n');
  const lock = {
    name: 'scripts',
    version: '1.0.0',
    lockfileVersion: 3,
    packages: {
      '': { name: 'scripts', version: '1.0.0', dependencies: { x: '1.0.0' } },
      'node_modules/x': { version: '1.0.0', hasInstallScript: true },
    },
  };
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock));
  const refused = await runCli(['deps', 'build', '--workspace', dir, '--image', NODE_IMAGE, '--json'], {
    env: NPM_ENV,
  });
  assert.equal(refused.code, 2, refused.stderr);
  const answer = jsonOf<{ error: { code: string; message: string; hint: string } }>(refused);
  assert.equal(answer.error.code, 'DEPS_INSTALL_SCRIPTS');
  assert.match(answer.error.message, /1 package\(s\) with install scripts: node_modules\/x/);
  assert.match(answer.error.hint, /--allow-scripts only if you trust them/);
  assert.doesNotMatch(refused.stderr, /npm ci/);
});
