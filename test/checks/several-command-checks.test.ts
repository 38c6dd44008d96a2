/**
 * Several command checks in one workspace (docs/checks.md "Several command checks"), through the
 * real CLI, store, workspace and Docker Engine: two `check add`, a collector for each step, and
 * each Change version with a context per recipe. Each step is claimed and collected on its own;
 * the Change qualifies, is approved and lands only when both passed, and a version on which one
 * of them fails is refused while the other still passes.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_EXE, DOCKER_SOCKET, IMAGE } from '../support/runtime.js';

const RUNTIME = ['--docker', DOCKER_EXE, '--docker-socket', DOCKER_SOCKET];

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}`);
  return result;
}

interface CheckpointAnswer {
  readonly contexts: { readonly context_digest: string; readonly recipe_path: string; readonly steps: string[] }[];
}
interface Qualification {
  readonly qualified: boolean;
  readonly tasks: { readonly step_id: string; readonly state: string }[];
}

test('two command checks: each step is claimed and collected on its own, both gate the landing', async (t) => {
  const root = tempDir(t, 'agentscm-two-checks-');
  const ws = join(root, 'ws');
  const dataDir = join(root, 'data');
  const stateDir = join(root, 'collector');
  const tokenFile = join(root, 'tokens', 'agent.token');
  mkdirSync(join(ws, 'test'), { recursive: true });
  writeFileSync(join(ws, 'greeting.txt'), 'hello\n');
  writeFileSync(join(ws, 'test', 'greet.sh'), 'grep -q hello /src/greeting.txt\n');
  writeFileSync(join(ws, 'test', 'lint.sh'), 'test ! -e /src/forbidden.txt\n');
  const cli = (args: readonly string[]): Promise<CliResult> => runCli(['--data-dir', dataDir, ...args], { cwd: ws });

  ok(await cli(['init-repo', ws, '--name', 'two-checks']), 'init-repo');
  for (const [name, script] of [
    ['greet', 'test/greet.sh'],
    ['lint', 'test/lint.sh'],
  ] as const) {
    ok(
      await cli([
        'check',
        'add',
        name,
        '--image',
        IMAGE,
        '--docker-socket',
        DOCKER_SOCKET,
        '--memory',
        '64m',
        '--',
        'sh',
        script,
      ]),
      `check add ${name}`,
    );
    ok(await cli(['agent-task', 'collector', 'add', '--step', name, '--state-dir', stateDir, ...RUNTIME]), name);
  }
  const listed = jsonOf<{ in_sync: boolean; checks: { name: string }[] }>(
    ok(await cli(['check', 'list', '--json']), 'check list'),
  );
  assert.equal(listed.in_sync, true);
  assert.deepEqual(
    listed.checks.map((c) => c.name),
    ['greet', 'lint'],
  );
  ok(await cli(['grant', 'create', '--actor', 'me/agent-1', '--token-file', tokenFile]), 'grant create');

  const checkpoint = async (change: string): Promise<CheckpointAnswer> =>
    jsonOf<CheckpointAnswer>(ok(await cli(['checkpoint', '--change', change, '--json']), 'checkpoint'));
  const collect = async (change: string, step: string): Promise<string> => {
    const descriptor = join(root, `${change}.${step}.json`);
    ok(
      await cli([
        'agent-task',
        'claim',
        '--change',
        change,
        '--step',
        step,
        '--token-file',
        tokenFile,
        '--out',
        descriptor,
      ]),
      `claim ${step}`,
    );
    const collected = await cli([
      'agent-task',
      'collect',
      '--descriptor',
      descriptor,
      '--key',
      join(stateDir, 'signing-key.json'),
      '--state-dir',
      stateDir,
      '--token-file',
      tokenFile,
      ...RUNTIME,
      '--json',
    ]);
    return jsonOf<{ outcome: string }>(collected).outcome;
  };
  const qualification = async (change: string): Promise<Qualification> =>
    jsonOf<Qualification>(await cli(['qualification', '--change', change, '--json']));
  const states = (q: Qualification): Record<string, string> =>
    Object.fromEntries(q.tasks.map((task) => [task.step_id, task.state]));

  // fix-1: a context per recipe, in the order of the steps.
  appendFileSync(join(ws, 'greeting.txt'), 'hello again\n');
  const made = await checkpoint('fix-1');
  assert.deepEqual(
    made.contexts.map((c) => c.steps),
    [['greet'], ['lint']],
  );
  const [greetContext, lintContext] = made.contexts.map((c) => c.context_digest);
  assert.ok(greetContext !== undefined && lintContext !== undefined && greetContext !== lintContext);
  // The subject context is the first command step's; naming the other one is refused.
  const other = await cli(['qualification', '--change', 'fix-1', '--context', lintContext, '--json']);
  assert.equal(other.code, 2, other.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(other).error.code, 'CONTEXT_MISMATCH');
  // A native run's plan compiles with both command steps, under the subject context.
  const plan = jsonOf<{ subject: { context_digest: string }; steps: { id: string; kind: string }[] }>(
    ok(await cli(['skill-workflow', 'plan', '--change', 'fix-1', '--json']), 'skill-workflow plan'),
  );
  assert.equal(plan.subject.context_digest, greetContext);
  assert.deepEqual(
    plan.steps.map((step) => [step.id, step.kind]),
    [
      ['greet', 'command'],
      ['lint', 'command'],
    ],
  );

  // One step collected is not enough: the other is still pending, and nothing can land.
  assert.equal(await collect('fix-1', 'greet'), 'passed');
  const half = await qualification('fix-1');
  assert.equal(half.qualified, false);
  assert.deepEqual(states(half), { greet: 'succeeded', lint: 'pending' });
  const early = await cli(['approve', '--change', 'fix-1']);
  assert.notEqual(early.code, 0, 'approve with one of two command steps collected');

  assert.equal(await collect('fix-1', 'lint'), 'passed');
  const both = await qualification('fix-1');
  assert.equal(both.qualified, true);
  assert.deepEqual(states(both), { greet: 'succeeded', lint: 'succeeded' });
  ok(await cli(['approve', '--change', 'fix-1']), 'approve');
  ok(await cli(['land', '--change', 'fix-1', '--target', 'main']), 'land');
  const receipt = join(root, 'fix-1.agscmrb');
  ok(await cli(['receipt', 'export', '--change', 'fix-1', '--out', receipt]), 'receipt export');
  const verified = jsonOf<{ verified: boolean }>(
    ok(
      await runCli(['receipt', 'verify', receipt, '--public-key-file', join(stateDir, 'signing-key.json'), '--json'], {
        cwd: root,
      }),
      'receipt verify',
    ),
  );
  assert.equal(verified.verified, true);

  // fix-2 breaks the lint check only: greet still passes, lint fails, the Change is refused.
  writeFileSync(join(ws, 'forbidden.txt'), 'x\n');
  await checkpoint('fix-2');
  assert.equal(await collect('fix-2', 'greet'), 'passed');
  assert.equal(await collect('fix-2', 'lint'), 'failed');
  const refused = await qualification('fix-2');
  assert.equal(refused.qualified, false);
  assert.deepEqual(states(refused), { greet: 'succeeded', lint: 'failed' });
  const approve = await cli(['approve', '--change', 'fix-2']);
  assert.notEqual(approve.code, 0, 'approve of a Change whose lint check failed');
  const land = await cli(['land', '--change', 'fix-2', '--target', 'main']);
  assert.notEqual(land.code, 0, 'land of a Change whose lint check failed');
  rmSync(join(ws, 'forbidden.txt'));
});
