/**
 * Reproducers for the CLI entry (docs/cli.md): a data directory that names an oclif user plugin
 * must not run it, through the sources (bin/dev.js) and the built CLI (bin/run.js over dist/,
 * which `npm run build` makes); the leading --data-dir is taken exactly once, only as itself and
 * never empty; unknown commands are one error[USAGE] line; help describes only what exists.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { pathToFileURL } from 'node:url';
import { Config } from '@oclif/core';

import { jsonOf, REPO_ROOT, runCli, TSX_LOADER, type CliOptions, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

interface EvilDataDir {
  readonly dir: string;
  /** Written by the plugin's init hook if it ever runs. */
  readonly marker: string;
}

/** D/package.json names a user plugin "evil" whose init hook writes D/../pwned. */
function evilDataDir(t: test.TestContext): EvilDataDir {
  const base = tempDir(t);
  const dir = join(base, 'data');
  const marker = join(base, 'pwned');
  const plugin = join(dir, 'node_modules', 'evil');
  mkdirSync(plugin, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      private: true,
      oclif: { schema: 1, plugins: [{ type: 'user', name: 'evil' }] },
      dependencies: { evil: '1.0.0' },
    }),
  );
  writeFileSync(
    join(plugin, 'package.json'),
    JSON.stringify({
      name: 'evil',
      version: '1.0.0',
      type: 'module',
      oclif: { commands: './commands', hooks: { init: './hook.js' } },
    }),
  );
  writeFileSync(
    join(plugin, 'hook.js'),
    `import { writeFileSync } from 'node:fs';\nexport default async function () { writeFileSync(${JSON.stringify(marker)}, 'ran'); }\n`,
  );
  return { dir, marker };
}

test('the reproducer is live: oclif with its defaults loads the user plugin of that data directory and runs its hook', async (t) => {
  const evil = evilDataDir(t);
  const config = new Config({ root: REPO_ROOT });
  // oclif's own default: the user plugins of <BIN>_DATA_DIR (here the data directory given to agentscm).
  const saved = process.env.AGENTSCM_DATA_DIR;
  process.env.AGENTSCM_DATA_DIR = evil.dir;
  try {
    await config.load();
  } finally {
    if (saved === undefined) delete process.env.AGENTSCM_DATA_DIR;
    else process.env.AGENTSCM_DATA_DIR = saved;
  }
  await config.runHook('init', { argv: [], id: undefined });
  assert.equal(readFileSync(evil.marker, 'utf8'), 'ran');
});

const INVOCATIONS: readonly {
  readonly label: string;
  args(dir: string): string[];
  env(dir: string): Record<string, string>;
}[] = [
  { label: '--data-dir D policy show', args: (d) => ['--data-dir', d, 'policy', 'show'], env: () => ({}) },
  { label: '--data-dir=D --version', args: (d) => [`--data-dir=${d}`, '--version'], env: () => ({}) },
  { label: 'AGENTSCM_DATA_DIR=D policy show', args: () => ['policy', 'show'], env: (d) => ({ AGENTSCM_DATA_DIR: d }) },
  { label: 'AGENTSCM_DATA_DIR=D --version', args: () => ['--version'], env: (d) => ({ AGENTSCM_DATA_DIR: d }) },
  { label: 'policy show --data-dir D', args: (d) => ['policy', 'show', '--data-dir', d], env: () => ({}) },
];

async function expectNoPluginRuns(t: test.TestContext, entry: CliOptions['entry']): Promise<void> {
  const evil = evilDataDir(t);
  for (const invocation of INVOCATIONS) {
    const result = await runCli(invocation.args(evil.dir), { env: invocation.env(evil.dir), entry });
    assert.equal(existsSync(evil.marker), false, `${invocation.label} ran the plugin's hook`);
    if (invocation.label.includes('--version')) assert.equal(result.code, 0, `${invocation.label}: ${result.stderr}`);
    // No store there: the command's own answer, nothing from a plugin.
    else assert.match(result.stderr, /^error\[STORE_NOT_INITIALIZED\]: [^\n]*\n$/, invocation.label);
  }
}

test('no user plugin of the data directory loads, through the sources', async (t) => {
  await expectNoPluginRuns(t, 'dev');
});

test('no user plugin of the data directory loads, through the built CLI', async (t) => {
  const entry = join(REPO_ROOT, 'dist', 'commands', '_execute.js');
  assert.ok(
    existsSync(entry) && readFileSync(entry, 'utf8').includes('runAgentscm'),
    'dist/ is missing or stale: run `npm run build` first',
  );
  await expectNoPluginRuns(t, 'built');
});

test('a data directory that is a regular file gives the command its one error line and no ENOTDIR warning', async (t) => {
  const file = join(tempDir(t), 'not-a-dir');
  writeFileSync(file, 'x');
  for (const options of [
    { args: ['--data-dir', file, 'policy', 'show'], env: {} },
    { args: ['policy', 'show'], env: { AGENTSCM_DATA_DIR: file } },
  ]) {
    const result = await runCli(options.args, { env: options.env });
    assert.equal(result.code, 4, result.stderr);
    assert.match(result.stderr, /^error\[STORE_NOT_INITIALIZED\]: [^\n]*\n$/);
  }
});

function assertUsage(result: CliResult, message: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /^error\[USAGE\]: [^\n]*\n$/);
  assert.match(result.stderr, message);
}

