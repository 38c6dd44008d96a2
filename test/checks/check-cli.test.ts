/**
 * `agentscm check add | add-review | list | show | remove` through the real CLI, a real store,
 * a real workspace and the Docker Engine (image lookup, and one container run end to end).
 * Every refusal leaves the workspace's check files and the installed requirement as they were.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_SOCKET, IMAGE } from '../support/runtime.js';

const CHECKS = '.agentscm-checks';

interface World {
  readonly ws: string;
  readonly cli: (args: readonly string[]) => Promise<CliResult>;
}

async function world(t: Parameters<typeof tempDir>[0]): Promise<World> {
  const root = tempDir(t, 'agentscm-checks-');
  const ws = join(root, 'ws');
  mkdirSync(join(ws, 'test'), { recursive: true });
  writeFileSync(join(ws, 'test', 'greet.sh'), 'grep -q hello /src/greeting.txt\n');
  writeFileSync(join(ws, 'greeting.txt'), 'hello\n');
  const dataDir = join(root, 'data');
  const init = await runCli(['--data-dir', dataDir, 'init-repo', ws, '--name', 'demo', '--json']);
  assert.equal(init.code, 0, init.stderr);
  return { ws, cli: (args) => runCli(args, { cwd: ws }) };
}

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

/** Every check file and the target's requirement digest: what a refusal must not change. */
async function state(w: World): Promise<{ files: Record<string, string>; requirement: string }> {
  const files: Record<string, string> = {};
  const dir = join(w.ws, CHECKS);
  if (existsSync(dir)) for (const name of readdirSync(dir)) files[name] = readFileSync(join(dir, name), 'utf8');
  const shown = await w.cli(['requirement', 'show', '--target', 'main', '--json']);
  return {
    files,
    requirement: shown.code === 0 ? jsonOf<{ requirement_digest: string }>(shown).requirement_digest : '',
  };
}

async function refused(w: World, args: readonly string[], code: string): Promise<void> {
  const before = await state(w);
  const result = await w.cli(args);
  assert.notEqual(result.code, 0, `${args.join(' ')} should fail`);
  assert.match(result.stderr, new RegExp(`error\\[${code}\\]`), result.stderr);
  assert.equal(result.stderr.trim().split('\n').length, 1, 'one line');
  assert.deepEqual(await state(w), before, `${args.join(' ')} changed something`);
}

const ADD = ['check', 'add', 'greet', '--image', IMAGE, '--docker-socket', DOCKER_SOCKET, '--memory', '64m'];

test('check add writes the package, checkpoints it and installs the requirement; list, show, remove', async (t) => {
  const w = await world(t);
  const added = jsonOf<{
    requirement_digest: string;
    change: string;
    version: number;
    written: string[];
  }>(ok(await w.cli([...ADD, '--timeout', '60m', '--json', '--', 'sh', 'test/greet.sh'])));
  assert.match(added.requirement_digest, /^[0-9a-f]{64}$/);
  assert.equal(added.change, 'checks');
  assert.deepEqual(added.written.sort(), [
    `${CHECKS}/SKILL.md`,
    `${CHECKS}/greet.runner.json`,
    `${CHECKS}/workflow.json`,
  ]);
  const recipe = JSON.parse(readFileSync(join(w.ws, CHECKS, 'greet.runner.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(recipe.argv, ['sh', 'test/greet.sh']);
  assert.equal(recipe.timeout_ms, 3_600_000);
  assert.deepEqual(recipe.limits, {
    memory_bytes: 64 * 1024 * 1024,
    pids: 256,
    cpu_millis: 2000,
    output_bytes: 1024 * 1024,
    scratch_bytes: 64 * 1024 * 1024,
  });
  assert.equal(recipe.toolchain, IMAGE);
  assert.equal(recipe.environment, 'oci-offline');
  // workflow.json is written after the checkpoint and excluded: the workspace is clean.
  const status = jsonOf<{ clean: boolean; changes: unknown[] }>(ok(await w.cli(['status', '--json'])));
  assert.deepEqual(status.changes, []);
  assert.equal(status.clean, true);
  assert.match(readFileSync(join(w.ws, '.agentscm', 'exclude'), 'utf8'), /^\/\.agentscm-checks\/workflow\.json$/m);
  const installed = jsonOf<{ requirement_digest: string; steps: { id: string }[] }>(
    ok(await w.cli(['requirement', 'show', '--target', 'main', '--json'])),
  );
  assert.equal(installed.requirement_digest, added.requirement_digest);
  assert.deepEqual(
    installed.steps.map((s) => s.id),
    ['greet'],
  );
  const human = ok(await w.cli(['check', 'list']));
  assert.match(human.stdout, /greet\tcommand\t\.agentscm-checks\/greet\.runner\.json/);
  assert.match(human.stdout, /in sync/);

  // A second add gains a step (a review step; a second command check is refused, see below).
  const review = jsonOf<{ requirement_digest: string; checks: { name: string }[]; version: number }>(
    ok(
      await w.cli([
        'check',
        'add-review',
        'docs',
        '--coverage',
        'greeting.txt',
        '--criterion',
        'polite:the greeting is polite',
        '--json',
      ]),
    ),
  );
  assert.deepEqual(
    review.checks.map((c) => c.name),
    ['greet', 'docs'],
  );
  assert.equal(review.version, 2);
  assert.notEqual(review.requirement_digest, added.requirement_digest);
  const listing = jsonOf<{ in_sync: boolean; requirement_digest: string; checks: { name: string }[] }>(
    ok(await w.cli(['check', 'list', '--json'])),
  );
  assert.equal(listing.in_sync, true);
  assert.equal(listing.requirement_digest, review.requirement_digest);
  const shown = jsonOf<{ kind: string; installed: boolean; resource_json: { exposure: string[] } }>(
    ok(await w.cli(['check', 'show', 'docs', '--json'])),
  );
  assert.equal(shown.kind, 'review');
  assert.equal(shown.installed, true);
  assert.deepEqual(shown.resource_json.exposure, ['greeting.txt']);

  // Refusals change nothing.
  await refused(w, [...ADD, '--', 'sh', 'x'], 'CHECK_EXISTS');
  await refused(w, ['check', 'show', 'nosuch'], 'CHECK_NOT_FOUND');

  // remove: the step and its policy go, the rest is reinstalled; the last check stays.
  const removed = jsonOf<{ requirement_digest: string; removed: string[]; checks: { name: string }[] }>(
    ok(await w.cli(['check', 'remove', 'docs', '--json'])),
  );
  assert.deepEqual(removed.removed, [`${CHECKS}/docs.review-policy.json`]);
  assert.deepEqual(
    removed.checks.map((c) => c.name),
    ['greet'],
  );
  assert.equal(existsSync(join(w.ws, CHECKS, 'docs.review-policy.json')), false);
  assert.equal((await state(w)).requirement, removed.requirement_digest);
  await refused(w, ['check', 'remove', 'greet'], 'CHECK_LAST');

  // A hand-edited recipe: list says the workspace and the installed requirement disagree.
  writeFileSync(
    join(w.ws, CHECKS, 'workflow.json'),
    readFileSync(join(w.ws, CHECKS, 'workflow.json'), 'utf8').replace('"greet"', '"greet2"'),
  );
  const drift = jsonOf<{ in_sync: boolean; differences: string[] }>(ok(await w.cli(['check', 'list', '--json'])));
  assert.equal(drift.in_sync, false);
  assert.match(drift.differences.join('\n'), /not the definition installed for main/);
});
