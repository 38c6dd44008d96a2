/**
 * The built CLI as a user installs it: bin/run.js over the bundle that `npm run build` writes to
 * dist/ (bin/bundle.js). `npm test` builds first; run `npm run build` before running this file
 * alone.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { jsonOf, REPO_ROOT, runCli, type CliOptions, type CliResult } from './helpers/cli.js';
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

/** Run `task` over `items`, at most `width` at a time, in order of the items. */
async function inPool<T, R>(items: readonly T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

/**
 * The built CLI through the framework only: dist/commands/_execute.js run as bin/run.js runs it,
 * without bin/run.js's own answers (its --version). The sources (bin/dev.js) answer the same
 * lines as this in the test above; through tsx each run is several times slower.
 */
type Answer = Pick<CliResult, 'code' | 'stdout' | 'stderr'>;

function framework(args: readonly string[], env: Record<string, string> = {}): Promise<Answer> {
  const execute = pathToFileURL(join(DIST, 'commands', '_execute.js')).href;
  const root = join(REPO_ROOT, 'bin', 'run.js');
  const code =
    `const { runAgentscm } = await import(${JSON.stringify(execute)});` +
    `await runAgentscm({ argv: process.argv.slice(1), root: ${JSON.stringify(root)} });`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', code, '--', ...args],
      { env: { ...process.env, AGENTSCM_DATA_DIR: undefined, ...env }, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : (error as { code?: unknown }).code;
        if (typeof status !== 'number') reject(error ?? new Error('no exit status'));
        else resolve({ code: status, stdout, stderr });
      },
    );
  });
}

test(
  'help of every command and topic, usage errors, unknown commands and --version: bin/run.js answers byte for byte as the framework',
  { timeout: 600_000 },
  async () => {
    // bin/run.js answers some of these before the CLI framework loads (docs/architecture.md
    // "What each command loads"). Nothing may differ from what the framework prints.
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<string, unknown>;
    };
    const pjson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      oclif: { topics: Record<string, unknown> };
    };
    const lines: string[][] = [
      ['--version'],
      ['--version', '--json'],
      ['--version', 'status'],
      ['--help'],
      ['-h'],
      ['help', 'status'],
      [],
      ['nosuch-command'],
      ['nosuch-command', '--json'],
      ['agent-task', 'nosuch'],
      ['--nonexistent-flag-xyz'],
      ['--data-dir'],
      ['--data-dir=', 'status'],
      ['--data-dir', 'a', '--data-dir', 'b', 'status'],
      ['agent-task', 'claim'],
      ['agent-task', 'claim', '--json'],
      ['status', '--no-such-flag'],
      ['qualification', 'extra-argument', '--json'],
      ...Object.keys(pjson.oclif.topics).map((topic) => [topic]),
      ...Object.keys(manifest.commands).map((id) => [...id.split(':'), '--help']),
    ];
    assert.ok(lines.length > 80, `only ${lines.length} command lines`);
    const answers = await inPool(lines, 2, async (args) => {
      const [reference, bundle] = await Promise.all([framework(args), built(args)]);
      return { args, reference, bundle };
    });
    for (const { args, reference, bundle } of answers) {
      assert.deepEqual(
        { code: bundle.code, stdout: bundle.stdout, stderr: bundle.stderr },
        { code: reference.code, stdout: reference.stdout, stderr: reference.stderr },
        `agentscm ${args.join(' ')}`,
      );
    }
    // The empty AGENTSCM_DATA_DIR is refused before --version too, and by the sources alike.
    const env = { AGENTSCM_DATA_DIR: '' };
    const [dev, bundle] = await Promise.all([
      runCli(['--version'], { entry: 'dev', env }),
      built(['--version'], { env }),
    ]);
    assert.equal(bundle.code, 2);
    assert.deepEqual([bundle.stdout, bundle.stderr], [dev.stdout, dev.stderr]);
  },
);

test('bin/run.js answers --version from package.json alone: a copy of the two files without dist/ prints the same line', async (t) => {
  const copy = tempDir(t, 'version-only');
  mkdirSync(join(copy, 'bin'));
  copyFileSync(join(REPO_ROOT, 'bin', 'run.js'), join(copy, 'bin', 'run.js'));
  copyFileSync(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
  const alone = spawnSync(process.execPath, [join(copy, 'bin', 'run.js'), '--version'], { encoding: 'utf8' });
  const version = await built(['--version']);
  assert.deepEqual([alone.status, alone.stdout, alone.stderr], [0, version.stdout, '']);
  // Anything else needs the bundle, which the copy lacks: the framework is not bypassed there.
  const help = spawnSync(process.execPath, [join(copy, 'bin', 'run.js'), '--help'], { encoding: 'utf8' });
  assert.notEqual(help.status, 0);
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
