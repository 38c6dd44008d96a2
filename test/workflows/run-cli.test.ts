/**
 * skill-workflow plan/run/status/resume/cancel as a user runs them: the real CLI process, a
 * real native store and journal in a temp directory, exit codes and --json documents.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { noDockerOnPath } from '../support/runtime.js';
import {
  bumpPolicy,
  commandAction,
  definition,
  makeCommandBinding,
  makeStore,
  RECIPE,
  RECIPE_PATH,
  SKILL_PATH,
  SKILL_TEXT,
  sourcePaths,
  writeDefinition,
  type Store,
} from '../support/workflows.js';

// Run reports and status views are plain JSON documents.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

interface Setup {
  readonly dir: string;
  readonly store: Store;
}

function setup(t: TestContext): Setup {
  const dir = tempDir(t);
  const store = makeStore(join(dir, 'data'), {
    [SKILL_PATH]: SKILL_TEXT,
    'a.txt': 'alpha',
    'b.txt': 'beta',
    'c.txt': 'gamma',
    [RECIPE_PATH]: JSON.stringify(RECIPE),
  });
  return { dir, store };
}

function cli(s: Setup, ...args: string[]): ReturnType<typeof runCli> {
  return runCli(['--data-dir', s.store.dataDir, ...args]);
}

/** `cli` with no docker on PATH, so that leaving out --docker leaves the run without a runtime. */
function cliNoDocker(s: Setup, ...args: string[]): ReturnType<typeof runCli> {
  return runCli(['--data-dir', s.store.dataDir, ...args], { env: noDockerOnPath(s.dir) });
}

interface StepJson {
  readonly id: string;
  readonly state: string;
  readonly result: Loose;
  readonly execution: Loose;
}

function stepOf(view: { readonly steps: readonly StepJson[] }, id: string): StepJson {
  const found = view.steps.find((step) => step.id === id);
  assert.ok(found !== undefined, `no step ${id}`);
  return found;
}

test('plan prints the identities and writes nothing; run completes; the same run ID and plan return the retained run; another plan conflicts', async (t) => {
  const s = setup(t);
  const file = writeDefinition(
    s.dir,
    'wf.json',
    definition(s.store, [
      { id: 'one', action: sourcePaths(s.store, ['a.txt']) },
      { id: 'two', needs: ['one'], action: sourcePaths(s.store, ['b.txt', 'c.txt']) },
    ]),
  );
  const plan = await cli(s, 'skill-workflow', 'plan', file, '--json');
  assert.equal(plan.code, 0, plan.stderr);
  const report = jsonOf<Loose>(plan);
  assert.match(report.plan_digest, /^[0-9a-f]{64}$/);
  assert.match(report.skill_digest, /^[0-9a-f]{64}$/);
  assert.deepEqual(
    report.steps.map((step: Loose) => String(step.id)),
    ['one', 'two'],
  );
  assert.equal(existsSync(join(s.store.dataDir, 'skill-workflows')), false, 'plan must not create the journal');

  const run = await cli(s, 'skill-workflow', 'run', 'run-1', file, '--json');
  assert.equal(run.code, 0, run.stderr);
  const first = jsonOf<Loose>(run);
  assert.equal(first.state, 'completed');
  assert.equal(first.executed, 2);
  assert.equal(first.plan_digest, report.plan_digest);
  assert.equal(first.admission, 'not_assessed');
  assert.equal(stepOf(first, 'two').result.observations.length, 2);
  assert.deepEqual(
    stepOf(first, 'two').result.observations.map((o: Loose) => String(o.outcome)),
    ['matched', 'matched'],
  );

  const again = await cli(s, 'skill-workflow', 'run', 'run-1', file, '--json');
  assert.equal(again.code, 0, again.stderr);
  const retained = jsonOf<Loose>(again);
  assert.equal(retained.executed, 0);
  assert.deepEqual(retained.steps, first.steps);

  const other = writeDefinition(
    s.dir,
    'other.json',
    definition(s.store, [{ id: 'one', action: sourcePaths(s.store, ['c.txt']) }]),
  );
  const conflict = await cli(s, 'skill-workflow', 'run', 'run-1', other, '--json');
  assert.equal(conflict.code, 3);
  assert.equal(jsonOf<Loose>(conflict).error.code, 'WORKFLOW_RUN_CONFLICT');
  assert.match(conflict.stderr, /^error\[WORKFLOW_RUN_CONFLICT\]/);

  const status = await cli(s, 'skill-workflow', 'status', 'run-1', '--json');
  assert.equal(status.code, 0);
  const view = jsonOf<Loose>(status);
  assert.equal(view.state, 'completed');
  assert.equal(view.admission, 'not_assessed');
  assert.equal(view.source_current, true);
  assert.equal(view.controller.active, false);
});

