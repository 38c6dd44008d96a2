/**
 * docs/keys-and-enrollment.md "Where the key lives": a collector state directory inside a
 * workspace is refused, and no scan records a signing key file, so no revision holds one.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

function assertCode(result: CliResult, code: string, exit: number): void {
  assert.equal(result.code, exit, result.stderr);
  assert.match(result.stderr, new RegExp(`^error\\[${code}\\]: `));
}

async function boundProject(root: string): Promise<{ dir: string; data: string }> {
  const dir = join(root, 'project');
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'src', 'main.ts'), 'export {};\n');
  const data = join(root, 'data');
  ok(await runCli(['--data-dir', data, 'init-repo', dir, '--name', 'demo']));
  return { dir, data };
}

test('agent-task key refuses a state directory inside a workspace and creates nothing', async (t) => {
  const root = tempDir(t);
  const { dir } = await boundProject(root);
  // The README's old example, run in the project, and a deeper path given as absolute.
  const relative = await runCli(['agent-task', 'key', '--state-dir', './collector-state', '--json'], { cwd: dir });
  assertCode(relative, 'KEY_STATE_DIR_IN_WORKSPACE', 2);
  assert.match(relative.stderr, /inside the agentscm workspace/);
  assert.equal(jsonOf<{ error: { code: string } }>(relative).error.code, 'KEY_STATE_DIR_IN_WORKSPACE');
  assertCode(
    await runCli(['agent-task', 'key', '--state-dir', join(dir, 'src', 'deep', 'keys')]),
    'KEY_STATE_DIR_IN_WORKSPACE',
    2,
  );
  assert.equal(existsSync(join(dir, 'collector-state')), false);
  assert.equal(existsSync(join(dir, 'src', 'deep')), false);
  // Outside the workspace the same command works.
  ok(await runCli(['agent-task', 'key', '--state-dir', join(root, 'keys')], { cwd: dir }));
  assert.ok(existsSync(join(root, 'keys', 'signing-key.json')));
});

test('a key file in the tree is never checkpointed: checkpoint refuses and records nothing; an ignored one is skipped', async (t) => {
  const root = tempDir(t);
  const { dir, data } = await boundProject(root);
  ok(await runCli(['agent-task', 'key', '--state-dir', join(root, 'keys')]));
  // A state directory that predates nothing: the key copied into the project.
  mkdirSync(join(dir, 'collector-state'), { mode: 0o700 });
  cpSync(join(root, 'keys', 'signing-key.json'), join(dir, 'collector-state', 'signing-key.json'));
  writeFileSync(join(dir, 'collector-state', '.signing-key.json.123.abcd.tmp'), 'x');
  const refused = await runCli(['--data-dir', data, 'checkpoint', '--change', 'fix-1', '--workspace', dir]);
  assertCode(refused, 'WORKSPACE_SCAN_INCOMPLETE', 1);
  assert.match(
    refused.stderr,
    /2 paths cannot be recorded: collector-state\/\.signing-key\.json\.123\.abcd\.tmp is a collector signing key file/,
  );
  assert.match(refused.stderr, /collector-state\/signing-key\.json is a collector signing key file/);
  assertCode(await runCli(['--data-dir', data, 'change', 'show', 'fix-1']), 'CHANGE_NOT_FOUND', 2);
  // status says the same, without writing.
  const status = jsonOf<{ complete: boolean; incomplete_reason: string }>(
    await runCli(['status', '--workspace', dir, '--json']),
  );
  assert.equal(status.complete, false);
  assert.match(status.incomplete_reason, /signing-key\.json is a collector signing key file/);
  // Ignored by .gitignore, it is not scanned at all.
  writeFileSync(join(dir, '.gitignore'), 'collector-state/\n');
  const done = jsonOf<{ revision: string }>(
    ok(await runCli(['--data-dir', data, 'checkpoint', '--change', 'fix-1', '--workspace', dir, '--json'])),
  );
  const shown = jsonOf<{ entries: { path: string }[] }>(
    ok(await runCli(['--data-dir', data, 'revision', 'show', done.revision, '--json'])),
  );
  const paths = shown.entries.map((e) => e.path);
  assert.ok(paths.includes('.gitignore') && paths.includes('src/main.ts'), paths.join(' '));
  assert.deepEqual(
    paths.filter((p) => p.startsWith('collector-state')),
    [],
  );
});

test('init-repo around an existing state directory refuses and leaves nothing behind', async (t) => {
  const root = tempDir(t);
  const dir = join(root, 'project');
  mkdirSync(dir);
  writeFileSync(join(dir, 'a.txt'), 'a');
  // No workspace yet, so the key is written; the workspace made around it must not record it.
  ok(await runCli(['agent-task', 'key', '--state-dir', join(dir, 'collector-state')]));
  const data = join(root, 'data');
  const refused = await runCli(['--data-dir', data, 'init-repo', dir, '--name', 'demo']);
  assertCode(refused, 'WORKSPACE_SCAN_INCOMPLETE', 1);
  assert.match(refused.stderr, /collector-state\/signing-key\.json is a collector signing key file/);
  assert.equal(existsSync(join(dir, '.agentscm')), false);
  assert.equal(existsSync(data), false);
});
