/**
 * Review steps in skill-workflow runs (docs/review.md "Review steps in runs"): real CLI processes
 * (bin/dev.js) over a real native store, the review journal on disk and the stand-in Claude Code
 * executable (test/review/fixtures/claude); no model is called.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import type { JsonValue } from '../../src/contracts/json/json-value.js';
import { JOURNAL_MIGRATIONS } from '../../src/tasks/store.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import {
  fixtureEnv,
  POLICY_PATH,
  reviewArgs,
  reviewRunStore,
  reviewStepAction,
  reviewWorkflow,
} from '../support/review-run.js';
import { answerJson, BUDGETS, installFixture, type InstalledFixture } from '../support/review.js';
import { definition, sourcePaths, writeDefinition } from '../support/workflows.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/** Three passing answers: coverage src/a.ts, src/b.ts, src/c.ts packs into three calls. */
const PASSING: JsonValue[] = [0, 1, 2].map(() => ({ mode: 'answer', response: answerJson() }));

test('a workflow with a source_paths step and a review step runs end to end; the step result names the record digest and outcome', async (t) => {
  const dir = tempDir(t);
  const store = reviewRunStore(join(dir, 'data'));
  const fixture = installFixture(t, PASSING);
  const file = reviewWorkflow(store, dir);
  const stateDir = join(tempDir(t), 'state');
  const run = await runCli(
    [
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'run',
      'review-1',
      file,
      '--json',
      ...reviewArgs(fixture, stateDir),
    ],
    { env: fixtureEnv(fixture) },
  );
  assert.equal(run.code, 0, run.stderr);
  const report = jsonOf<Loose>(run);
  assert.equal(report.state, 'completed');
  assert.deepEqual(
    report.steps.map((s: Loose): string[] => [String(s.id), String(s.kind), String(s.state)]),
    [
      ['sources', 'source_paths', 'succeeded'],
      ['review', 'review', 'succeeded'],
    ],
  );
  const result = report.steps[1].result;
  assert.equal(result.outcome, 'passed');
  assert.deepEqual(result.reasons, []);
  assert.equal(result.calls, 3);
  assert.match(result.record_digest, /^[0-9a-f]{64}$/);
  assert.match(result.review_id, /^[0-9a-f]{64}$/);
  assert.deepEqual(
    fixture.calls().map((c) => c.call_index),
    [0, 1, 2],
  );
  // Only the named variables reach the executable, and the journal lives in the state directory.
  assert.deepEqual(
    fixture.calls()[0]?.env.filter((name) => !name.startsWith('__')),
    ['FIXTURE_LOG', 'FIXTURE_PLAN', 'PATH'],
  );
  assert.ok(existsSync(join(stateDir, 'review', 'journal.sqlite')));

  // Reopening the completed run calls nothing again.
  const again = await runCli(
    [
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'run',
      'review-1',
      file,
      '--json',
      ...reviewArgs(fixture, stateDir),
    ],
    { env: fixtureEnv(fixture) },
  );
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(jsonOf<Loose>(again).steps[1].result, result);
  assert.equal(fixture.calls().length, 3);
});

test('a review that does not pass fails its step with the reasons and findings; the run fails', async (t) => {
  const dir = tempDir(t);
  const store = reviewRunStore(join(dir, 'data'));
  const finding = {
    criterion: 'correctness',
    path: 'src/a.ts',
    line: 1,
    severity: 'blocking',
    message: 'a is never used\u001b[31m',
  };
  const fixture = installFixture(t, [
    { mode: 'answer', response: answerJson(['correctness'], [finding]) },
    { mode: 'answer', response: answerJson() },
    { mode: 'answer', response: answerJson() },
  ]);
  const file = reviewWorkflow(store, dir);
  const run = await runCli(
    [
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'run',
      'review-2',
      file,
      '--json',
      ...reviewArgs(fixture, join(tempDir(t), 'state')),
    ],
    { env: fixtureEnv(fixture) },
  );
  assert.equal(run.code, 1, run.stderr);
  const report = jsonOf<Loose>(run);
  assert.equal(report.state, 'failed');
  const step = report.steps[1];
  assert.equal(step.state, 'failed');
  assert.equal(step.result.outcome, 'failed');
  assert.deepEqual(step.result.reasons, ['criterion_failed']);
  assert.deepEqual(step.result.findings, [
    { criterion: 'correctness', path: 'src/a.ts', line: 1, severity: 'blocking', message: 'a is never used\u001b[31m' },
  ]);
  assert.equal(step.result.findings_total, 1);
});

