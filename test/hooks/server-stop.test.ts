/**
 * `skill-workflow stop` (server-executed Stop loop) through the real CLI, a real native store and
 * the live container engine: a failing command step blocks with its exit status and output
 * tail, stopping again without an edit reopens the same run (no second container), a fix
 * passes with nothing on stdout; Codex answers validate against Codex's output schema; local
 * problems block with a typed failure; malformed stdin and bad command lines exit 1.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test, type TestContext } from 'node:test';
import { Ajv } from 'ajv';

import { commandAttemptId } from '../../src/workflows/command-attempts.js';
import { jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { containersOf, DOCKER_SOCKET, requireEngine } from '../support/collector.js';
import { noDockerOnPath } from '../support/runtime.js';

const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';
const RUNTIME = ['--docker', DOCKER, '--docker-socket', DOCKER_SOCKET];
const validCodexOutput = new Ajv({ strict: false, allowUnionTypes: true }).compile(
  JSON.parse(
    readFileSync(
      join(REPO_ROOT, 'docs', 'schemas', 'external', 'codex-hooks', 'stop.command.output.schema.json'),
      'utf8',
    ),
  ) as object,
);

before(async () => {
  await requireEngine();
});

interface Demo {
  readonly dataDir: string;
  readonly ws: string;
  readonly repository: string;
}

/** The scenario world whose target main requires one command step: `status.txt` must say ok. */
async function makeDemo(t: TestContext, withRequirement = true): Promise<Demo> {
  const s = await buildScenario(t, {
    argv: [
      '/bin/sh',
      '-c',
      'echo checking; cat /src/status.txt; ' +
        'grep -qx ok /src/status.txt || { echo "status.txt is not ok" >&2; exit 3; }',
    ],
    files: { 'status.txt': 'ok\n' },
    enrollStep: null,
    requirement: withRequirement,
  });
  return { dataDir: s.dataDir, ws: s.ws, repository: s.repository };
}

const claudePayload = (active?: boolean): string =>
  JSON.stringify({
    session_id: 'sess-1',
    transcript_path: '/tmp/t.jsonl',
    cwd: '/repo',
    hook_event_name: 'Stop',
    ...(active === undefined ? {} : { stop_hook_active: active }),
  });
const codexPayload = (active: boolean): string =>
  JSON.stringify({
    cwd: '/repo',
    hook_event_name: 'Stop',
    last_assistant_message: 'done',
    model: 'gpt-5',
    permission_mode: 'default',
    session_id: 'sess-2',
    stop_hook_active: active,
    transcript_path: null,
    turn_id: 't1',
  });

function stop(demo: Demo, input: string, extra: string[] = []): ReturnType<typeof runCli> {
  return runCli(
    ['--data-dir', demo.dataDir, 'skill-workflow', 'stop', 'c1', '--workspace', demo.ws, ...RUNTIME, ...extra],
    { input },
  );
}

function feedbackOf(stdout: string): {
  lines: string[];
  json: { failures: { task_id: string; code: string }[]; next_action: string; next: { operation: string } };
} {
  const answer = JSON.parse(stdout) as { decision: string; reason: string };
  assert.equal(answer.decision, 'block');
  const lines = answer.reason.split('\n');
  return { lines: lines.slice(0, -1), json: JSON.parse(lines.at(-1) ?? '') as ReturnType<typeof feedbackOf>['json'] };
}

