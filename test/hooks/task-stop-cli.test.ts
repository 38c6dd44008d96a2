/**
 * `agentscm skill-workflow task-stop` and `task-codex-stop` as processes (docs/stop-hooks.md
 * "Agent-owned mode"): the payload on stdin, the decision on stdout with exit 0, and a bad
 * command line as one error line with exit 1 (non-blocking for both clients, never 2).
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { runCli } from '../helpers/cli.js';
import {
  CHANGE_ID,
  claudePayload,
  codexPayload,
  makeStopWorld,
  PROFILE,
  qualifyWorld,
  REPOSITORY_ID,
  type StopWorld,
} from '../support/task-stop.js';

function argv(world: StopWorld, command: string, overrides: Record<string, string> = {}): string[] {
  const flags: Record<string, string> = {
    endpoint: world.url,
    repository: REPOSITORY_ID,
    profile: PROFILE,
    'token-file': world.ev.tokenFile,
    workspace: world.workspace,
    ...overrides,
  };
  return [
    '--data-dir',
    world.dataDir,
    'skill-workflow',
    command,
    CHANGE_ID,
    ...Object.entries(flags).flatMap(([name, value]) => [`--${name}`, value]),
  ];
}

test('task-stop blocks an unqualified subject and passes it once qualified; task-codex-stop answers {} to pass', async (t) => {
  const world = await makeStopWorld(t);
  const blocked = await runCli(argv(world, 'task-stop'), { input: claudePayload() });
  assert.equal(blocked.code, 0, blocked.stderr);
  const answer = JSON.parse(blocked.stdout) as { decision: string; reason: string };
  assert.equal(answer.decision, 'block');
  assert.equal(
    (JSON.parse(answer.reason.split('\n').at(-1) ?? '') as { next: { operation: string } }).next.operation,
    'collector_claim',
  );

  qualifyWorld(world);
  const passed = await runCli(argv(world, 'task-stop'), { input: claudePayload() });
  assert.deepEqual([passed.code, passed.stdout, passed.stderr], [0, '', '']);
  const codex = await runCli(argv(world, 'task-codex-stop'), { input: codexPayload() });
  assert.deepEqual([codex.code, codex.stdout, codex.stderr], [0, '{}\n', '']);
});

test('a bad command line is one error line with exit 1: a relative token file, a non-http endpoint, a repository without owner, a missing flag', async (t) => {
  const world = await makeStopWorld(t);
  const cases: [string, string[], RegExp][] = [
    [
      'relative token file',
      argv(world, 'task-stop', { 'token-file': 'agent.token' }),
      /^error\[USAGE\]: --token-file must be an absolute path/,
    ],
    [
      'ftp endpoint',
      argv(world, 'task-codex-stop', { endpoint: 'ftp://127.0.0.1' }),
      /^error\[USAGE\]: --endpoint must be an http or https URL/,
    ],
    [
      'repository without owner',
      argv(world, 'task-stop', { repository: 'widgets' }),
      /^error\[USAGE\]: --repository "widgets" is not OWNER\/NAME/,
    ],
    [
      'missing --profile',
      argv(world, 'task-stop').filter((arg, i, all) => arg !== '--profile' && all[i - 1] !== '--profile'),
      /^error\[USAGE\]/,
    ],
  ];
  for (const [what, args, line] of cases) {
    const result = await runCli(args, { input: claudePayload() });
    assert.equal(result.code, 1, `${what}: ${result.stderr}`);
    assert.equal(result.stdout, '', what);
    assert.match(result.stderr, line, what);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, what);
  }
  assert.equal(world.log.length, 0, 'the hub was never asked');
});

test("--target names the target the hub profile pins: task-stop reads release's requirement and passes once qualified; without it main is read (issue #25 item 14)", async (t) => {
  const world = await makeStopWorld(t, { target: 'release' });
  qualifyWorld(world);
  const passed = await runCli(argv(world, 'task-stop', { target: 'release' }), { input: claudePayload() });
  assert.deepEqual([passed.code, passed.stdout, passed.stderr], [0, '', '']);
  const codex = await runCli(argv(world, 'task-codex-stop', { target: 'release' }), { input: codexPayload() });
  assert.deepEqual([codex.code, codex.stdout, codex.stderr], [0, '{}\n', '']);
  const defaulted = await runCli(argv(world, 'task-stop'), { input: claudePayload('s-main') });
  assert.equal(defaulted.code, 0, defaulted.stderr);
  assert.match((JSON.parse(defaulted.stdout) as { reason: string }).reason, /"code":"local_store_unavailable"/);
  const bad = await runCli(argv(world, 'task-stop', { target: 'rel ease' }), { input: claudePayload('s-bad') });
  assert.equal(bad.code, 1, bad.stderr);
  assert.match(bad.stderr, /^error\[ID_INVALID\]: --target/);
});
