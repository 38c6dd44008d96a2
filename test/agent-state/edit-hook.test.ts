/**
 * `agentscm agent-state edit-hook` as Claude Code and Codex run it: PreToolUse input on stdin,
 * a warning once per session and path, exit 0 always (fail open).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { createAgentState } from '../../src/agent-state/operations.js';
import { encodeCanonicalText } from '../../src/contracts/json/canonical-json.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { makeRepo } from './fixture.js';

function agentsFile(repo: string, agents: { id: string; state?: 'working' | 'completed'; scopes: string[] }[]): void {
  mkdirSync(join(repo, '.agentscm'), { recursive: true });
  const envelopes = agents.map((a) =>
    createAgentState({
      agent_id: a.id,
      backend: 'codex',
      state: a.state ?? 'working',
      state_source: 'adapter',
      scopes: a.scopes.map((path) => ({ path, access: 'write' as const })),
    }),
  );
  writeFileSync(
    join(repo, '.agentscm', 'agent-state.json'),
    encodeCanonicalText({ agents: envelopes } as unknown as JsonValue),
  );
}

function edit(repo: string, path: string, session = 's1', tool = 'Edit'): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: '/dev/null',
    cwd: repo,
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: { file_path: path, old_string: 'a', new_string: 'b' },
  });
}

async function hook(
  input: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; message: string | null }> {
  const result = await runCli(['agent-state', 'edit-hook', ...args], { input, env });
  const message = result.stdout === '' ? null : (JSON.parse(result.stdout) as { systemMessage: string }).systemMessage;
  return { code: result.code, message };
}

test("warns once per session and path when the path lies in another active agent's write scope", async (t) => {
  const repo = makeRepo(t);
  const env = { TMPDIR: tempDir(t) };
  agentsFile(repo, [
    { id: 'builder', scopes: ['src/a'] },
    { id: 'reviewer', scopes: ['docs'] },
    { id: 'done', state: 'completed', scopes: ['top.txt'] },
  ]);
  const first = await hook(edit(repo, join(repo, 'src/a/x.ts')), ['--agent', 'reviewer'], env);
  assert.equal(first.code, 0);
  assert.match(
    first.message ?? '',
    /src\/a\/x\.ts lies in the write scope of another active agent: builder \(working, write scope src\/a/,
  );
  // Same session and path: silent; another session: warned again.
  assert.deepEqual(await hook(edit(repo, join(repo, 'src/a/x.ts')), ['--agent', 'reviewer'], env), {
    code: 0,
    message: null,
  });
  assert.match((await hook(edit(repo, 'src/a/x.ts', 's2'), ['--agent', 'reviewer'], env)).message ?? '', /builder/);
  // Its own scope, a sibling name, a finished agent's scope and a path outside the repository: silent.
  for (const path of [join(repo, 'docs/readme.md'), join(repo, 'src/ab/y.ts'), join(repo, 'top.txt'), '/etc/hosts']) {
    assert.deepEqual(
      await hook(edit(repo, path, 's3'), ['--agent', 'reviewer'], env),
      { code: 0, message: null },
      path,
    );
  }
});

test('Codex apply_patch inputs: every file of the patch is checked', async (t) => {
  const repo = makeRepo(t);
  const env = { TMPDIR: tempDir(t) };
  agentsFile(repo, [{ id: 'builder', scopes: ['src'] }]);
  const patch =
    '*** Begin Patch\n*** Update File: docs/readme.md\n@@\n-docs\n+doc\n*** Add File: src/new.ts\n+x\n*** End Patch\n';
  const input = JSON.stringify({
    session_id: 'c1',
    cwd: repo,
    hook_event_name: 'PreToolUse',
    tool_name: 'apply_patch',
    tool_input: { command: ['apply_patch', patch] },
  });
  const result = await hook(input, ['--agent', 'codex-1'], env);
  assert.equal(result.code, 0);
  assert.match(result.message ?? '', /src\/new\.ts lies in the write scope/);
  assert.doesNotMatch(result.message ?? '', /docs\/readme/);
});

test("the holder of the repository's mutation lease (a running agent-state run) counts as an active agent", async (t) => {
  const repo = makeRepo(t);
  const env = { TMPDIR: tempDir(t) };
  const running = runCli(
    [
      'agent-state',
      'run',
      '--agent',
      'builder',
      '--scope',
      'src:write',
      '--',
      'sh',
      '-c',
      'touch src/started.flag; while [ ! -e src/release.flag ]; do sleep 0.05; done',
    ],
    { cwd: repo, env },
  );
  const deadline = Date.now() + 60_000;
  while (!existsSync(join(repo, 'src/started.flag')) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 25));
  const warned = await hook(edit(repo, join(repo, 'src/a.txt')), ['--agent', 'reviewer'], env);
  writeFileSync(join(repo, 'src/release.flag'), '');
  assert.equal((await running).code, 0);
  assert.match(warned.message ?? '', /builder \(working, write scope src, from the mutation lease\)/);
  // After the run, its lease is gone and nothing warns.
  assert.deepEqual(await hook(edit(repo, join(repo, 'src/a.txt'), 's9'), ['--agent', 'reviewer'], env), {
    code: 0,
    message: null,
  });
});

test('fails open: any error allows the edit (exit 0) with one warning', async (t) => {
  const repo = makeRepo(t);
  const env = { TMPDIR: tempDir(t) };
  mkdirSync(join(repo, '.agentscm'));
  writeFileSync(join(repo, '.agentscm', 'agent-state.json'), '{"agents": [], "agents": []}');
  for (const [input, args] of [
    [edit(repo, join(repo, 'src/a.txt')), []],
    ['not json', []],
    [edit(repo, join(repo, 'src/a.txt')), ['--no-such-flag']],
    [edit(repo, join(repo, 'src/a.txt')), ['--agents', join(repo, 'missing.json')]],
  ] as [string, string[]][]) {
    const result = await runCli(['agent-state', 'edit-hook', ...args], { input, env });
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.match(
      (JSON.parse(lines[0] ?? '') as { systemMessage: string }).systemMessage,
      /could not check this edit .* the edit is allowed/,
    );
  }
});
