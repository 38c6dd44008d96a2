/**
 * `agentscm install-stop` against real settings files: the entry merged beside every other
 * setting and hook, replaced on re-install, removed with --remove, --dry-run writing nothing;
 * results valid under the clients' own schemas (the copies under docs/schemas/external/);
 * malformed files refused and left byte for byte; the same merge as install-edit-hook.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { Ajv } from 'ajv';

import { jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const external = (file: string): object =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'schemas', 'external', file), 'utf8')) as object;
const ajv = new Ajv({ strict: false, allowUnionTypes: true });
const validClaude = ajv.compile(external('claude-code/settings.hooks.schema.json'));
const validCodex = ajv.compile(external('codex-hooks/hooks.config.schema.json'));

interface Handler {
  type: string;
  command: string;
  timeout?: number;
}
interface Settings {
  hooks: Record<string, { matcher?: string; hooks: Handler[] }[]>;
  [key: string]: unknown;
}

const read = (file: string): Settings => JSON.parse(readFileSync(file, 'utf8')) as Settings;

test('Claude Code project settings: merged beside every other setting and hook, replaced on re-install, removed with --remove', async (t) => {
  const root = tempDir(t);
  const repo = join(root, 'repo');
  const data = join(root, 'data');
  mkdirSync(join(repo, '.claude'), { recursive: true });
  const file = join(repo, '.claude', 'settings.json');
  const existing = {
    permissions: { allow: ['Bash(npm test)'] },
    hooks: {
      Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }],
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo bash' }] }],
    },
    model: 'opus',
  };
  writeFileSync(file, JSON.stringify(existing, null, 2));
  const base = [
    '--data-dir',
    data,
    'install-stop',
    '--client',
    'claude-code',
    '--mode',
    'stop',
    '--change',
    'fix-1',
    '--workspace',
    repo,
    '--repo',
    repo,
    '--scope',
    'project',
  ];
  const first = await runCli([...base, '--json']);
  assert.equal(first.code, 0, first.stderr);
  const outcome = jsonOf<{
    settings_file: string;
    command: string;
    changed: boolean;
    action: string;
    instructions: string | null;
  }>(first);
  assert.equal(outcome.settings_file, file);
  assert.equal(outcome.command, `agentscm --data-dir ${data} skill-workflow stop fix-1 --workspace ${repo}`);
  assert.deepEqual([outcome.changed, outcome.action, outcome.instructions], [true, 'installed', null]);
  let written = read(file);
  assert.ok(validClaude(written), JSON.stringify(validClaude.errors));
  assert.deepEqual(Object.keys(written), ['permissions', 'hooks', 'model']);
  assert.deepEqual(written.permissions, existing.permissions);
  assert.deepEqual(written.hooks.PreToolUse, existing.hooks.PreToolUse);
  assert.deepEqual(written.hooks.Stop, [
    existing.hooks.Stop[0],
    { hooks: [{ type: 'command', command: outcome.command, timeout: 900 }] },
  ]);

  const same = readFileSync(file);
  const again = await runCli(base);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^already installed: /);
  assert.deepEqual(readFileSync(file), same, 'installing the same entry again changes nothing');

  const replaced = await runCli([
    ...base,
    '--docker',
    '/usr/bin/docker',
    '--docker-socket',
    '/var/run/docker.sock',
    '--target',
    'release',
  ]);
  assert.equal(replaced.code, 0, replaced.stderr);
  written = read(file);
  assert.equal(written.hooks.Stop?.length, 2, 're-installing replaces its own entry instead of adding a second');
  assert.equal(
    written.hooks.Stop?.[1]?.hooks[0]?.command,
    `agentscm --data-dir ${data} skill-workflow stop fix-1 --workspace ${repo} --target release --docker /usr/bin/docker --docker-socket /var/run/docker.sock`,
  );

  const dry = await runCli([...base, '--remove', '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^dry run: would remove the entry from /);
  assert.equal(read(file).hooks.Stop?.length, 2, '--dry-run writes nothing');
  const removed = await runCli([...base, '--remove', '--json']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(read(file), existing, '--remove leaves the file as it was before');
  const twice = await runCli([...base, '--remove', '--json']);
  assert.equal(jsonOf<{ changed: boolean }>(twice).changed, false);
});

test('Codex task-stop: a new project hooks file, the guidance pointer, the Codex command; --remove deletes the emptied file', async (t) => {
  const root = tempDir(t);
  const repo = join(root, 'repo');
  mkdirSync(repo);
  const data = join(root, 'data');
  const task = [
    '--endpoint',
    'https://hub.example:8443',
    '--repository',
    'acme/widgets',
    '--profile',
    'ci',
    '--token-file',
    '/home/me/agentscm token',
  ];
  const base = [
    '--data-dir',
    data,
    'install-stop',
    '--client',
    'codex',
    '--mode',
    'task-stop',
    '--change',
    'fix-1',
    '--workspace',
    repo,
    '--repo',
    repo,
    ...task,
  ];
  const dry = await runCli([...base, '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /"task-codex-stop"|task-codex-stop/);
  assert.equal(existsSync(join(repo, '.codex')), false, '--dry-run creates nothing');
  const installed = await runCli([...base, '--json']);
  assert.equal(installed.code, 0, installed.stderr);
  const outcome = jsonOf<{ command: string; instructions: string }>(installed);
  assert.equal(
    outcome.command,
    `agentscm --data-dir ${data} skill-workflow task-codex-stop fix-1 --endpoint https://hub.example:8443 --repository acme/widgets --profile ci --token-file '/home/me/agentscm token' --workspace ${repo}`,
  );
  assert.match(outcome.instructions, /Workflow tasks/);
  const file = join(repo, '.codex', 'hooks.json');
  const written = read(file);
  assert.ok(validCodex(written), JSON.stringify(validCodex.errors));
  assert.deepEqual(written, {
    hooks: { Stop: [{ hooks: [{ type: 'command', command: outcome.command, timeout: 60 }] }] },
  });
  const human = await runCli(base);
  assert.match(human.stdout, /workflow-task guidance: /);
  // A hub profile pinned to another target: --target goes into the hook command (issue #25 item 14).
  const pinned = await runCli([...base, '--target', 'release', '--json']);
  assert.equal(pinned.code, 0, pinned.stderr);
  assert.equal(jsonOf<{ command: string }>(pinned).command, `${outcome.command} --target release`);
  const pinnedFile = read(file);
  assert.ok(validCodex(pinnedFile), JSON.stringify(validCodex.errors));
  assert.deepEqual(pinnedFile, {
    hooks: { Stop: [{ hooks: [{ type: 'command', command: `${outcome.command} --target release`, timeout: 60 }] }] },
  });
  const claudePinned = await runCli([
    '--data-dir',
    data,
    'install-stop',
    '--client',
    'claude-code',
    '--mode',
    'task-stop',
    '--change',
    'fix-1',
    '--workspace',
    repo,
    '--repo',
    repo,
    ...task,
    '--target',
    'release',
  ]);
  assert.equal(claudePinned.code, 0, claudePinned.stderr);
  const claudeFile = read(join(repo, '.claude', 'settings.local.json'));
  assert.ok(validClaude(claudeFile), JSON.stringify(validClaude.errors));
  assert.match(
    claudeFile.hooks.Stop?.[0]?.hooks[0]?.command ?? '',
    / skill-workflow task-stop fix-1 .* --target release$/,
  );
  const claude = await runCli([
    '--data-dir',
    data,
    'install-stop',
    '--client',
    'claude-code',
    '--mode',
    'task-stop',
    '--change',
    'fix-1',
    '--workspace',
    repo,
    '--repo',
    repo,
    ...task,
    '--json',
  ]);
  assert.match(jsonOf<{ command: string }>(claude).command, / skill-workflow task-stop fix-1 /);
  const removed = await runCli([...base, '--remove']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(existsSync(file), false, 'a Codex hooks file with no hooks left is removed (an empty one is invalid)');
});

test("user scope edits the home directory's file", async (t) => {
  const home = tempDir(t);
  const result = await runCli(
    [
      '--data-dir',
      join(home, 'data'),
      'install-stop',
      '--client',
      'codex',
      '--mode',
      'stop',
      '--scope',
      'user',
      '--change',
      'c',
      '--workspace',
      home,
      '--json',
    ],
    { env: { HOME: home } },
  );
  assert.equal(result.code, 0, result.stderr);
  assert.equal(jsonOf<{ settings_file: string }>(result).settings_file, join(home, '.codex', 'hooks.json'));
  assert.match(
    read(join(home, '.codex', 'hooks.json')).hooks.Stop?.[0]?.hooks[0]?.command ?? '',
    / skill-workflow stop c --workspace \S+ --client codex$/,
  );
});

test('bad flags are USAGE and write nothing: a relative token file, task flags in stop mode, a missing task flag, a bad endpoint', async (t) => {
  const repo = tempDir(t);
  const base = ['install-stop', '--client', 'claude-code', '--change', 'c', '--workspace', repo, '--repo', repo];
  const full = ['--endpoint', 'https://h', '--repository', 'a/b', '--profile', 'p', '--token-file', '/abs/token'];
  for (const args of [
    ['--mode', 'task-stop', ...full.slice(0, -1), 'token.txt'],
    ['--mode', 'stop', ...full],
    ['--mode', 'task-stop', ...full.slice(0, 6)],
    ['--mode', 'task-stop', '--endpoint', 'ftp://h', ...full.slice(2)],
    ['--mode', 'task-stop', '--endpoint', 'https://h', '--repository', 'widgets', ...full.slice(4)],
    ['--mode', 'stop', '--docker', '/usr/bin/docker'],
  ]) {
    const result = await runCli([...base, ...args]);
    assert.equal(result.code, 2, args.join(' '));
    assert.match(result.stderr, /^error\[USAGE\]/, args.join(' '));
  }
  assert.equal(existsSync(join(repo, '.claude')), false);
});

test("a file agentscm cannot rewrite exactly, or that the client's schema refuses, is HOOK_SETTINGS_INVALID and left byte for byte", async (t) => {
  const repo = tempDir(t);
  mkdirSync(join(repo, '.claude'));
  mkdirSync(join(repo, '.codex'));
  const cases: ['claude-code' | 'codex', string][] = [
    ['claude-code', '// comment\n{}'],
    ['claude-code', '{"hooks": {}, "hooks": {}}'],
    ['claude-code', '[]'],
    ['claude-code', '{"hooks": {"Stop": {}}}'],
    ['claude-code', '{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}'],
    ['claude-code', '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "extra": 1}]}]}}'],
    ['claude-code', '{"cleanupPeriodDays": 1.5}'],
    ['codex', '{"hooks": {}}'],
    ['codex', '{"hooks": {"Stop": []}}'],
    ['codex', '{"theme": "dark", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}'],
    ['codex', 'not json'],
  ];
  for (const [client, text] of cases) {
    const file = client === 'codex' ? join(repo, '.codex', 'hooks.json') : join(repo, '.claude', 'settings.local.json');
    writeFileSync(file, text);
    const result = await runCli([
      'install-stop',
      '--client',
      client,
      '--mode',
      'stop',
      '--change',
      'c',
      '--workspace',
      repo,
      '--repo',
      repo,
    ]);
    assert.equal(result.code, 2, text);
    assert.match(result.stderr, /^error\[HOOK_SETTINGS_INVALID\]/, text);
    assert.equal(readFileSync(file, 'utf8'), text);
  }
});

test('install-edit-hook and install-stop share one merge: both entries live in one file and neither disturbs the other', async (t) => {
  const repo = tempDir(t);
  const stop = [
    'install-stop',
    '--client',
    'claude-code',
    '--mode',
    'stop',
    '--change',
    'c',
    '--workspace',
    repo,
    '--repo',
    repo,
  ];
  assert.equal((await runCli(stop)).code, 0);
  const edit = await runCli(['install-edit-hook', '--client', 'claude-code', '--repo', repo]);
  assert.equal(edit.code, 0, edit.stderr);
  const file = join(repo, '.claude', 'settings.local.json');
  const both = read(file);
  assert.ok(validClaude(both));
  assert.deepEqual(Object.keys(both.hooks), ['Stop', 'PreToolUse']);
  assert.equal((await runCli([...stop, '--remove'])).code, 0);
  assert.deepEqual(Object.keys(read(file).hooks), ['PreToolUse']);
  // The edit-hook installer now refuses what the clients' schema refuses, with its own code.
  writeFileSync(file, '{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}');
  const refused = await runCli(['install-edit-hook', '--client', 'claude-code', '--repo', repo]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /^error\[AGENT_STATE_HOOK_SETTINGS_INVALID\]/);
});
