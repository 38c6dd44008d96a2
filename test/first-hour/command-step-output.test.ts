/**
 * docs/skill-workflows.md "Command step output": a command step that fails in the real engine
 * prints the check-command-show command for its attempt, with the data directory the run used;
 * check-command-show finds the journal as every command finds its store (inside the workspace
 * with no --data-dir too) and states the outcome once.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { before, test } from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { DOCKER_SOCKET, requireEngine } from '../support/collector.js';

const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';

before(async () => {
  await requireEngine();
});

test('a failed container step points at its output, and check-command-show says the outcome once', async (t) => {
  const s = await buildScenario(t, {
    argv: ['/bin/sh', '-c', 'echo to-stdout; echo to-stderr >&2; exit 3'],
    enrollStep: null,
    requirement: false,
  });
  const { root, ws, dataDir: data, workflowFile: workflow, cli } = s;
  const run = await cli([
    'skill-workflow',
    'run',
    'r1',
    workflow,
    '--docker',
    DOCKER,
    '--docker-socket',
    DOCKER_SOCKET,
  ]);
  assert.equal(run.code, 1, run.stderr);
  const pointer = /^ {7}its output: agentscm --data-dir (\S+) check-command-show (cmd-\S+)$/m.exec(run.stdout);
  assert.ok(pointer !== null, run.stdout);
  assert.equal(pointer[1], data);
  const attempt = pointer[2] ?? '';
  // status prints the same pointer.
  assert.ok(
    (await cli(['skill-workflow', 'status', 'r1'])).stdout.includes(
      `its output: agentscm --data-dir ${data} check-command-show ${attempt}`,
    ),
  );

  // The printed command, run as printed (from another directory).
  const shown = await runCli(['--data-dir', data, 'check-command-show', attempt], { cwd: root });
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^ {2}state failed; outcome failed, exit 3, cleanup confirmed$/m);
  assert.doesNotMatch(shown.stdout, /outcome failed; outcome failed/);
  assert.match(shown.stdout, /--- stdout\nto-stdout\n/);
  assert.match(shown.stdout, /--- stderr\nto-stderr\n/);
  // Inside the workspace, with no --data-dir, it finds the same journal.
  const inside = await runCli(['check-command-show', attempt, '--json'], { cwd: ws });
  assert.equal(inside.code, 0, inside.stderr);
  assert.equal(jsonOf<{ attempt_id: string; outcome: string }>(inside).outcome, 'failed');
});
