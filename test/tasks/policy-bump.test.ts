/**
 * A policy bump needs no requirement reinstall (docs/requirements.md "Policy epochs"): the
 * specification binds the policy epoch and the installed requirement as two separate inputs of a
 * task subject, and compiles the requirement for each subject at the subject's epoch. After a
 * bump, the old subject is stale, and the next Change version derives tasks at the new epoch
 * under the same installed requirement (same requirement digest), with new task digests, and
 * they can be claimed.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { call, claimedOf, claimRequest, taskRef } from '../support/task-requests.js';
import { bumpPolicy, checkpoint, context, FakeClock, makeTaskStore } from '../support/tasks.js';

const ALICE = { owner_id: 'alice', agent_id: 'a1' };

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentscmError) return error.code;
    throw error;
  }
  return 'no error';
}

test('after a policy bump, tasks derive at the new epoch under the installed requirement, without a reinstall', async (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const clock = new FakeClock();
  const before = call(context(store, ALICE, clock), 'requirements');
  const oldSubject = before.subject as JsonObject;
  assert.equal(oldSubject.policy_epoch, 0n);
  const shown = await runCli(['--data-dir', dir, 'requirement', 'show', '--target', 'main', '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  const installed = jsonOf<{ requirement_digest: string }>(shown).requirement_digest;
  assert.equal(oldSubject.requirement_digest, installed);

  assert.equal(bumpPolicy(store), 1n);
  // The subject bound to epoch 0 is stale at once.
  assert.equal(
    codeOf(() => call(context(store, ALICE, clock), 'requirements')),
    'TASK_STALE',
  );
  // The requirement stays the target's requirement: no reinstall, same digest.
  const after = await runCli(['--data-dir', dir, 'requirement', 'show', '--target', 'main', '--json']);
  assert.equal(after.code, 0, after.stderr);
  assert.equal(jsonOf<{ requirement_digest: string }>(after).requirement_digest, installed);

  // A new Change version and context at epoch 1: tasks derive under the same requirement.
  checkpoint(store, store.revision);
  const alice = context(store, ALICE, clock);
  const moved = call(alice, 'requirements');
  const subject = moved.subject as JsonObject;
  assert.equal(subject.policy_epoch, 1n);
  assert.equal(subject.requirement_digest, installed);
  assert.notEqual(subject.plan_digest, oldSubject.plan_digest);
  const oldDigests = new Set((before.tasks as JsonObject[]).map((row) => row.task_digest));
  for (const row of moved.tasks as JsonObject[]) assert.ok(!oldDigests.has(row.task_digest));
  // And they are live work: a task at the new epoch can be claimed.
  const claimed = claimedOf(call(alice, 'claim', claimRequest(ALICE, taskRef(moved, 'unit'), 'claim-1', 'op-1')));
  assert.equal(claimed.fence, 1n);
});
