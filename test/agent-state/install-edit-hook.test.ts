/** `agentscm install-edit-hook`: merges one PreToolUse entry into Claude Code / Codex hook files, idempotently, refusing files it cannot rewrite. */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { makeRepo } from './fixture.js';

interface Settings {
  hooks: Record<string, { matcher?: string; hooks: { type: string; command: string; timeout?: number }[] }[]>;
  [key: string]: unknown;
}

test('Claude Code project settings: the entry is merged after the existing ones, everything else kept, and a second install changes nothing', async (t) => {
  const repo = makeRepo(t);
  mkdirSync(join(repo, '.claude'));
  const file = join(repo, '.claude', 'settings.json');
  const existing = {
    permissions: { allow: ['Bash(npm test)'] },
    hooks: {
      Stop: [{ hooks: [{ type: 'command', command: 'agentscm skill-workflow stop-hook' }] }],
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo bash' }] }],
    },
    model: 'opus',
  };
  writeFileSync(file, JSON.stringify(existing, null, 2));
  chmodSync(file, 0o600);
  const first = await runCli([
    'install-edit-hook',
    '--client',
    'claude-code',
    '--repo',
    repo,
    '--agent',
    'claude-1',
    '--settings',
    'project',
    '--json',
  ]);
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(jsonOf(first), {
    client: 'claude-code',
    settings_file: file,
    command: 'agentscm agent-state edit-hook --agent claude-1',
    changed: true,
    settings: 'project',
    excluded_added: [],
    recorded: true,
  });
  const written = JSON.parse(readFileSync(file, 'utf8')) as Settings;
  assert.deepEqual(Object.keys(written), ['permissions', 'hooks', 'model']);
  assert.deepEqual(written.hooks.Stop, existing.hooks.Stop);
  assert.deepEqual(written.hooks.PreToolUse, [
    existing.hooks.PreToolUse[0],
    {
      matcher: 'Edit|MultiEdit|Write|NotebookEdit',
      hooks: [{ type: 'command', command: 'agentscm agent-state edit-hook --agent claude-1', timeout: 10 }],
    },
  ]);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const bytes = readFileSync(file);
  const second = await runCli([
    'install-edit-hook',
    '--client',
    'claude-code',
    '--repo',
    repo,
    '--agent',
    'claude-1',
    '--settings',
    'project',
  ]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /^already installed: /);
  assert.deepEqual(readFileSync(file), bytes);
});

test('Codex project and user hooks files; local is refused for Codex', async (t) => {
  const repo = makeRepo(t);
  const home = tempDir(t);
  const project = await runCli([
    'install-edit-hook',
    '--client',
    'codex',
    '--repo',
    repo,
    '--executable',
    '/opt/agent scm/run.js',
    '--json',
  ]);
  assert.equal(project.code, 0, project.stderr);
  const written = JSON.parse(readFileSync(join(repo, '.codex', 'hooks.json'), 'utf8')) as Settings;
  assert.deepEqual(written, {
    hooks: {
      PreToolUse: [
        { hooks: [{ type: 'command', command: "'/opt/agent scm/run.js' agent-state edit-hook", timeout: 10 }] },
      ],
    },
  });
  const user = await runCli(['install-edit-hook', '--client', 'codex', '--settings', 'user', '--json'], {
    env: { HOME: home },
  });
  assert.equal(user.code, 0, user.stderr);
  assert.equal(jsonOf(user).settings_file, join(home, '.codex', 'hooks.json'));
  const claudeUser = await runCli(['install-edit-hook', '--client', 'claude-code', '--settings', 'user', '--json'], {
    env: { HOME: home },
  });
  assert.equal(jsonOf(claudeUser).settings_file, join(home, '.claude', 'settings.json'));
  const local = await runCli(['install-edit-hook', '--client', 'codex', '--settings', 'local', '--repo', repo]);
  assert.equal(local.code, 2);
  assert.match(local.stderr, /^error\[USAGE\]/);
});

test('a settings file agentscm cannot rewrite exactly is refused and left as it is', async (t) => {
  const repo = makeRepo(t);
  mkdirSync(join(repo, '.claude'));
  const file = join(repo, '.claude', 'settings.local.json');
  for (const text of [
    '{"hooks": {}, "hooks": {}}',
    '[]',
    '{"hooks": []}',
    '{"hooks": {"PreToolUse": {}}}',
    '{"cleanupPeriodDays": 1.5}',
    'not json',
  ]) {
    writeFileSync(file, text);
    const result = await runCli([
      'install-edit-hook',
      '--client',
      'claude-code',
      '--settings',
      'local',
      '--repo',
      repo,
    ]);
    assert.equal(result.code, 2, text);
    assert.match(result.stderr, /^error\[AGENT_STATE_HOOK_SETTINGS_INVALID\]/, text);
    assert.equal(readFileSync(file, 'utf8'), text);
  }
});
