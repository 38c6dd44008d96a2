/**
 * Hooks never land (docs/stop-hooks.md "Where the hook lives"): after init-repo and install-stop
 * for both clients the workspace is clean, a checkpoint and the server-executed Stop record no
 * hook file, and doctor says where each hook lives; `--scope project` for Claude Code writes the
 * shared file and says it is recorded; a user pattern in `.agentscm/exclude` keeps a build
 * directory out; an invalid exclude list is refused by line.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

interface Status {
  clean: boolean;
  changes: { path: string }[];
}

async function boundWorkspace(t: test.TestContext): Promise<{ ws: string; data: string }> {
  const root = tempDir(t);
  const ws = join(root, 'ws');
  const data = join(root, 'data');
  mkdirSync(ws);
  writeFileSync(join(ws, 'a.txt'), 'hi\n');
  const init = await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'p', '--no-instructions']);
  assert.equal(init.code, 0, init.stderr);
  return { ws, data };
}

function installArgs(data: string, ws: string, client: string, ...more: string[]): string[] {
  return [
    '--data-dir',
    data,
    'install-stop',
    '--client',
    client,
    '--mode',
    'stop',
    '--change',
    'c1',
    '--workspace',
    ws,
    '--repo',
    ws,
    ...more,
  ];
}

async function status(ws: string): Promise<Status> {
  const result = await runCli(['status', '--workspace', ws, '--json']);
  assert.equal(result.code, 0, result.stderr);
  return jsonOf<Status>(result);
}

async function revisionPaths(data: string, revision: string): Promise<string[]> {
  const shown = await runCli(['--data-dir', data, 'revision', 'show', revision, '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  return jsonOf<{ entries: { path: string }[] }>(shown).entries.map((e) => e.path);
}

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

test('install-stop for both clients leaves status clean; neither checkpoint nor Stop records a hook file', async (t) => {
  const { ws, data } = await boundWorkspace(t);
  const claude = ok(await runCli(installArgs(data, ws, 'claude-code')));
  assert.match(claude.stdout, /in .*\/ws\/\.claude\/settings\.local\.json\n/);
  assert.match(claude.stdout, /added \/\.claude\/settings\.local\.json to .*\/ws\/\.agentscm\/exclude/);
  const codex = jsonOf<{ settings_file: string; excluded_added: string[]; recorded: boolean; scope: string }>(
    ok(await runCli([...installArgs(data, ws, 'codex'), '--json'])),
  );
  assert.deepEqual(
    { ...codex, settings_file: codex.settings_file.slice(ws.length) },
    { ...codex, settings_file: '/.codex/hooks.json', excluded_added: ['/.codex/hooks.json'], recorded: false },
  );
  assert.equal(codex.scope, 'project');
  // Installing again adds nothing to the list.
  ok(await runCli(installArgs(data, ws, 'claude-code')));
  assert.equal(
    readFileSync(join(ws, '.agentscm', 'exclude'), 'utf8'),
    '/.claude/settings.local.json\n/.codex/hooks.json\n',
  );
  assert.deepEqual(await status(ws), { ...(await status(ws)), clean: true, changes: [] });

  // The server-executed Stop right after: it gets past the workspace to the requirement.
  const stop = await runCli(['--data-dir', data, 'skill-workflow', 'stop', 'c1', '--workspace', ws], {
    input: JSON.stringify({
      session_id: 's',
      transcript_path: join(ws, 't'),
      cwd: ws,
      hook_event_name: 'Stop',
      stop_hook_active: false,
    }),
  });
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /requirement_not_found/);
  assert.doesNotMatch(stop.stdout, /workspace_not_clean/);

  writeFileSync(join(ws, 'b.txt'), 'more\n');
  const checkpoint = jsonOf<{ revision: string }>(
    ok(await runCli(['--data-dir', data, 'checkpoint', '--change', 'c1', '--workspace', ws, '--json'])),
  );
  assert.deepEqual(await revisionPaths(data, checkpoint.revision), ['a.txt', 'b.txt']);

  // doctor: where each hook lives, excluded or not.
  const doctor = await runCli(['--data-dir', data, 'doctor', '--workspace', ws, '--json']);
  const report = jsonOf<{ hooks: { client: string; scope: string; file: string; excluded: boolean }[] }>(doctor);
  assert.deepEqual(
    report.hooks.map((h) => ({ ...h, file: h.file.slice(ws.length) })),
    [
      { client: 'claude-code', scope: 'local', event: 'Stop', file: '/.claude/settings.local.json', excluded: true },
      { client: 'codex', scope: 'project', event: 'Stop', file: '/.codex/hooks.json', excluded: true },
    ],
  );
  const human = await runCli(['--data-dir', data, 'doctor', '--workspace', ws]);
  assert.match(human.stdout, /hook: claude-code Stop in .*\/\.claude\/settings\.local\.json \(local; excluded/);
  assert.match(human.stdout, /hook: codex Stop in .*\/\.codex\/hooks\.json \(project; excluded/);
});

test('--scope project for Claude Code writes the shared settings.json and says it is recorded with the Change', async (t) => {
  const { ws, data } = await boundWorkspace(t);
  const result = ok(await runCli(installArgs(data, ws, 'claude-code', '--scope', 'project')));
  assert.match(result.stdout, /in .*\/ws\/\.claude\/settings\.json\n/);
  assert.match(result.stdout, /is inside the workspace and is recorded with the Change .* unless excluded/);
  assert.doesNotMatch(result.stdout, /added /);
  const dirty = await status(ws);
  assert.equal(dirty.clean, false);
  assert.deepEqual(
    dirty.changes.map((c) => c.path),
    ['.claude/settings.json'],
  );
  const doctor = jsonOf<{ hooks: { scope: string; excluded: boolean }[] }>(
    await runCli(['--data-dir', data, 'doctor', '--workspace', ws, '--json']),
  );
  assert.deepEqual(
    doctor.hooks.map((h) => [h.scope, h.excluded]),
    [['project', false]],
  );
  // Excluding it by hand makes the workspace clean again, and the output says so no more.
  writeFileSync(join(ws, '.agentscm', 'exclude'), '/.claude/settings.json\n');
  assert.equal((await status(ws)).clean, true);
  const again = jsonOf<{ recorded: boolean }>(
    ok(await runCli([...installArgs(data, ws, 'claude-code', '--scope', 'project'), '--json'])),
  );
  assert.equal(again.recorded, false);
  // Codex has no per-user file in a project.
  const local = await runCli(installArgs(data, ws, 'codex', '--scope', 'local'));
  assert.equal(local.code, 2);
  assert.match(local.stderr, /USAGE/);
});

test('a user pattern keeps a build directory out; an invalid line is WORKSPACE_EXCLUDE_INVALID by line number', async (t) => {
  const { ws, data } = await boundWorkspace(t);
  mkdirSync(join(ws, 'build', 'obj'), { recursive: true });
  writeFileSync(join(ws, 'build', 'obj', 'main.o'), 'x');
  writeFileSync(join(ws, 'build.txt'), 'kept');
  assert.deepEqual(
    (await status(ws)).changes.map((c) => c.path),
    ['build.txt', 'build/obj/main.o'],
  );
  writeFileSync(join(ws, '.agentscm', 'exclude'), '# local\nbuild/\n');
  assert.deepEqual(
    (await status(ws)).changes.map((c) => c.path),
    ['build.txt'],
  );
  writeFileSync(join(ws, '.agentscm', 'exclude'), '# local\nbuild/\n*.[ch\n');
  const refused = await runCli(['status', '--workspace', ws, '--json']);
  assert.equal(refused.code, 2);
  const error = jsonOf<{ error: { code: string; message: string } }>(refused).error;
  assert.equal(error.code, 'WORKSPACE_EXCLUDE_INVALID');
  assert.match(error.message, /\.agentscm\/exclude: line 3 \("\*\.\[ch"\): it has an unclosed "\["/);
  // install-stop reads the list first: refused, nothing written.
  const install = await runCli(installArgs(data, ws, 'codex'));
  assert.equal(install.code, 2);
  assert.match(install.stderr, /WORKSPACE_EXCLUDE_INVALID/);
  assert.throws(() => readFileSync(join(ws, '.codex', 'hooks.json')), /ENOENT/);
});

test('install-edit-hook: the per-user file by default, excluded; status stays clean', async (t) => {
  const { ws } = await boundWorkspace(t);
  const claude = ok(await runCli(['install-edit-hook', '--client', 'claude-code', '--repo', ws]));
  assert.match(claude.stdout, /in .*\/\.claude\/settings\.local\.json\nadded \/\.claude\/settings\.local\.json to /);
  const codex = jsonOf<{ settings: string; excluded_added: string[]; recorded: boolean }>(
    ok(await runCli(['install-edit-hook', '--client', 'codex', '--repo', ws, '--json'])),
  );
  assert.deepEqual([codex.settings, codex.excluded_added, codex.recorded], ['project', ['/.codex/hooks.json'], false]);
  assert.equal((await status(ws)).clean, true);
});
