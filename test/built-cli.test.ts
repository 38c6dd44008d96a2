/**
 * The built CLI as a user installs it: bin/run.js over the bundle that `npm run build` writes to
 * dist/ (bin/bundle.js). `npm test` builds first; run `npm run build` before running this file
 * alone.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { jsonOf, REPO_ROOT, runCli, type CliOptions } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';
import { DOCKER_SOCKET, requireEngine } from './support/collector.js';
import { errorCode, grantFor, hubStore, postTask, spawnHubServe } from './support/hub.js';

const DIST = join(REPO_ROOT, 'dist');

function built(args: string[], options: CliOptions = {}): ReturnType<typeof runCli> {
  return runCli(args, { ...options, entry: 'built' });
}

function distFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    return entry.isDirectory() ? distFiles(full) : entry.name.endsWith('.js') ? [full] : [];
  });
}

before(() => {
  assert.ok(existsSync(join(DIST, 'commands', '_execute.js')), 'dist/ is missing or stale: run `npm run build` first');
});

test('every command of the manifest is a bundle entry, and nothing in dist/ loads @oclif/core from node_modules', () => {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, { relativePath: string[] }>;
  };
  for (const [id, command] of Object.entries(manifest.commands)) {
    assert.ok(
      existsSync(join(REPO_ROOT, ...command.relativePath)),
      `${id}: ${command.relativePath.join('/')} was not built`,
    );
  }
  for (const file of distFiles(DIST)) {
    const text = readFileSync(file, 'utf8');
    // One copy of the framework: a bare import would load a second @oclif/core beside the bundled one.
    assert.doesNotMatch(
      text,
      /from\s+["']@oclif\/core["']|require\(["']@oclif\/core["']\)/,
      `${file} imports @oclif/core from node_modules`,
    );
  }
});

test('every built command module and every chunk loads; each command module exports its command class', async () => {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, { relativePath: string[] }>;
  };
  for (const [id, command] of Object.entries(manifest.commands)) {
    const mod = (await import(pathToFileURL(join(REPO_ROOT, ...command.relativePath)).href)) as {
      default?: { run?: unknown; description?: unknown };
    };
    assert.equal(typeof mod.default?.run, 'function', `${id}: no command class`);
    assert.equal(typeof mod.default?.description, 'string', `${id}: no description`);
  }
  // Chunks reached only through a dynamic import (the collector runtime of skill-workflow run).
  for (const file of distFiles(join(DIST, 'chunks'))) await import(pathToFileURL(file).href);
});

test('the built CLI prints its version, help and usage errors like the sources', async () => {
  const version = await built(['--version']);
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^agentscm\/0\.1\.0 /);
  const help = await built(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /TOPICS[\s\S]*skill-workflow/);
  assert.match(help.stdout, /COMMANDS[\s\S]*checkpoint/);
  const missing = await built(['agent-task', 'claim', '--json']);
  assert.equal(missing.code, 2);
  const error = jsonOf<{ error: { code: string; message: string } }>(missing).error;
  assert.equal(error.code, 'USAGE');
  assert.match(error.message, /--change\b.*--out\b.*--token-file\b/);
});

test('bin/dev.js (the sources through tsx) and bin/run.js (the bundle) answer alike: version, help, a usage error, a read of a fresh store', async (t) => {
  // `npm test` spawns the bundle everywhere else (AGENTSCM_TEST_CLI=built); this keeps the
  // development entry, which a test run on its own uses, answering as the built one does.
  const dataDir = tempDir(t, 'entries');
  for (const args of [
    ['--version'],
    ['--help'],
    ['agent-task', 'claim', '--json'],
    ['--data-dir', dataDir, 'revision', 'list', '--json'],
  ]) {
    const dev = await runCli(args, { entry: 'dev' });
    const bundle = await built(args);
    assert.deepEqual(
      { code: bundle.code, stdout: bundle.stdout, stderr: bundle.stderr },
      { code: dev.code, stdout: dev.stdout, stderr: dev.stderr },
      args.join(' '),
    );
  }
});

test('the built CLI records and reads back a checkpoint', async (t) => {
  const root = tempDir(t, 'agentscm-built-');
  const ws = join(root, 'ws');
  const dataDir = join(root, 'data');
  mkdirSync(join(ws, 'src'), { recursive: true });
  writeFileSync(join(ws, 'src', 'a.txt'), 'first\n');
  const init = await built(['--data-dir', dataDir, 'init-repo', ws, '--name', 'demo', '--json']);
  assert.equal(init.code, 0, init.stderr);
  writeFileSync(join(ws, 'src', 'a.txt'), 'second\n');
  const status = jsonOf<{ clean: boolean; changes: { path: string; kind: string }[] }>(
    await built(['status', '--workspace', ws, '--json']),
  );
  assert.equal(status.clean, false);
  assert.deepEqual(status.changes, [{ path: 'src/a.txt', kind: 'modified' }]);
  const checkpoint = jsonOf<{ version: number; revision: string; repository: string }>(
    await built(['checkpoint', '--change', 'c1', '--workspace', ws, '--json']),
  );
  assert.equal(checkpoint.version, 1);
  const cat = await built([
    '--data-dir',
    dataDir,
    'revision',
    'cat',
    checkpoint.revision,
    'src/a.txt',
    '--repository',
    checkpoint.repository,
  ]);
  assert.equal(cat.code, 0, cat.stderr);
  assert.equal(cat.stdout, 'second\n');
});

test('the built CLI reaches the Docker Engine API (the bundled HTTP client over the Unix socket)', async () => {
  await requireEngine();
  const docker = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';
  const probe = await built([
    'agent-task',
    'runtime-probe',
    '--docker',
    docker,
    '--docker-socket',
    DOCKER_SOCKET,
    '--image',
    'local/busybox:1',
    '--json',
  ]);
  assert.equal(probe.code, 0, probe.stderr);
  const probed = jsonOf<{ identity: { backend: string; image: { id: string } }; identity_sha256: string }>(probe);
  assert.equal(probed.identity.backend, 'docker-engine-api');
  assert.match(probed.identity.image.id, /^sha256:[0-9a-f]{64}$/);
  assert.match(probed.identity_sha256, /^[0-9a-f]{64}$/);
});

test(
  'the built hub serves the agent-tasks route from its task worker, dist/hub/task-worker.js',
  { timeout: 60_000 },
  async (t) => {
    assert.ok(existsSync(join(DIST, 'hub', 'task-worker.js')), 'the task worker entry was not built');
    const hub = hubStore(t);
    const alice = grantFor(hub, 'alice', 'a1');
    const { child, url, exited, stderr } = await spawnHubServe(t, hub, { built: true });
    const capabilities = await postTask(url, alice.token, 'capabilities', null);
    assert.equal(capabilities.status, 200, capabilities.text);
    const unknown = await postTask(url, alice.token, 'launch', null);
    assert.deepEqual([unknown.status, errorCode(unknown)], [400, 'TASK_OPERATION_UNKNOWN']);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr());
  },
);
