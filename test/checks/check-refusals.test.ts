/**
 * `check add` refusals and rollback through the real CLI: bad input (bounds at and past the
 * limit, a command that is not an argv, an unknown image, no workspace, unrelated edits) and a
 * failed install each leave the workspace's check files and the installed requirement unchanged.
 * Then one end to end: the check runs in a container for a later Change.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { parseCpus, parseDuration, parseMemory } from '../../src/workflows/checks/recipe-flags.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_SOCKET, IMAGE, RUNTIME_FLAGS } from '../support/runtime.js';

const CHECKS = '.agentscm-checks';

test('flag values at each recipe bound are accepted; one past is CHECK_INVALID', () => {
  assert.equal(parseDuration('60m'), 3_600_000);
  assert.equal(parseDuration('1ms'), 1);
  assert.throws(() => parseDuration('3600001ms'), /CHECK_INVALID|outside/);
  assert.throws(() => parseDuration('0s'), /outside/);
  assert.equal(parseMemory('64g'), 64 * 1024 ** 3);
  assert.equal(parseMemory('8m'), 8 * 1024 ** 2);
  assert.throws(() => parseMemory(String(64 * 1024 ** 3 + 1)), /outside/);
  assert.throws(() => parseMemory(String(8 * 1024 ** 2 - 1)), /outside/);
  assert.equal(parseCpus('64'), 64_000);
  assert.equal(parseCpus('0.01'), 10);
  assert.throws(() => parseCpus('64.001'), /outside/);
  assert.throws(() => parseCpus('0.009'), /outside/);
});

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

test('refusals and a failed install change nothing; the check then runs for a later Change', async (t) => {
  const root = tempDir(t, 'agentscm-checks-');
  const ws = join(root, 'ws');
  mkdirSync(join(ws, 'test'), { recursive: true });
  writeFileSync(join(ws, 'test', 'greet.sh'), 'grep -q hello /src/greeting.txt\n');
  writeFileSync(join(ws, 'greeting.txt'), 'hello\n');
  const dataDir = join(root, 'data');
  ok(await runCli(['--data-dir', dataDir, 'init-repo', ws, '--name', 'demo', '--json']));
  const cli = (args: readonly string[], cwd = ws): Promise<CliResult> => runCli(args, { cwd });
  const state = async (): Promise<string> => {
    const dir = join(ws, CHECKS);
    const files = existsSync(dir) ? readdirSync(dir).map((n) => `${n}:${readFileSync(join(dir, n), 'utf8')}`) : [];
    const shown = await cli(['requirement', 'show', '--target', 'main', '--json']);
    return JSON.stringify([
      files,
      shown.code === 0 ? jsonOf<{ requirement_digest: string }>(shown).requirement_digest : '',
    ]);
  };
  const refused = async (args: readonly string[], code: string, cwd = ws): Promise<void> => {
    const before = await state();
    const result = await cli(args, cwd);
    assert.notEqual(result.code, 0, `${args.join(' ')} should fail`);
    assert.match(result.stderr, new RegExp(`^error\\[${code}\\]`), result.stderr);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.equal(await state(), before, `${args.join(' ')} changed something`);
  };
  const add = (name: string, ...rest: string[]): string[] => [
    'check',
    'add',
    name,
    '--image',
    IMAGE,
    '--docker-socket',
    DOCKER_SOCKET,
    '--memory',
    '64m',
    ...rest,
  ];
  const argv = ['--', 'sh', 'test/greet.sh'];

  await refused(add('x'.repeat(64), ...argv), 'CHECK_INVALID');
  await refused(add('Bad'), 'CHECK_INVALID');
  await refused(add('greet'), 'CHECK_INVALID'); // no command after --
  await refused(add('greet', '--', 'sh test/greet.sh'), 'CHECK_INVALID'); // a command line, not an argv
  await refused(add('greet', '--timeout', '61m', ...argv), 'CHECK_INVALID');
  await refused(['check', 'add', 'greet', '--image', IMAGE, '--memory', '7m', ...argv], 'CHECK_INVALID');
  await refused(add('greet', '--cpus', '64.001', ...argv), 'CHECK_INVALID');
  await refused(add('greet', '--network', 'bridge', ...argv), 'CHECK_INVALID');
  await refused(
    ['check', 'add', 'greet', '--image', 'local/nosuch:1', '--docker-socket', DOCKER_SOCKET, ...argv],
    'IMAGE_NOT_FOUND',
  );
  await refused(
    ['check', 'add', 'greet', '--image', IMAGE, '--docker-socket', join(root, 'no.sock'), ...argv],
    'RUNTIME_UNAVAILABLE',
  );
  await refused(add('greet', '--target', 'nosuch', ...argv), 'TARGET_NOT_FOUND');
  await refused(add('greet', ...argv), 'WORKSPACE_NOT_FOUND', root);
  writeFileSync(join(ws, 'unrelated.txt'), 'edit\n');
  await refused(add('greet', ...argv), 'CHECKS_WORKSPACE_DIRTY');
  ok(await cli(['checkpoint', '--change', 'other']));
  // The install fails after the checkpoint (the workdir is not a directory of the revision): every file is put back.
  await refused(
    add('greet', '--workdir', 'nosuch', ...argv),
    'RECIPE_WORKDIR_MISSING|CONTEXT_[A-Z_]+|WORKFLOW_[A-Z_]+',
  );
  assert.equal(existsSync(join(ws, CHECKS, 'greet.runner.json')), false);

  // At the name bound (63) it is accepted.
  const name = 'g'.repeat(63);
  ok(await cli(add(name, '--json', ...argv)));
  const definition = JSON.parse(readFileSync(join(ws, CHECKS, 'workflow.json'), 'utf8')) as {
    source: { repository: string; revision: string; policy_epoch: number };
    steps: { action: Record<string, unknown> }[];
  };

  // A later Change carries the package; the requirement, bound to it, runs in a container.
  writeFileSync(join(ws, 'greeting.txt'), 'hello, world\n');
  const cp = jsonOf<{ revision: string; version: number }>(ok(await cli(['checkpoint', '--change', 'c1', '--json'])));
  const context = jsonOf<{ context_digest: string }>(
    ok(await cli(['context', 'create', '--change', 'c1', '--runner', `${CHECKS}/${name}.runner.json`, '--json'])),
  );
  definition.source.revision = cp.revision;
  for (const step of definition.steps) {
    step.action.change = { repository: definition.source.repository, id: 'c1' };
    step.action.change_version = cp.version;
    step.action.context_digest = context.context_digest;
  }
  const bound = join(root, 'bound.json');
  writeFileSync(bound, JSON.stringify(definition));
  ok(await cli(['skill-workflow', 'run', 'r1', bound, ...RUNTIME_FLAGS]));
  const status = jsonOf<{ state: string }>(ok(await cli(['skill-workflow', 'status', 'r1', '--json'])));
  assert.equal(status.state, 'completed');
});
