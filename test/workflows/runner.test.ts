/**
 * The runner as a library: command steps through an injected CommandStepRuntime (recording
 * into the collector's real durable-attempt table), no replay of a reserved attempt,
 * advance(..., 0), the source_paths content bounds, the journal lease and consistency checks.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import { WORKFLOW_LIMITS } from '../../src/contracts/workflow-definition.js';
import { withStore } from '../../src/tasks/store.js';
import { cancelWorkflow } from '../../src/workflows/cancel.js';
import { finishCommandAttempt, reserveCommandAttempt } from '../../src/workflows/command-attempts.js';
import type { CommandStepRequest, CommandStepResult, CommandStepRuntime } from '../../src/workflows/command-step.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { advance, resumeWorkflow, runWorkflow } from '../../src/workflows/runner.js';
import { readRunStatus } from '../../src/workflows/status.js';
import { tempDir } from '../helpers/tmp.js';
import { openJournal } from '../support/journal.js';
import {
  bumpPolicy,
  commandAction,
  definition,
  inStore,
  makeCommandBinding,
  makeStore,
  RECIPE,
  RECIPE_PATH,
  SKILL_PATH,
  SKILL_TEXT,
  sourcePaths,
  type Store,
} from '../support/workflows.js';

type Mode = 'succeed' | 'fail' | 'uncertain' | 'crash';

class FakeRuntime implements CommandStepRuntime {
  readonly calls: CommandStepRequest[] = [];
  readonly cancels: string[] = [];
  constructor(private readonly mode: Mode) {}

  run(request: CommandStepRequest): Promise<CommandStepResult> {
    this.calls.push(request);
    // The runner's own journal connection, as the collector runtime uses it.
    const journal = request.store.requireJournal();
    const { attempt } = reserveCommandAttempt(journal.db, {
      repository: request.repository,
      runId: request.runId,
      stepId: request.stepId,
      generation: 1n,
      requestDigest: request.recipeDigest,
      requestJson: Buffer.from('{}'),
      snapshotPath: '/nonexistent',
      nowMs: Date.now(),
    });
    if (this.mode === 'crash') return Promise.reject(new Error('controller lost while the container ran'));
    const state = this.mode === 'succeed' ? 'succeeded' : this.mode === 'fail' ? 'failed' : 'uncertain';
    const finished = finishCommandAttempt(journal.db, attempt.attempt_id, {
      state,
      outcome: state === 'succeeded' ? 'passed' : state === 'failed' ? 'exit_nonzero' : 'cleanup_unknown',
      recordJson: Buffer.from('{"fake":true}'),
      recordDigest: 'd'.repeat(64),
      summary: `fake ${state}`,
      stdout: Buffer.alloc(0),
      stderr: Buffer.alloc(0),
      nowMs: Date.now(),
    });
    return Promise.resolve({
      state,
      attemptId: finished.attempt_id,
      generation: finished.generation,
      outcome: finished.outcome ?? '',
      recordDigest: finished.record_digest,
      summary: finished.summary ?? '',
    });
  }
}

async function commandSetup(t: TestContext): Promise<{ store: Store; bytes: Buffer }> {
  const store = makeStore(join(tempDir(t), 'data'), {
    [SKILL_PATH]: SKILL_TEXT,
    'a.txt': 'alpha',
    [RECIPE_PATH]: JSON.stringify(RECIPE),
  });
  const binding = await makeCommandBinding(store);
  const value = definition(
    store,
    [
      { id: 'source', action: sourcePaths(store, ['a.txt']) },
      { id: 'cmd', needs: ['source'], action: commandAction(store, binding) },
      { id: 'after', needs: ['cmd'], action: sourcePaths(store, ['a.txt']) },
    ],
    { resources: [RECIPE_PATH] },
  );
  return { store, bytes: Buffer.from(JSON.stringify(value)) };
}

test('a command step runs once through the runtime with its full binding; status shows its durable attempt', async (t) => {
  const { store, bytes } = await commandSetup(t);
  const runtime = new FakeRuntime('succeed');
  const report = await inStore(store.dataDir, (handle) => runWorkflow({ store: handle, runtime }, 'cmd-ok', bytes, 32));
  assert.equal(report.state, 'completed');
  assert.equal(runtime.calls.length, 1);
  const request = runtime.calls[0] as CommandStepRequest;
  assert.equal(request.recipePath, RECIPE_PATH);
  assert.equal(request.recipeDigest, store.digests[RECIPE_PATH]);
  assert.equal(request.revision, store.revision);
  assert.equal(request.changeVersion, 1n);
  const view = withStore(store.dataDir, 'read', (s) => readRunStatus(s, 'cmd-ok'));
  const cmd = view.steps.find((s) => s.id === 'cmd');
  assert.ok(cmd?.execution);
  assert.match(cmd.execution.attempt_id, /^cmd-[0-9a-f]{64}$/);
  assert.equal(cmd.execution.generation, 1n);
  assert.equal(cmd.execution.state, 'succeeded');
  assert.equal(cmd.execution.record_digest, 'd'.repeat(64));
  assert.equal(view.steps.find((s) => s.id === 'source')?.execution, null);
  // Reopening the finished run calls nothing.
  await inStore(store.dataDir, (handle) => runWorkflow({ store: handle, runtime }, 'cmd-ok', bytes, 32));
  assert.equal(runtime.calls.length, 1);
});

test('a failed command fails the run; an uncertain required command blocks it — never a success', async (t) => {
  const failed = await commandSetup(t);
  const a = await inStore(failed.store.dataDir, (handle) =>
    runWorkflow({ store: handle, runtime: new FakeRuntime('fail') }, 'cmd-fail', failed.bytes, 32),
  );
  assert.equal(a.state, 'failed');
  assert.equal(a.steps.find((s) => s.id === 'after')?.state, 'not_run');
  const uncertain = await commandSetup(t);
  const b = await inStore(uncertain.store.dataDir, (handle) =>
    runWorkflow({ store: handle, runtime: new FakeRuntime('uncertain') }, 'cmd-unc', uncertain.bytes, 32),
  );
  assert.equal(b.state, 'blocked');
  assert.equal(b.steps.find((s) => s.id === 'cmd')?.state, 'uncertain');
});

test('an interrupted command attempt is never run again: resume waits for recover; the recovered result is recorded without running', async (t) => {
  const { store, bytes } = await commandSetup(t);
  const crashing = new FakeRuntime('crash');
  await assert.rejects(
    inStore(store.dataDir, (handle) => runWorkflow({ store: handle, runtime: crashing }, 'cmd-crash', bytes, 32)),
    /controller lost/,
  );
  const before = withStore(store.dataDir, 'read', (s) => readRunStatus(s, 'cmd-crash'));
  assert.equal(before.steps.find((s) => s.id === 'cmd')?.state, 'running');
  assert.equal(before.steps.find((s) => s.id === 'cmd')?.execution?.state, 'running');

  const fresh = new FakeRuntime('succeed');
  const waiting = await inStore(store.dataDir, (handle) =>
    resumeWorkflow({ store: handle, runtime: fresh }, 'cmd-crash', 32),
  );
  assert.equal(fresh.calls.length, 0, 'a reserved attempt must not be run again');
  assert.equal(waiting.state, 'running');
  assert.equal(waiting.waiting?.reason, 'command_attempt_unfinished');
  assert.match(waiting.waiting?.message ?? '', /skill-workflow recover cmd-crash cmd/);

  await assert.rejects(
    inStore(store.dataDir, (handle) => cancelWorkflow({ store: handle }, 'cmd-crash')),
    {
      code: 'WORKFLOW_COMMAND_ATTEMPT_UNFINISHED',
    },
  );

  // What `skill-workflow recover` does: finalize the retained attempt.
  const journal = openJournal(store.dataDir, 'write');
  const attemptId = before.steps.find((s) => s.id === 'cmd')?.execution?.attempt_id ?? '';
  finishCommandAttempt(journal.db, attemptId, {
    state: 'succeeded',
    outcome: 'passed',
    recordJson: Buffer.from('{}'),
    recordDigest: 'e'.repeat(64),
    summary: 'recovered',
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    nowMs: Date.now(),
  });
  journal.close();

  // advance(..., 0) records the finished attempt and runs nothing new.
  const reconciled = await inStore(store.dataDir, (handle) => advance({ store: handle }, 'cmd-crash', 0));
  assert.equal(reconciled.executed, 0);
  assert.equal(reconciled.steps.find((s) => s.id === 'cmd')?.state, 'succeeded');
  assert.equal(reconciled.steps.find((s) => s.id === 'after')?.state, 'pending');
  // No command step is reachable any more, so source steps continue without the runtime.
  const done = await inStore(store.dataDir, (handle) => resumeWorkflow({ store: handle }, 'cmd-crash', 32));
  assert.equal(done.state, 'completed');
  assert.equal(done.executed, 1);
  assert.equal(fresh.calls.length + crashing.calls.length, 1);
});

test('cancel with an unfinished attempt uses the runtime cancel when there is one', async (t) => {
  const { store, bytes } = await commandSetup(t);
  await assert.rejects(
    inStore(store.dataDir, (handle) =>
      runWorkflow({ store: handle, runtime: new FakeRuntime('crash') }, 'cmd-cancel', bytes, 32),
    ),
  );
  const cancels: string[] = [];
  const runtime: CommandStepRuntime = {
    run: () => Promise.reject(new Error('must not run')),
    cancel: (request) => {
      cancels.push(request.stepId);
      return Promise.resolve({
        state: 'uncertain',
        attemptId: 'cmd-x',
        generation: 1n,
        outcome: 'cancelled',
        recordDigest: null,
        summary: 'stopped',
      });
    },
  };
  const report = await inStore(store.dataDir, (handle) => cancelWorkflow({ store: handle, runtime }, 'cmd-cancel'));
  assert.deepEqual(cancels, ['cmd']);
  assert.equal(report.state, 'cancelled');
  assert.equal(report.steps.find((s) => s.id === 'cmd')?.state, 'uncertain');
});

test('advance(..., 0) runs nothing on a running run and reconciles an all-terminal one', async (t) => {
  const store = makeStore(join(tempDir(t), 'data'), { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha' });
  const bytes = Buffer.from(
    JSON.stringify(
      definition(store, [
        { id: 'one', action: sourcePaths(store, ['a.txt']) },
        { id: 'two', action: sourcePaths(store, ['a.txt']) },
      ]),
    ),
  );
  await inStore(store.dataDir, (handle) => runWorkflow({ store: handle }, 'adv', bytes, 1));
  const idle = await inStore(store.dataDir, (handle) => advance({ store: handle }, 'adv', 0));
  assert.equal(idle.executed, 0);
  assert.equal(idle.state, 'running');
  await assert.rejects(
    inStore(store.dataDir, (handle) => advance({ store: handle }, 'adv', 33)),
    { code: 'USAGE' },
  );
  await inStore(store.dataDir, (handle) => resumeWorkflow({ store: handle }, 'adv', 32));
  // An older controller left the run state behind its steps.
  const db = new Database(journalPaths(store.dataDir).db);
  db.prepare("UPDATE workflow_runs SET state = 'running' WHERE run_id = 'adv'").run();
  db.close();
  assert.equal(withStore(store.dataDir, 'read', (s) => readRunStatus(s, 'adv')).state, 'running');
  const reconciled = await inStore(store.dataDir, (handle) => advance({ store: handle }, 'adv', 0));
  assert.equal(reconciled.executed, 0);
  assert.equal(reconciled.state, 'completed');
});

test('source_paths content bound: 8 MiB aggregate accepted, one byte more fails the step before reading', async (t) => {
  const half = WORKFLOW_LIMITS.maxAggregateContentBytes / 2;
  const store = makeStore(join(tempDir(t), 'data'), {
    [SKILL_PATH]: SKILL_TEXT,
    'big1.bin': Buffer.alloc(half, 1),
    'big2.bin': Buffer.alloc(half, 2),
    'one.bin': Buffer.alloc(1, 3),
  });
  const bytes = Buffer.from(
    JSON.stringify(
      definition(store, [
        { id: 'at-limit', required: false, action: sourcePaths(store, ['big1.bin', 'big2.bin']) },
        { id: 'past-limit', required: false, action: sourcePaths(store, ['big1.bin', 'big2.bin', 'one.bin']) },
      ]),
    ),
  );
  const report = await inStore(store.dataDir, (handle) => runWorkflow({ store: handle }, 'bounds', bytes, 32));
  const at = report.steps.find((s) => s.id === 'at-limit');
  const past = report.steps.find((s) => s.id === 'past-limit');
  assert.equal(at?.state, 'succeeded');
  assert.equal((at?.result as { bytes_read: number }).bytes_read, WORKFLOW_LIMITS.maxAggregateContentBytes);
  assert.equal(past?.state, 'failed');
  assert.match(
    (past?.result as { reason: string }).reason,
    /aggregate file-content limit of 8388608 bytes; nothing was read/,
  );
  assert.equal((past?.result as { bytes_read: number }).bytes_read, 0);
});

test('the journal lease: a live foreign lease is active, an expired one is taken over', async (t) => {
  const store = makeStore(join(tempDir(t), 'data'), { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha' });
  const bytes = Buffer.from(
    JSON.stringify(
      definition(store, [
        { id: 'one', action: sourcePaths(store, ['a.txt']) },
        { id: 'two', action: sourcePaths(store, ['a.txt']) },
      ]),
    ),
  );
  await inStore(store.dataDir, (handle) => runWorkflow({ store: handle }, 'lease', bytes, 1));
  const db = new Database(journalPaths(store.dataDir).db);
  const now = Date.now();
  db.prepare("INSERT INTO workflow_leases VALUES ('lease', 'other-host:1:x', 'other-host', 1, 'run', ?, ?)").run(
    now,
    now + 60_000,
  );
  db.close();
  await assert.rejects(
    inStore(store.dataDir, (handle) => resumeWorkflow({ store: handle }, 'lease', 1)),
    { code: 'WORKFLOW_JOURNAL_ACTIVE' },
  );
  assert.equal(withStore(store.dataDir, 'read', (s) => readRunStatus(s, 'lease')).controller.active, true);
  const later = await inStore(store.dataDir, (handle) =>
    resumeWorkflow({ store: handle, now: () => now + 61_000 }, 'lease', 1),
  );
  assert.equal(later.state, 'completed');
});

test('journal consistency: a tampered observation is refused by status and resume, and nothing changes', async (t) => {
  const store = makeStore(join(tempDir(t), 'data'), { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha' });
  const bytes = Buffer.from(
    JSON.stringify(
      definition(store, [
        { id: 'one', action: sourcePaths(store, ['a.txt']) },
        { id: 'two', action: sourcePaths(store, ['a.txt']) },
      ]),
    ),
  );
  await inStore(store.dataDir, (handle) => runWorkflow({ store: handle }, 'tamper', bytes, 1));
  const db = new Database(journalPaths(store.dataDir).db);
  db.prepare(
    "UPDATE workflow_steps SET result = CAST(replace(CAST(result AS TEXT), 'matched', 'MATCHED') AS BLOB) WHERE run_id = 'tamper' AND step_id = 'one'",
  ).run();
  db.close();
  assert.throws(() => withStore(store.dataDir, 'read', (s) => readRunStatus(s, 'tamper')), {
    code: 'WORKFLOW_JOURNAL_INCONSISTENT',
  });
  await assert.rejects(
    inStore(store.dataDir, (handle) => resumeWorkflow({ store: handle }, 'tamper', 1)),
    {
      code: 'WORKFLOW_JOURNAL_INCONSISTENT',
    },
  );
  const check = new Database(journalPaths(store.dataDir).db, { readonly: true });
  const two = check.prepare("SELECT state FROM workflow_steps WHERE run_id = 'tamper' AND step_id = 'two'").get() as {
    state: string;
  };
  check.close();
  assert.equal(two.state, 'pending');
});

test('after a policy bump, a finished attempt is still recorded by advance(..., 0); new work needs the current binding', async (t) => {
  const { store, bytes } = await commandSetup(t);
  await assert.rejects(
    inStore(store.dataDir, (handle) =>
      runWorkflow({ store: handle, runtime: new FakeRuntime('crash') }, 'cmd-policy', bytes, 32),
    ),
  );
  const attemptId =
    withStore(store.dataDir, 'read', (held) => readRunStatus(held, 'cmd-policy')).steps.find((s) => s.id === 'cmd')
      ?.execution?.attempt_id ?? '';
  const journal = openJournal(store.dataDir, 'write');
  finishCommandAttempt(journal.db, attemptId, {
    state: 'succeeded',
    outcome: 'passed',
    recordJson: Buffer.from('{}'),
    recordDigest: 'e'.repeat(64),
    summary: 'recovered',
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    nowMs: Date.now(),
  });
  journal.close();
  bumpPolicy(store.dataDir, store.repository);
  const reconciled = await inStore(store.dataDir, (handle) => advance({ store: handle }, 'cmd-policy', 0));
  assert.equal(reconciled.steps.find((s) => s.id === 'cmd')?.state, 'succeeded');
  assert.equal(reconciled.source_current, false);
  await assert.rejects(
    inStore(store.dataDir, (handle) => resumeWorkflow({ store: handle }, 'cmd-policy', 1)),
    {
      code: 'WORKFLOW_BINDING_CHANGED',
    },
  );
  const after = withStore(store.dataDir, 'read', (s) => readRunStatus(s, 'cmd-policy'));
  assert.equal(after.state, 'blocked');
  assert.equal(after.steps.find((s) => s.id === 'after')?.state, 'not_run');
  assert.equal(after.steps.find((s) => s.id === 'cmd')?.state, 'succeeded');
});

test('run IDs: 128 characters accepted, 129 refused before anything is opened', async (t) => {
  const store = makeStore(join(tempDir(t), 'data'), { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha' });
  const bytes = Buffer.from(JSON.stringify(definition(store, [{ id: 'one', action: sourcePaths(store, ['a.txt']) }])));
  const ok = await inStore(store.dataDir, (handle) => runWorkflow({ store: handle }, 'r'.repeat(128), bytes, 1));
  assert.equal(ok.state, 'completed');
  await assert.rejects(
    inStore(store.dataDir, (handle) => runWorkflow({ store: handle }, 'r'.repeat(129), bytes, 1)),
    { code: 'ID_INVALID' },
  );
});

test('journal consistency: step rows that no longer follow the stored definition order are refused', async (t) => {
  const store = makeStore(join(tempDir(t), 'data'), { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha' });
  const bytes = Buffer.from(
    JSON.stringify(
      definition(store, [
        { id: 'one', action: sourcePaths(store, ['a.txt']) },
        { id: 'two', action: sourcePaths(store, ['a.txt']) },
      ]),
    ),
  );
  await inStore(store.dataDir, (handle) => runWorkflow({ store: handle }, 'order', bytes, 1));
  const db = new Database(journalPaths(store.dataDir).db);
  db.prepare("UPDATE workflow_steps SET position = 31 WHERE run_id = 'order' AND step_id = 'one'").run();
  db.prepare("UPDATE workflow_steps SET position = 0 WHERE run_id = 'order' AND step_id = 'two'").run();
  db.prepare("UPDATE workflow_steps SET position = 1 WHERE run_id = 'order' AND step_id = 'one'").run();
  db.close();
  assert.throws(() => withStore(store.dataDir, 'read', (s) => readRunStatus(s, 'order')), {
    code: 'WORKFLOW_JOURNAL_INCONSISTENT',
  });
});
