/**
 * The `deps_lockfile_changed` failures qualification adds (docs/deps.md "A changed lockfile"): one
 * per task not yet succeeded whose lockfile changed, in task order, none on a superseded answer,
 * and none past the answer's bound of MAX_QUALIFICATION_FAILURES failures (at the bound and one
 * below it). The store-reading half runs in test/deps/deps-check.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  MAX_QUALIFICATION_FAILURES,
  type QualificationAnswer,
  type QualificationTask,
} from '../../src/contracts/task/qualification.js';
import { appendDepsFailures, DEPS_LOCKFILE_CHANGED_FAILURE } from '../../src/tasks/admission/qualification-deps.js';

function task(id: string, state: QualificationTask['state']): QualificationTask {
  return { task_id: id, task_digest: 'a'.repeat(64), step_id: `step-${id}`, required: true, state };
}

function answer(failures: number, tasks: readonly QualificationTask[], current = true): QualificationAnswer {
  return {
    qualified: false,
    subject_current: current,
    receipt_digest: null,
    revision: 'b'.repeat(64),
    tasks,
    failures: Array.from({ length: failures }, (_, i) => ({ task_id: `t-old${String(i)}`, code: 'task_pending' })),
    next: { operation: 'none' },
  };
}

const codes = (a: QualificationAnswer): string[] => a.failures.map((f) => `${f.task_id}:${f.code}`);

test('a changed lockfile adds one failure per task not yet succeeded, in task order', () => {
  const tasks = [task('t-1', 'pending'), task('t-2', 'succeeded'), task('t-3', 'failed'), task('t-4', 'pending')];
  const out = appendDepsFailures(answer(0, tasks), (t) => t.task_id !== 't-4');
  assert.deepEqual(codes(out), [`t-1:${DEPS_LOCKFILE_CHANGED_FAILURE}`, `t-3:${DEPS_LOCKFILE_CHANGED_FAILURE}`]);
  const same = answer(0, tasks);
  assert.equal(
    appendDepsFailures(same, () => false),
    same,
  );
  const superseded = answer(0, tasks, false);
  assert.equal(
    appendDepsFailures(superseded, () => true),
    superseded,
  );
});

test('no failure is added past MAX_QUALIFICATION_FAILURES: one below the bound adds one, at it none', () => {
  const tasks = [task('t-1', 'pending'), task('t-2', 'pending')];
  const below = appendDepsFailures(answer(MAX_QUALIFICATION_FAILURES - 1, tasks), () => true);
  assert.equal(below.failures.length, MAX_QUALIFICATION_FAILURES);
  assert.equal(below.failures.at(-1)?.task_id, 't-1');
  const at = answer(MAX_QUALIFICATION_FAILURES, tasks);
  assert.equal(
    appendDepsFailures(at, () => true),
    at,
  );
});