test('a budget that cannot hold the review fails the step (budget_exhausted), never shortened', async (t) => {
  const dir = tempDir(t);
  const store = reviewRunStore(join(dir, 'data'));
  const fixture = installFixture(t, PASSING);
  const file = writeDefinition(
    dir,
    'wf.json',
    definition(store, [{ id: 'review', action: { ...reviewStepAction(), budgets: { ...BUDGETS, model_calls: 2 } } }], {
      resources: [POLICY_PATH],
    }),
  );
  const run = await runCli(
    [
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'run',
      'review-3',
      file,
      '--json',
      ...reviewArgs(fixture, join(tempDir(t), 'state')),
    ],
    { env: fixtureEnv(fixture) },
  );
  assert.equal(run.code, 1, run.stderr);
  const step = jsonOf<Loose>(run).steps[0];
  assert.equal(step.state, 'failed');
  assert.equal(step.result.outcome, 'incomplete');
  assert.deepEqual(step.result.reasons, ['coverage_incomplete', 'budget_exhausted']);
  assert.equal(fixture.calls().length, 2);
});

test('without the review flags a new run with a review step is refused before anything is created', async (t) => {
  const dir = tempDir(t);
  const store = reviewRunStore(join(dir, 'data'));
  const file = reviewWorkflow(store, dir);
  const run = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'run', 'review-4', file, '--json']);
  assert.equal(run.code, 4, run.stderr);
  const error = jsonOf<Loose>(run).error;
  assert.equal(error.code, 'REVIEW_RUNTIME_NOT_CONFIGURED');
  assert.equal(error.details.step, 'review');
  assert.equal(existsSync(journalPaths(store.dataDir).db), false);

  const partial = await runCli([
    '--data-dir',
    store.dataDir,
    'skill-workflow',
    'run',
    'review-4',
    file,
    '--json',
    '--review-model',
    'm',
  ]);
  assert.equal(partial.code, 2, partial.stderr);
  assert.equal(jsonOf<Loose>(partial).error.code, 'USAGE');
});

test('a policy that is not a declared skill resource is refused at compilation (REVIEW_STEP_INVALID)', async (t) => {
  const dir = tempDir(t);
  const store = reviewRunStore(join(dir, 'data'));
  const file = writeDefinition(dir, 'wf.json', definition(store, [{ id: 'review', action: reviewStepAction() }]));
  const plan = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'plan', file, '--json']);
  assert.equal(plan.code, 2, plan.stderr);
  assert.equal(jsonOf<Loose>(plan).error.code, 'REVIEW_STEP_INVALID');
});