test(
  'a failing command step blocks with its exit status and output tail; the same version reruns ' +
    'nothing; a fix passes',
  async (t) => {
    const demo = await makeDemo(t);
    writeFileSync(join(demo.ws, 'status.txt'), 'broken\n');
    const first = await stop(demo, claudePayload());
    assert.equal(first.code, 0, first.stderr);
    const { lines, json } = feedbackOf(first.stdout);
    assert.deepEqual(json.failures, [{ task_id: 'check', code: 'command_failed' }]);
    assert.deepEqual(json.next, { operation: 'checkpoint' });
    assert.match(json.next_action, /^Fix what the failing steps report/);
    const text = lines.join('\n');
    assert.match(text, /step "check" \(command, required\): failed/);
    assert.match(text, /exit status 3/);
    assert.match(text, /last stdout[^\n]*\n {4}checking\n {4}broken/);
    assert.match(text, /last stderr[^\n]*\n {4}status\.txt is not ok/);
    const changes = await runCli(['--data-dir', demo.dataDir, 'change', 'show', 'c1', '--json']);
    assert.equal(
      jsonOf<{ current_version: number }>(changes).current_version,
      2,
      'the workspace was checkpointed as version 2',
    );
    const runId = /run (stop-[0-9a-f]{40}) /.exec(text)?.[1];
    assert.ok(runId !== undefined, text);
    const attempt = commandAttemptId(demo.repository, runId, 'check', 1n);

    // Stopping again without an edit: the same version, the same run, no second container.
    const again = await stop(demo, codexPayload(true), ['--client', 'codex']);
    assert.equal(again.code, 0, again.stderr);
    assert.ok(validCodexOutput(JSON.parse(again.stdout)), JSON.stringify(validCodexOutput.errors));
    assert.deepEqual(feedbackOf(again.stdout).json.failures, [{ task_id: 'check', code: 'command_failed' }]);
    assert.equal(
      jsonOf<{ current_version: number }>(await runCli(['--data-dir', demo.dataDir, 'change', 'show', 'c1', '--json']))
        .current_version,
      2,
    );
    const runs = jsonOf<{ runs: { run_id: string; state: string }[] }>(
      await runCli(['--data-dir', demo.dataDir, 'skill-workflow', 'list', '--json']),
    ).runs;
    assert.deepEqual(
      runs.map((r) => [r.run_id, r.state]),
      [[runId, 'failed']],
      'one run, executed once',
    );
    const shown = await runCli(['--data-dir', demo.dataDir, 'check-command-show', attempt, '--json']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal((await containersOf(attempt)).length, 0, 'its container was removed');

    writeFileSync(join(demo.ws, 'status.txt'), 'ok\n');
    const fixed = await stop(demo, claudePayload(true));
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.equal(fixed.stdout, '', 'a pass prints nothing for Claude Code');
    const after = jsonOf<{ runs: { run_id: string; state: string }[] }>(
      await runCli(['--data-dir', demo.dataDir, 'skill-workflow', 'list', '--json']),
    ).runs;
    assert.deepEqual(
      after.map((r) => r.state),
      ['failed', 'completed'],
      'the fixed version ran and completed',
    );
    assert.equal(
      jsonOf<{ current_version: number }>(await runCli(['--data-dir', demo.dataDir, 'change', 'show', 'c1', '--json']))
        .current_version,
      3,
    );
    assert.deepEqual(
      readdirSync(join(demo.dataDir, 'agent-stop')).filter((f) => !f.endsWith('.tmp')).length,
      1,
      'only the Codex session still has a count',
    );
  },
);

test(
  'no installed requirement blocks with a typed failure; malformed stdin and a bad command line ' +
    'exit 1 without checkpointing',
  async (t) => {
    const demo = await makeDemo(t, false);
    writeFileSync(join(demo.ws, 'status.txt'), 'edited\n');
    const none = await stop(demo, claudePayload());
    assert.equal(none.code, 0, none.stderr);
    const { lines, json } = feedbackOf(none.stdout);
    assert.deepEqual(json.failures, [{ task_id: 'requirement', code: 'requirement_not_found' }]);
    assert.match(lines[0] ?? '', /the requirement failed: error\[REQUIREMENT_NOT_FOUND\]/);

    writeFileSync(join(demo.ws, 'status.txt'), 'edited again\n');
    const malformed = await stop(demo, '{"session_id":');
    assert.equal(malformed.code, 1);
    assert.equal(malformed.stdout, '');
    assert.match(malformed.stderr, /^error\[HOOK_PAYLOAD_INVALID\]/);
    const badFlag = await runCli(
      ['--data-dir', demo.dataDir, 'skill-workflow', 'stop', 'c1', '--workspace', demo.ws, '--client', 'cursor'],
      { input: claudePayload() },
    );
    assert.equal(badFlag.code, 1, 'a usage error must not be exit 2, which Claude Code treats as a block');
    assert.match(badFlag.stderr, /^error\[USAGE\]/);
    const show = await runCli(['--data-dir', demo.dataDir, 'change', 'show', 'c1', '--json']);
    assert.equal(jsonOf<{ current_version: number }>(show).current_version, 2, 'only the first stop checkpointed');
  },
);

test('a requirement with a command step, no --docker and no docker on PATH blocks with the runtime failure, after checkpointing', async (t) => {
  const demo = await makeDemo(t);
  writeFileSync(join(demo.ws, 'status.txt'), 'edited\n');
  const result = await runCli(['--data-dir', demo.dataDir, 'skill-workflow', 'stop', 'c1', '--workspace', demo.ws], {
    input: claudePayload(),
    env: noDockerOnPath(join(demo.ws, '..')),
  });
  assert.equal(result.code, 0, result.stderr);
  const { lines, json } = feedbackOf(result.stdout);
  assert.deepEqual(json.failures, [{ task_id: 'run', code: 'workflow_command_runtime_not_configured' }]);
  assert.match(lines.join('\n'), /hint: /);
  assert.equal(
    jsonOf<{ current_version: number }>(await runCli(['--data-dir', demo.dataDir, 'change', 'show', 'c1', '--json']))
      .current_version,
    2,
  );
});

test(
  'a source-only requirement runs without an engine: a wrong file blocks with the step result, the ' +
    'right bytes pass',
  async (t) => {
    const demo = await makeDemo(t, false);
    const cli = (args: string[]): ReturnType<typeof runCli> => runCli(['--data-dir', demo.dataDir, ...args]);
    const cp = jsonOf<{ revision: string }>(
      await cli(['checkpoint', '--change', 'c1', '--workspace', demo.ws, '--json']),
    );
    const workflow = join(demo.dataDir, '..', 'source.json');
    const okDigest = createHash('sha256').update('ok\n').digest('hex');
    writeFileSync(
      workflow,
      JSON.stringify({
        version: 1,
        name: 'source',
        source: { repository: demo.repository, revision: cp.revision, policy_epoch: 0 },
        skill: { entrypoint: 'skills/check/SKILL.md', resources: [] },
        steps: [
          {
            id: 'status-ok',
            needs: [],
            required: true,
            action: { kind: 'source_paths', expectations: [{ path: 'status.txt', sha256: okDigest }] },
          },
        ],
      }),
    );
    const install = await cli(['requirement', 'install', '--target', 'main', workflow]);
    assert.equal(install.code, 0, install.stderr);
    writeFileSync(join(demo.ws, 'status.txt'), 'broken\n');
    const blocked = await runCli(['--data-dir', demo.dataDir, 'skill-workflow', 'stop', 'c1', '--workspace', demo.ws], {
      input: claudePayload(),
    });
    assert.equal(blocked.code, 0, blocked.stderr);
    const { lines, json } = feedbackOf(blocked.stdout);
    assert.deepEqual(json.failures, [{ task_id: 'status-ok', code: 'step_failed' }]);
    assert.match(lines.join('\n'), /step "status-ok" \(source_paths, required\): failed\n {2}result: .*status\.txt/);
    writeFileSync(join(demo.ws, 'status.txt'), 'ok\n');
    const passed = await runCli(['--data-dir', demo.dataDir, 'skill-workflow', 'stop', 'c1', '--workspace', demo.ws], {
      input: claudePayload(true),
    });
    assert.deepEqual([passed.code, passed.stdout], [0, ''], passed.stderr);
  },
);