test('a mismatch or a missing path fails its step naming the path; a failed required step fails the run and its dependents do not run', async (t) => {
  const s = setup(t);
  const file = writeDefinition(
    s.dir,
    'wf.json',
    definition(s.store, [
      { id: 'check', action: sourcePaths(s.store, ['a.txt', 'missing.txt', 'b.txt'], { 'b.txt': 'f'.repeat(64) }) },
      { id: 'after', needs: ['check'], action: sourcePaths(s.store, ['c.txt']) },
      { id: 'independent', action: sourcePaths(s.store, ['c.txt']) },
    ]),
  );
  const run = await cli(s, 'skill-workflow', 'run', 'run-f', file, '--json');
  assert.equal(run.code, 1, run.stderr);
  const view = jsonOf<Loose>(run);
  assert.equal(view.state, 'failed');
  assert.match(view.state_reason, /required step "check" is failed/);
  const check = stepOf(view, 'check');
  assert.equal(check.state, 'failed');
  assert.match(check.result.reason, /path "missing\.txt" does not exist/);
  assert.deepEqual(
    check.result.observations.map((o: Loose) => [String(o.path), String(o.outcome)]),
    [
      ['a.txt', 'matched'],
      ['missing.txt', 'missing'],
      ['b.txt', 'mismatch'],
    ],
  );
  assert.equal(check.result.observations[2].actual_sha256, s.store.digests['b.txt']);
  assert.equal(stepOf(view, 'after').state, 'not_run');
  assert.equal(stepOf(view, 'after').result, null);
  assert.equal(view.executed, 1);
});

test('optional failures and unavailable capabilities: omissions, blocked runs', async (t) => {
  const s = setup(t);
  const omissions = writeDefinition(
    s.dir,
    'omit.json',
    definition(s.store, [
      { id: 'opt', required: false, action: sourcePaths(s.store, ['b.txt'], { 'b.txt': 'f'.repeat(64) }) },
      { id: 'after-opt', required: false, needs: ['opt'], action: sourcePaths(s.store, ['c.txt']) },
      { id: 'gpu', required: false, action: { kind: 'require_capability', capability: 'gpu' } },
      { id: 'main', action: sourcePaths(s.store, ['a.txt']) },
    ]),
  );
  const run = await cli(s, 'skill-workflow', 'run', 'run-o', omissions, '--json');
  assert.equal(run.code, 0, run.stderr);
  const view = jsonOf<Loose>(run);
  assert.equal(view.state, 'completed_with_omissions');
  assert.equal(stepOf(view, 'after-opt').state, 'skipped');
  assert.match(stepOf(view, 'after-opt').result.reason, /dependency "opt" is failed/);
  assert.equal(stepOf(view, 'gpu').state, 'unavailable');
  assert.equal(stepOf(view, 'gpu').result.available, false);
  assert.equal(stepOf(view, 'main').state, 'succeeded');

  const blocked = writeDefinition(
    s.dir,
    'blocked.json',
    definition(s.store, [
      { id: 'first', action: sourcePaths(s.store, ['a.txt']) },
      { id: 'net', action: { kind: 'require_capability', capability: 'network' } },
      { id: 'last', action: sourcePaths(s.store, ['b.txt']) },
    ]),
  );
  const result = await cli(s, 'skill-workflow', 'run', 'run-b', blocked, '--json');
  assert.equal(result.code, 1, result.stderr);
  const b = jsonOf<Loose>(result);
  assert.equal(b.state, 'blocked');
  assert.equal(stepOf(b, 'net').state, 'unavailable');
  assert.equal(stepOf(b, 'last').state, 'not_run');
});

