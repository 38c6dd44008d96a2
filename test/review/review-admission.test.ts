/**
 * Review at landing (docs/admission.md "Review at landing"): a target whose requirement has a
 * command step (live container engine) and a review step (the stand-in Claude Code executable),
 * the server-executed Stop hook, and approve/land through real bin/dev.js processes. A subject is
 * admitted only while its review step has a passed review record.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import { encodeCanonicalText } from '../../src/contracts/json/canonical-json.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { buildScenario, commandStepAction, SCENARIO_REVIEW_POLICY } from '../helpers/scenario.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_SOCKET, requireEngine } from '../support/collector.js';
import { fixtureEnv, reviewArgs, reviewStepAction } from '../support/review-run.js';
import { answerJson, installFixture, POLICY, type InstalledFixture } from '../support/review.js';

const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';

before(async () => {
  await requireEngine();
});

interface Demo {
  readonly dataDir: string;
  readonly ws: string;
  readonly base: string;
  readonly stateDir: string;
  readonly fixture: InstalledFixture;
}

/** The scenario world with a second required step, a review of src/a.ts, beside the command step. */
async function makeDemo(t: TestContext): Promise<Demo> {
  const s = await buildScenario(t, {
    argv: ['/bin/sh', '-c', 'grep -qx ok /src/status.txt'],
    files: {
      'status.txt': 'ok\n',
      'src/a.ts': 'export const a = 1;\n',
      [SCENARIO_REVIEW_POLICY]: encodeCanonicalText(POLICY),
    },
    resources: [SCENARIO_REVIEW_POLICY],
    steps: (binding) => [
      { id: 'check', needs: [], required: true, action: commandStepAction(binding) },
      { id: 'review', needs: [], required: true, action: reviewStepAction(['src/a.ts']) },
    ],
    enrollStep: null,
  });
  const fixture = installFixture(t, [{ mode: 'answer', response: answerJson() }]);
  return { dataDir: s.dataDir, ws: s.ws, base: s.base, stateDir: join(tempDir(t), 'state'), fixture };
}

function cli(demo: Demo, args: readonly string[]): Promise<CliResult> {
  return runCli(['--data-dir', demo.dataDir, ...args]);
}

function mainOf(demo: Demo): Promise<string> {
  return cli(demo, ['target', 'list', '--json']).then(
    (r) =>
      (
        jsonOf<{ targets: { name: string; revision: string }[] }>(r).targets.find((x) => x.name === 'main') as {
          revision: string;
        }
      ).revision,
  );
}

/** Edit the workspace and let the server-executed Stop hook checkpoint it and run the requirement. */
async function stopWith(demo: Demo, answer: ReturnType<typeof answerJson>, edit: string): Promise<CliResult> {
  writeFileSync(join(demo.ws, 'notes.txt'), edit);
  writeFileSync(demo.fixture.plan, JSON.stringify([{ mode: 'answer', response: answer }]));
  const payload = JSON.stringify({
    session_id: 'sess-1',
    transcript_path: '/tmp/t.jsonl',
    cwd: '/repo',
    hook_event_name: 'Stop',
  });
  const stop = await runCli(
    [
      '--data-dir',
      demo.dataDir,
      'skill-workflow',
      'stop',
      'c1',
      '--workspace',
      demo.ws,
      '--docker',
      DOCKER,
      '--docker-socket',
      DOCKER_SOCKET,
      ...reviewArgs(demo.fixture, demo.stateDir),
    ],
    { input: payload, env: fixtureEnv(demo.fixture) },
  );
  assert.equal(stop.code, 0, stop.stderr);
  return stop;
}

function errorCode(result: CliResult): string {
  return jsonOf<{ error: { code: string } }>(result).error.code;
}

test(
  'landing needs a passed review: refused while the review is missing or failed, admitted once it ' +
    'passed; qualification shows the review task pending for a collector',
  async (t) => {
    const demo = await makeDemo(t);

    // No run at all: the review is missing.
    const missing = await cli(demo, ['approve', '--change', 'c1', '--json']);
    assert.equal(missing.code, 1, missing.stderr);
    assert.equal(errorCode(missing), 'ADMISSION_REVIEW_REQUIRED');

    // The command passes, the review fails: the Stop blocks and approval is refused.
    const failed = await stopWith(
      demo,
      answerJson(
        ['correctness'],
        [{ criterion: 'correctness', path: 'src/a.ts', line: 1, severity: 'blocking', message: 'wrong' }],
      ),
      'first\n',
    );
    assert.match(failed.stdout, /"decision":"block"/);
    const refused = await cli(demo, ['approve', '--change', 'c1', '--json']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(errorCode(refused), 'ADMISSION_REVIEW_REQUIRED');
    const land = await cli(demo, ['land', '--change', 'c1', '--target', 'main', '--json']);
    assert.equal(land.code, 1, land.stderr);
    assert.equal(errorCode(land), 'APPROVAL_NOT_FOUND');
    assert.equal(await mainOf(demo), demo.base);

    // The agent-owned answer names the review task as pending: a finite-review collector claims it.
    const qualification = await cli(demo, ['qualification', '--change', 'c1', '--json']);
    assert.equal(qualification.code, 1, qualification.stderr);
    const answer = jsonOf<{
      qualified: boolean;
      tasks: { step_id: string; state: string }[];
      failures: { code: string }[];
    }>(qualification);
    assert.equal(answer.qualified, false);
    assert.equal(answer.tasks.find((task) => task.step_id === 'review')?.state, 'pending');
    assert.ok(
      answer.failures.some((failure) => failure.code === 'task_pending'),
      JSON.stringify(answer.failures),
    );

    // A new version whose review passes is approved and lands.
    const passed = await stopWith(demo, answerJson(), 'second\n');
    assert.equal(passed.stdout, '', 'the Stop hook passed');
    const approved = await cli(demo, ['approve', '--change', 'c1', '--json']);
    assert.equal(approved.code, 0, approved.stderr);
    const approval = jsonOf<{ receipt_kind: string; receipt_digest: string; revision: string }>(approved);
    assert.equal(approval.receipt_kind, 'server_run');
    const landed = await cli(demo, ['land', '--change', 'c1', '--target', 'main', '--json']);
    assert.equal(landed.code, 0, landed.stderr);
    assert.equal(await mainOf(demo), approval.revision);
  },
);

test('an approved subject whose retained review result no longer has its digest is refused at landing', async (t) => {
  const demo = await makeDemo(t);
  const passed = await stopWith(demo, answerJson(), 'work\n');
  assert.equal(passed.stdout, '', 'the Stop hook passed');
  const approved = await cli(demo, ['approve', '--change', 'c1', '--json']);
  assert.equal(approved.code, 0, approved.stderr);
  const db = new Database(journalPaths(demo.dataDir).db);
  try {
    const row = db.prepare("SELECT result FROM workflow_steps WHERE kind = 'review' AND state = 'succeeded'").get() as {
      result: Buffer;
    };
    const forged = Buffer.from(row.result.toString('utf8').replace('"outcome":"passed"', '"outcome":"passed" '));
    db.prepare("UPDATE workflow_steps SET result = ? WHERE kind = 'review'").run(forged);
  } finally {
    db.close();
  }
  const land = await cli(demo, ['land', '--change', 'c1', '--target', 'main', '--json']);
  assert.equal(land.code, 1, land.stderr);
  assert.equal(errorCode(land), 'ADMISSION_REVIEW_REQUIRED');
  assert.equal(await mainOf(demo), demo.base);
});
