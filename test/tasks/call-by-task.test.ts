/**
 * `agent-task call heartbeat|cancel|reconcile --task ID` (docs/agent-tasks.md "Requests by task
 * id"): the body comes from the task's current attempt, so nobody writes digests, attempt ids,
 * executor bindings or fences by hand; the transition is the one `--input` runs.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf } from '../helpers/cli.js';
import { buildScenario, SCENARIO_CHANGE } from '../helpers/scenario.js';

interface Answer {
  readonly status: string;
  readonly task_id: string;
  readonly supersession?: { readonly old_fence: number; readonly new_fence: number };
}
interface ErrorDoc {
  readonly error: { readonly code: string };
}

test('cancel and reconcile by task id, and the refusals of --task', { timeout: 600_000 }, async (t) => {
  const s = await buildScenario(t, { profile: true });
  const call = (...args: string[]) => s.cli(['agent-task', 'call', ...args, '--token-file', s.tokenFile, '--json']);

  // Nothing claimed yet: no task to act on, nothing changes.
  const early = await call('cancel', '--task', 't-0000000000000000000000000000000000000000');
  assert.equal(early.code, 2, early.stderr);
  assert.equal(jsonOf<ErrorDoc>(early).error.code, 'TASK_NOT_FOUND');

  const claimed = jsonOf<{ descriptor: { task: { task_id: string } } }>(
    await s.cli([
      'agent-task',
      'claim',
      '--change',
      SCENARIO_CHANGE,
      '--token-file',
      s.tokenFile,
      '--out',
      join(s.root, 'd.json'),
      '--json',
    ]),
  );
  const taskId = claimed.descriptor.task.task_id;

  const heartbeat = await call('heartbeat', '--task', taskId);
  assert.equal(heartbeat.code, 0, heartbeat.stderr);
  const cancel = await call('cancel', '--task', taskId, '--reason', 'stopped before the check ran');
  assert.equal(cancel.code, 0, cancel.stderr);
  const reconcile = await call('reconcile', '--task', taskId, '--reason', 'the cancelled run is known to have stopped');
  assert.equal(reconcile.code, 0, reconcile.stderr);
  const cancelled = jsonOf<Answer>(cancel);
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.task_id, taskId);
  const reconciled = jsonOf<Answer>(reconcile);
  assert.equal(reconciled.status, 'reconciled');
  assert.deepEqual(reconciled.supersession, { old_fence: 1, new_fence: 2 });

  // Refusals: another operation, a reason with heartbeat or without --task, --task with --input,
  // a reason past 1024 bytes (at the bound it is accepted by the schema).
  const status = await call('status', '--task', taskId);
  assert.equal(jsonOf<ErrorDoc>(status).error.code, 'USAGE');
  const beatReason = await call('heartbeat', '--task', taskId, '--reason', 'x');
  assert.equal(jsonOf<ErrorDoc>(beatReason).error.code, 'USAGE');
  const bare = await call('cancel', '--reason', 'x');
  assert.equal(jsonOf<ErrorDoc>(bare).error.code, 'USAGE');
  const both = await call('cancel', '--task', taskId, '--input', join(s.root, 'd.json'));
  assert.equal(both.code, 2);
  const long = await call('cancel', '--task', taskId, '--reason', 'x'.repeat(1025));
  assert.equal(jsonOf<ErrorDoc>(long).error.code, 'USAGE');
  const atBound = await call('cancel', '--task', taskId, '--reason', 'x'.repeat(1024));
  assert.notEqual(jsonOf<ErrorDoc>(atBound).error?.code ?? 'none', 'USAGE');
});