test('step budgets: 1..32 accepted, 0 and 33 refused; a partial run exits 0 while running; a policy bump stops resume and keeps observations', async (t) => {
  const s = setup(t);
  const file = writeDefinition(
    s.dir,
    'wf.json',
    definition(s.store, [
      { id: 'one', action: sourcePaths(s.store, ['a.txt']) },
      { id: 'two', action: sourcePaths(s.store, ['b.txt']) },
      { id: 'three', action: sourcePaths(s.store, ['c.txt']) },
    ]),
  );
  for (const budget of ['0', '33']) {
    const refused = await cli(s, 'skill-workflow', 'run', 'run-p', file, '--max-steps', budget);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /^error\[USAGE\]/);
  }
  assert.equal(existsSync(join(s.store.dataDir, 'skill-workflows')), false, 'a refused budget records nothing');
  const partial = await cli(s, 'skill-workflow', 'run', 'run-p', file, '--max-steps', '1', '--json');
  assert.equal(partial.code, 0, partial.stderr);
  assert.equal(jsonOf<Loose>(partial).state, 'running');
  assert.equal(jsonOf<Loose>(partial).executed, 1);
  const resumed = await cli(s, 'skill-workflow', 'resume', 'run-p', '--max-steps', '1', '--json');
  assert.equal(resumed.code, 0, resumed.stderr);
  const middle = jsonOf<Loose>(resumed);
  assert.equal(middle.state, 'running');
  assert.deepEqual(
    middle.steps.map((step: Loose) => String(step.state)),
    ['succeeded', 'succeeded', 'pending'],
  );

  bumpPolicy(s.store.dataDir, s.store.repository);
  const stopped = await cli(s, 'skill-workflow', 'resume', 'run-p', '--max-steps', '32', '--json');
  assert.equal(stopped.code, 3, stopped.stderr);
  assert.equal(jsonOf<Loose>(stopped).error.code, 'WORKFLOW_BINDING_CHANGED');
  const status = jsonOf<Loose>(await cli(s, 'skill-workflow', 'status', 'run-p', '--json'));
  assert.deepEqual(status.steps.slice(0, 2), middle.steps.slice(0, 2));
  assert.equal(status.state, 'blocked', 'the run stopped with a state and a reason');
  assert.match(String(status.state_reason), /^binding changed: /);
  assert.equal(status.steps[2].state, 'not_run');
  assert.equal(status.source_current, false);
});

test('cancel is terminal and keeps observations; cancelling again is a no-op; a finished run cannot be cancelled', async (t) => {
  const s = setup(t);
  const file = writeDefinition(
    s.dir,
    'wf.json',
    definition(s.store, [
      { id: 'one', action: sourcePaths(s.store, ['a.txt']) },
      { id: 'two', action: sourcePaths(s.store, ['b.txt']) },
    ]),
  );
  assert.equal((await cli(s, 'skill-workflow', 'run', 'run-c', file, '--max-steps', '1')).code, 0);
  const cancel = await cli(s, 'skill-workflow', 'cancel', 'run-c', '--json');
  assert.equal(cancel.code, 0, cancel.stderr);
  const cancelled = jsonOf<Loose>(cancel);
  assert.equal(cancelled.state, 'cancelled');
  assert.equal(cancelled.cancelled_now, true);
  assert.equal(stepOf(cancelled, 'one').state, 'succeeded');
  assert.equal(stepOf(cancelled, 'two').state, 'not_run');
  const resume = await cli(s, 'skill-workflow', 'resume', 'run-c', '--max-steps', '5', '--json');
  assert.equal(resume.code, 1);
  assert.equal(jsonOf<Loose>(resume).state, 'cancelled');
  assert.equal(jsonOf<Loose>(resume).executed, 0);
  const twice = await cli(s, 'skill-workflow', 'cancel', 'run-c', '--json');
  assert.equal(twice.code, 0);
  assert.equal(jsonOf<Loose>(twice).cancelled_now, false);

  assert.equal((await cli(s, 'skill-workflow', 'run', 'run-done', file)).code, 0);
  const late = await cli(s, 'skill-workflow', 'cancel', 'run-done');
  assert.equal(late.code, 3);
  assert.match(late.stderr, /^error\[WORKFLOW_RUN_TERMINAL\]/);
});