test('a review state directory inside the data directory is refused and nothing is called', async (t) => {
  const dir = tempDir(t);
  const store = reviewRunStore(join(dir, 'data'));
  const fixture = installFixture(t, PASSING);
  const file = reviewWorkflow(store, dir);
  const run = await runCli(
    [
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'run',
      'review-5',
      file,
      '--json',
      ...reviewArgs(fixture, join(store.dataDir, 'review-state')),
    ],
    { env: fixtureEnv(fixture) },
  );
  assert.equal(run.code, 2, run.stderr);
  assert.equal(jsonOf<Loose>(run).error.code, 'COLLECT_STATE_UNSAFE');
  assert.equal(fixture.calls().length, 0);
});

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function killStarted(t: TestContext, fixture: InstalledFixture): void {
  // The slow fixture call outlives its killed controller: end it by its own pid.
  t.after(() => {
    let started = '';
    try {
      started = readFileSync(`${fixture.log}.started`, 'utf8');
    } catch {
      return;
    }
    for (const line of started.split('\n')) {
      const pid = Number(line.split(' ')[1]);
      if (Number.isInteger(pid) && pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });
}

test('SIGKILL of skill-workflow run mid-review: resume reuses the answered call, never calls again, and the review is uncertain', async (t) => {
  const dir = tempDir(t);
  const store = reviewRunStore(join(dir, 'data'));
  const fixture = installFixture(t, [
    { mode: 'answer', response: answerJson() },
    { mode: 'slow', ms: 60_000, response: answerJson() },
    { mode: 'answer', response: answerJson() },
  ]);
  killStarted(t, fixture);
  const file = reviewWorkflow(store, dir);
  const stateDir = join(tempDir(t), 'state');
  const env: Record<string, string | undefined> = {
    ...process.env,
    AGENTSCM_DATA_DIR: undefined,
    ...fixtureEnv(fixture),
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const child = spawn(
    process.execPath,
    [
      ...cliEntryArgv(),
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'run',
      'review-kill',
      file,
      ...reviewArgs(fixture, stateDir),
    ],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await until(() => fixture.started() === 1, 60_000).catch((error: Error) =>
    assert.fail(`${error.message}: ${stderr}`),
  );
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
  assert.deepEqual(
    fixture.calls().map((c) => c.call_index),
    [0, 1],
  );

  const status = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'status', 'review-kill', '--json']);
  assert.equal(status.code, 0, status.stderr);
  assert.equal(jsonOf<Loose>(status).steps[1].state, 'running');

  const resumed = await runCli(
    [
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'resume',
      'review-kill',
      '--json',
      ...reviewArgs(fixture, stateDir),
    ],
    { env: fixtureEnv(fixture) },
  );
  assert.equal(resumed.code, 1, resumed.stderr);
  const report = jsonOf<Loose>(resumed);
  assert.equal(report.state, 'failed');
  const step = report.steps[1];
  assert.equal(step.state, 'failed');
  assert.equal(step.result.outcome, 'uncertain');
  assert.ok(step.result.reasons.includes('call_uncertain'), JSON.stringify(step.result.reasons));
  // Call 0 was answered before the kill and reused; call 1 was reserved and is never made again;
  // the uncertain call stops the review, so call 2 is never made.
  assert.deepEqual(
    fixture.calls().map((c) => c.call_index),
    [0, 1],
  );
});

test('a journal of schema step 6 is migrated to accept review steps, every retained run and step kept', async (t) => {
  const dir = tempDir(t);
  const store = reviewRunStore(join(dir, 'data'));
  // A source-only run recorded by the previous schema.
  const file = writeDefinition(
    dir,
    'old.json',
    definition(store, [{ id: 'sources', action: sourcePaths(store, ['src/a.ts']) }]),
  );
  const paths = journalPaths(store.dataDir);
  mkdirSync(dirname(paths.db), { recursive: true, mode: 0o700 });
  const old = new Database(paths.db);
  old.pragma('journal_mode = WAL');
  JOURNAL_MIGRATIONS.slice(0, 6).forEach((step) => step(old));
  old.pragma('user_version = 6');
  old.close();
  const first = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'run', 'old-run', file, '--json']);
  assert.equal(first.code, 0, first.stderr);
  const before = new Database(paths.db, { readonly: true });
  assert.equal(before.pragma('user_version', { simple: true }), JOURNAL_MIGRATIONS.length);
  const rows = before.prepare('SELECT * FROM workflow_steps ORDER BY run_id, position').all();
  before.close();
  assert.equal(rows.length, 1);

  // Migrated in place: the old run reopens unchanged and a review step can be recorded beside it.
  const fixture = installFixture(t, PASSING);
  const run = await runCli(
    [
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'run',
      'review-new',
      reviewWorkflow(store, dir),
      '--json',
      ...reviewArgs(fixture, join(tempDir(t), 'state')),
    ],
    { env: fixtureEnv(fixture) },
  );
  assert.equal(run.code, 0, run.stderr);
  const after = new Database(paths.db, { readonly: true });
  assert.deepEqual(
    after.prepare("SELECT * FROM workflow_steps WHERE run_id = 'old-run' ORDER BY position").all(),
    rows,
  );
  assert.deepEqual(
    after.prepare("SELECT kind FROM workflow_steps WHERE run_id = 'review-new' ORDER BY position").all(),
    [{ kind: 'source_paths' }, { kind: 'review' }],
  );
  after.close();
});
