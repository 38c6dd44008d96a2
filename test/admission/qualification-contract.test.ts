/**
 * The qualification answer contract (docs/qualification.md "The answer"): at most 32 failures —
 * a real subject with 32 failing tasks answers all 32, one past the bound is cut to 32 and a
 * 33-failure answer is refused by the decoder — and the strict decoder's typed refusals.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';

import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import {
  MAX_QUALIFICATION_FAILURES,
  qualificationAnswerDecoder,
  qualificationToJson,
  type QualificationFailure,
} from '../../src/contracts/task/qualification.js';
import { boundFailures, qualify } from '../../src/tasks/admission/qualification.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { context, FakeClock, makeTaskStore, type StepSpec } from '../support/tasks.js';

const ALICE = { owner_id: 'alice', agent_id: 'agent-1' };
const HEX = 'a'.repeat(64);

test('32 failing tasks (the most a plan has) answer 32 failures, in plan order', (t) => {
  const steps: StepSpec[] = Array.from({ length: 32 }, (_, i) => ({
    id: `s${String(i).padStart(2, '0')}`,
    kind: 'command',
  }));
  const store = makeTaskStore(join(tempDir(t), 'data'), steps);
  const answer = qualify(context(store, ALICE, new FakeClock()));
  assert.equal(answer.tasks.length, 32);
  assert.equal(answer.failures.length, MAX_QUALIFICATION_FAILURES);
  assert.deepEqual(
    answer.failures.map((failure) => failure.code),
    Array.from({ length: 32 }, () => 'task_pending'),
  );
  assert.deepEqual(
    answer.failures.map((failure) => failure.task_id),
    answer.tasks.map((task) => task.task_id),
  );
  assert.deepEqual(answer.next, { operation: 'collector_claim', task_id: answer.tasks[0]?.task_id });
  assert.deepEqual(qualificationAnswerDecoder.decode(encodeCanonical(qualificationToJson(answer))), answer);
});

test('one failure past the bound: the first 32 are kept, and a 33-failure answer is refused by the decoder', () => {
  const failures: QualificationFailure[] = Array.from({ length: 33 }, (_, i) => ({
    task_id: `t-${i}`,
    code: 'task_pending',
  }));
  const kept = boundFailures(failures);
  assert.equal(kept.length, 32);
  assert.deepEqual(kept, failures.slice(0, 32));
  assert.deepEqual(boundFailures(failures.slice(0, 32)), failures.slice(0, 32));
  const answer = {
    qualified: false,
    subject_current: true,
    receipt_digest: null,
    revision: HEX,
    tasks: [],
    failures,
    next: { operation: 'none' },
  };
  assert.equal(
    codeOf(() => qualificationAnswerDecoder.decode(encodeCanonical(answer as unknown as JsonObject))),
    'SCHEMA_BOUND',
  );
  assert.doesNotThrow(() =>
    qualificationAnswerDecoder.decode(
      encodeCanonical({ ...answer, failures: failures.slice(0, 32) } as unknown as JsonObject),
    ),
  );
});

test('the strict decoder refuses what a Stop hook must not trust, each with a stable code', () => {
  const base: JsonObject = {
    qualified: false,
    subject_current: true,
    receipt_digest: null,
    revision: HEX,
    tasks: [],
    failures: [],
    next: { operation: 'none' },
  };
  const decode = (value: JsonObject): string => codeOf(() => qualificationAnswerDecoder.decode(encodeCanonical(value)));
  const cases: [string, JsonObject, string][] = [
    ['collector_claim without task_id', { ...base, next: { operation: 'collector_claim' } }, 'SCHEMA_'],
    ['none with a task_id', { ...base, next: { operation: 'none', task_id: 't-1' } }, 'SCHEMA_'],
    ['a command as next', { ...base, next: { operation: 'run', command: 'rm -rf /' } }, 'SCHEMA_'],
    ['a failure code outside the id rule', { ...base, failures: [{ task_id: 't-1', code: 'made up' }] }, 'ID_INVALID'],
    [
      'a failure code of 129 characters',
      { ...base, failures: [{ task_id: 't-1', code: 'c'.repeat(129) }] },
      'SCHEMA_BOUND',
    ],
    ['a task id outside the id rule', { ...base, failures: [{ task_id: 't 1', code: 'task_pending' }] }, 'ID_INVALID'],
    ['an uppercase revision', { ...base, revision: 'A'.repeat(64) }, 'ID_INVALID'],
    ['an unknown field', { ...base, extra: 1 }, 'SCHEMA_UNKNOWN_FIELD'],
    [
      'qualified with a failure',
      { ...base, qualified: true, receipt_digest: HEX, failures: [{ task_id: 't-1', code: 'task_pending' }] },
      'QUALIFICATION_ANSWER_INVALID',
    ],
    ['qualified without a receipt', { ...base, qualified: true }, 'QUALIFICATION_ANSWER_INVALID'],
    ['a receipt digest while not qualified', { ...base, receipt_digest: HEX }, 'QUALIFICATION_ANSWER_INVALID'],
    [
      'a superseded subject that does not say checkpoint',
      { ...base, subject_current: false },
      'QUALIFICATION_ANSWER_INVALID',
    ],
  ];
  for (const [what, value, code] of cases) {
    const got = decode(value);
    assert.ok(got.startsWith(code), `${what}: ${got}`);
  }
  assert.doesNotThrow(() =>
    qualificationAnswerDecoder.decode(
      encodeCanonical({ ...base, subject_current: false, next: { operation: 'checkpoint' } }),
    ),
  );
  // A code of a newer hub is data of the id shape, not a refusal (spec: "ids and codes match [A-Za-z0-9._-]{1,128}").
  const newer = [
    { task_id: 't-1', code: 'made_up' },
    { task_id: 't-2', code: 'c'.repeat(128) },
  ];
  assert.deepEqual(qualificationAnswerDecoder.decode(encodeCanonical({ ...base, failures: newer })).failures, newer);
});