test('read paths never create a missing journal or store', async (t) => {
  const s = setup(t);
  const file = writeDefinition(
    s.dir,
    'wf.json',
    definition(s.store, [{ id: 'one', action: sourcePaths(s.store, ['a.txt']) }]),
  );
  for (const args of [
    ['skill-workflow', 'status', 'r'],
    ['skill-workflow', 'resume', 'r', '--max-steps', '1'],
    ['skill-workflow', 'cancel', 'r'],
  ]) {
    const result = await cli(s, ...args);
    assert.equal(result.code, 4, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /^error\[WORKFLOW_JOURNAL_NOT_INITIALIZED\]/);
  }
  assert.equal(existsSync(join(s.store.dataDir, 'skill-workflows')), false);
  const empty = join(s.dir, 'empty');
  for (const args of [
    ['skill-workflow', 'plan', file],
    ['skill-workflow', 'run', 'r', file],
    ['skill-workflow', 'status', 'r'],
    ['requirement', 'show', '--target', 'main'],
  ]) {
    const result = await runCli(['--data-dir', empty, ...args]);
    assert.equal(result.code, 4, `${args.join(' ')}: ${result.stderr}`);
  }
  assert.equal(existsSync(empty), false);
  // A run ID that is not an identifier is refused before anything is opened.
  const bad = await cli(s, 'skill-workflow', 'run', 'bad id', file);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^error\[ID_INVALID\]/);
});

test('a reachable command step without a docker is refused naming --docker and nothing is recorded as run', async (t) => {
  const s = setup(t);
  const binding = await makeCommandBinding(s.store);
  const file = writeDefinition(
    s.dir,
    'cmd.json',
    definition(
      s.store,
      [
        { id: 'source', action: sourcePaths(s.store, ['a.txt']) },
        { id: 'cmd', needs: ['source'], action: commandAction(s.store, binding) },
      ],
      { resources: [RECIPE_PATH] },
    ),
  );
  const refused = await cliNoDocker(s, 'skill-workflow', 'run', 'run-x', file, '--json');
  assert.equal(refused.code, 4, refused.stderr);
  assert.equal(jsonOf<Loose>(refused).error.code, 'WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED');
  assert.match(refused.stderr, /command runtime not configured: step "cmd" .*no executable docker is on PATH/);
  assert.match(refused.stderr, /pass --docker PATH/);
  const status = await cli(s, 'skill-workflow', 'status', 'run-x', '--json');
  assert.equal(
    jsonOf<Loose>(status).error.code,
    'WORKFLOW_JOURNAL_NOT_INITIALIZED',
    'the refused run created nothing, not even the journal',
  );
  // Either flag alone is accepted (the other takes its default); an empty one is refused.
  const empty = await cliNoDocker(s, 'skill-workflow', 'run', 'run-x', file, '--docker', '');
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /^error\[RUNTIME_FLAGS_INVALID\]: --docker needs a path/);
  const socketOnly = await cliNoDocker(
    s,
    'skill-workflow',
    'run',
    'run-x',
    file,
    '--docker-socket',
    '/x.sock',
    '--json',
  );
  assert.equal(socketOnly.code, 4, socketOnly.stderr);
  assert.equal(jsonOf<Loose>(socketOnly).error.code, 'WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED');
});