test('a leading word that only starts with --data-dir is a usage error, not a data directory', async () => {
  for (const head of ['--data-dir-typo', '--data-directory', '--data-dirXX/path']) {
    assertUsage(await runCli([head, 'policy', 'show']), new RegExp(`unknown flag "${head}" before the command`));
    assertUsage(await runCli([head, 'x', 'policy', 'show']), /unknown flag/);
  }
});

test('an empty data directory is a usage error in every form', async () => {
  assertUsage(await runCli(['--data-dir=', 'policy', 'show']), /--data-dir needs a directory, not an empty value/);
  assertUsage(await runCli(['--data-dir', '', 'policy', 'show']), /--data-dir needs a directory, not an empty value/);
  assertUsage(
    await runCli(['policy', 'show'], { env: { AGENTSCM_DATA_DIR: '' } }),
    /AGENTSCM_DATA_DIR is set but empty/,
  );
  assertUsage(
    await runCli(['policy', 'show', '--data-dir='], { env: {} }),
    /--data-dir needs a directory, not an empty value/,
  );
});

test('a repeated --data-dir is a usage error, before and after the command', async () => {
  assertUsage(
    await runCli(['--data-dir', 'a', '--data-dir', 'b', 'policy', 'show']),
    /--data-dir is given more than once/,
  );
  assertUsage(
    await runCli(['--data-dir', 'a', 'policy', 'show', '--data-dir', 'b']),
    /--data-dir is given more than once/,
  );
  assertUsage(
    await runCli(['policy', 'show', '--data-dir', 'a', '--data-dir', 'b']),
    /--data-dir is given more than once/,
  );
});

test('the leading --data-dir reaches the command like the flag after it', async (t) => {
  const dir = join(tempDir(t), 'store');
  for (const args of [
    ['--data-dir', dir, 'policy', 'show', '--json'],
    [`--data-dir=${dir}`, 'policy', 'show', '--json'],
    ['policy', 'show', '--data-dir', dir, '--json'],
  ]) {
    const result = await runCli(args);
    assert.equal(result.code, 4);
    assert.equal(jsonOf<{ error: { code: string; message: string } }>(result).error.code, 'STORE_NOT_INITIALIZED');
    assert.ok(jsonOf<{ error: { message: string } }>(result).error.message.includes(dir), result.stdout);
  }
});

test('an unknown command or leading flag is one error[USAGE] line with exit 2 (and JSON with --json)', async () => {
  assertUsage(await runCli(['frobnicate']), /^error\[USAGE\]: unknown command "frobnicate"; /);
  assertUsage(await runCli(['agent-task', 'frob']), /^error\[USAGE\]: unknown command "agent-task frob"; /);
  assertUsage(await runCli(['--nonexistent-flag-xyz']), /^error\[USAGE\]: unknown flag "--nonexistent-flag-xyz"; /);
  const multiLine = await runCli(['evil\nerror[OK] \u001b[2Jfine']);
  assertUsage(multiLine, /unknown command "evil\\nerror\[OK\] \\u001b\[2Jfine"/);
  const json = await runCli(['frobnicate', '--json']);
  assertUsage(json, /unknown command/);
  assert.equal(jsonOf<{ error: { code: string } }>(json).error.code, 'USAGE');
});

test('topic help describes only commands that exist', async () => {
  for (const topic of ['agent-task', 'skill-workflow']) {
    const result = await runCli([topic, '--help']);
    assert.equal(result.code, 0, result.stderr);
    const description = result.stdout.split('\n')[0] ?? '';
    // Names of what is not built yet: approval and landing (the agent-owned Stop hooks are).
    assert.doesNotMatch(description, /approv|landing|\bland\b/i, `${topic}: ${description}`);
  }
});

test('a message that carries a raw path from deeper layers is still printed as one line', async (t) => {
  // The store reports its directory as given; the command's error printer escapes what is left.
  const dir = join(tempDir(t), 'new\nline\u001b[2J');
  const result = await runCli(['--data-dir', dir, 'policy', 'show']);
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /^error\[STORE_NOT_INITIALIZED\]: [^\n]*new\\nline\\u001b\[2J[^\n]*\n$/);
});

test('with the entry loaded, oclif does not take AGENTSCM_DATA_DIR as its own data directory', (t) => {
  const dir = join(tempDir(t), 'store');
  const entry = pathToFileURL(join(REPO_ROOT, 'src', 'commands', '_execute.ts')).href;
  // A separate process: the entry changes how every oclif Config of its process reads variables.
  const script = `
    import { Config } from '@oclif/core';
    await import(${JSON.stringify(entry)});
    const config = await Config.load({ root: ${JSON.stringify(REPO_ROOT)}, userPlugins: false });
    process.stdout.write(JSON.stringify({ dataDir: config.dataDir, configDirFromEnv: config.configDir }));
  `;
  const result = spawnSync(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    env: { ...process.env, AGENTSCM_DATA_DIR: dir, AGENTSCM_CONFIG_DIR: join(dir, 'config') },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout) as { dataDir: string; configDirFromEnv: string };
  assert.notEqual(out.dataDir, dir);
  assert.ok(!out.dataDir.startsWith(dir), out.dataDir);
  // Other variables of oclif are read as before.
  assert.equal(out.configDirFromEnv, join(dir, 'config'));
});
