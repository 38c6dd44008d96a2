/**
 * docs/skill-workflows.md "Command step output": a command step that fails in the real engine
 * prints the check-command-show command for its attempt, with the data directory the run used;
 * check-command-show finds the journal as every command finds its store (inside the workspace
 * with no --data-dir too) and states the outcome once.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_SOCKET, recipeBytes, requireEngine } from '../support/collector.js';

const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';

before(async () => {
  await requireEngine();
});

test('a failed container step points at its output, and check-command-show says the outcome once', async (t) => {
  const root = tempDir(t, 'agentscm-first-hour-');
  const ws = join(root, 'ws');
  const data = join(root, 'data');
  mkdirSync(join(ws, 'skills', 'check'), { recursive: true });
  writeFileSync(join(ws, 'hello.txt'), 'hello\n');
  writeFileSync(
    join(ws, 'skills', 'check', 'SKILL.md'),
    '---\nname: check\ndescription: run the checks\n---\nRun the recipe.\n',
  );
  writeFileSync(
    join(ws, 'skills', 'check', 'runner.json'),
    recipeBytes({ argv: ['/bin/sh', '-c', 'echo to-stdout; echo to-stderr >&2; exit 3'] }),
  );
  const cli = (args: string[], cwd?: string): ReturnType<typeof runCli> =>
    runCli(['--data-dir', data, ...args], cwd === undefined ? {} : { cwd });
  assert.equal((await cli(['init-repo', ws, '--name', 'demo'])).code, 0);
  const cp = jsonOf<{ repository: string; revision: string; version: number }>(
    await cli(['checkpoint', '--change', 'c1', '--workspace', ws, '--json']),
  );
  const context = jsonOf<{ context_digest: string }>(
    await cli(['context', 'create', '--change', 'c1', '--runner', 'skills/check/runner.json', '--json']),
  );
  const workflow = join(root, 'workflow.json');
  writeFileSync(
    workflow,
    JSON.stringify({
      version: 1,
      name: 'checks',
      source: { repository: cp.repository, revision: cp.revision, policy_epoch: 0 },
      skill: { entrypoint: 'skills/check/SKILL.md', resources: ['skills/check/runner.json'] },
      steps: [
        {
          id: 'check',
          needs: [],
          required: true,
          action: {
            kind: 'command',
            runner: 'runner.json',
            change: { repository: cp.repository, id: 'c1' },
            change_version: cp.version,
            context_digest: context.context_digest,
          },
        },
      ],
    }),
  );
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
