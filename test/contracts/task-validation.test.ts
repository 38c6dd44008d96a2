/**
 * validate_for_claim and task-aware assertion validation (docs/agent-tasks.md "State machine" and
 * docs/wire.md "TaskResultAssertion"): every binding, the lease cap, and the criterion matrix.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import {
  bindingOf,
  matchesBinding,
  validateScopeAndBinding,
  type ExecutorEnrollment,
} from '../../src/contracts/collector/executor-enrollment.js';
import { validateForClaim, type WorkflowTaskAttempt } from '../../src/contracts/task/attempt.js';
import { issuedLeaseMs, MAX_LEASE_MS } from '../../src/contracts/task/requests.js';
import {
  validateAssertionForTask,
  type CriterionResult,
  type TaskResultAssertion,
} from '../../src/contracts/task/result.js';
import { codeOf } from '../helpers/errors.js';
import {
  CRITERIA,
  EXECUTOR,
  hex64,
  PASSING_ROWS,
  row,
  sampleAssertion,
  sampleAttempt,
  sampleClaim,
  sampleTask,
} from '../support/task-contracts.js';

const task = sampleTask();
const claim = sampleClaim(task);
const attempt = sampleAttempt(task, claim);

test('validateForClaim accepts the exact binding with a lease up to the requested one', () => {
  assert.equal(
    codeOf(() => validateForClaim(attempt, claim)),
    'ok',
  );
  assert.equal(
    codeOf(() => validateForClaim({ ...attempt, lease_ms: 1n }, claim)),
    'ok',
  );
});

test('validateForClaim refuses every changed binding', () => {
  const cases: [string, Partial<WorkflowTaskAttempt>][] = [
    ['claim_request_id', { claim_request_id: 'claim-2' }],
    ['task_id', { task_id: 'other-task' }],
    ['task_digest', { task_digest: hex64('0') }],
    ['execution_operation_id', { execution_operation_id: 'op-2' }],
    ['agent owner', { agent: { owner_id: 'mallory', agent_id: 'codex' } }],
    ['agent id', { agent: { owner_id: 'alice', agent_id: 'claude' } }],
    ['executor', { executor: { ...EXECUTOR, registration_epoch: 2n } }],
    ['executor null', { executor: null }],
  ];
  for (const [name, change] of cases)
    assert.equal(
      codeOf(() => validateForClaim({ ...attempt, ...change }, claim)),
      'TASK_BINDING_MISMATCH',
      name,
    );
});

test('validateForClaim caps the lease at requested_lease_ms and 24 h, and needs a positive fence', () => {
  assert.equal(
    codeOf(() => validateForClaim({ ...attempt, lease_ms: claim.requested_lease_ms + 1n }, claim)),
    'LEASE_INVALID',
  );
  assert.equal(
    codeOf(() => validateForClaim({ ...attempt, lease_ms: 0n }, claim)),
    'LEASE_INVALID',
  );
  const longClaim = { ...claim, requested_lease_ms: 86_400_001n };
  assert.equal(
    codeOf(() => validateForClaim({ ...attempt, lease_ms: 1000n }, longClaim)),
    'LEASE_INVALID',
  );
  assert.equal(
    codeOf(() => validateForClaim({ ...attempt, fence: 0n }, claim)),
    'SCHEMA_BOUND',
  );
});

const validate = (assertion: TaskResultAssertion, t = task, a = attempt) =>
  codeOf(() => validateAssertionForTask(assertion, t, a));
const withRows = (rows: readonly CriterionResult[], outcome: TaskResultAssertion['outcome'] = 'passed') =>
  sampleAssertion(task, attempt, rows, outcome);

test('a complete passing observation is accepted and its counts are derived, never qualifying', () => {
  const summary = validateAssertionForTask(withRows(PASSING_ROWS), task, attempt);
  assert.deepEqual(summary, {
    passed: 2,
    failed: 0,
    not_claimed: 1,
    uncertain: 0,
    required_complete: true,
    qualifying: false,
  });
});

test('criterion matrix: duplicate, unknown and omitted rows are refused', () => {
  assert.equal(validate(withRows([...PASSING_ROWS, row('tests-pass', 'passed')])), 'CRITERION_DUPLICATE');
  assert.equal(validate(withRows([...PASSING_ROWS, row('surprise', 'passed')])), 'CRITERION_UNKNOWN');
  assert.equal(validate(withRows(PASSING_ROWS.slice(0, 2))), 'CRITERION_MISSING');
  assert.equal(
    validate(withRows([row('lint-clean', 'passed'), row('independent-review', 'not_claimed')], 'failed')),
    'CRITERION_MISSING',
  );
});

test('controller-only rows must be not_claimed, for agents and registered executors alike', () => {
  for (const outcome of ['passed', 'failed', 'uncertain'] as const) {
    const rows = [row('tests-pass', 'failed'), row('lint-clean', 'failed'), row('independent-review', outcome)];
    assert.equal(validate(withRows(rows, 'failed')), 'CRITERION_CONTROLLER_ONLY', `observation ${outcome}`);
    const agentAttempt = sampleAttempt(task, sampleClaim(task, null));
    assert.equal(
      validate(sampleAssertion(task, agentAttempt, rows, 'failed'), task, agentAttempt),
      'CRITERION_CONTROLLER_ONLY',
      `agent ${outcome}`,
    );
  }
});

test('pass rules: needs an eligible required criterion, all of them passed, and no failed or uncertain row', () => {
  assert.equal(
    validate(
      withRows([
        row('tests-pass', 'not_claimed'),
        row('lint-clean', 'passed'),
        row('independent-review', 'not_claimed'),
      ]),
    ),
    'ASSERTION_PASS_INELIGIBLE',
  );
  assert.equal(
    validate(
      withRows([row('tests-pass', 'passed'), row('lint-clean', 'failed'), row('independent-review', 'not_claimed')]),
    ),
    'ASSERTION_PASS_INELIGIBLE',
  );
  assert.equal(
    validate(
      withRows([row('tests-pass', 'passed'), row('lint-clean', 'uncertain'), row('independent-review', 'not_claimed')]),
    ),
    'ASSERTION_PASS_INELIGIBLE',
  );
  assert.equal(
    validate(
      withRows([
        row('tests-pass', 'passed'),
        row('lint-clean', 'not_claimed'),
        row('independent-review', 'not_claimed'),
      ]),
    ),
    'ok',
  );
  // A task whose only required criterion is controller-only cannot be passed by a wire assertion.
  const reviewOnly = sampleTask([CRITERIA[1], CRITERIA[2]].filter((c) => c !== undefined));
  const reviewAttempt = sampleAttempt(reviewOnly);
  const rows = [row('lint-clean', 'passed'), row('independent-review', 'not_claimed')];
  assert.equal(
    validate(sampleAssertion(reviewOnly, reviewAttempt, rows), reviewOnly, reviewAttempt),
    'ASSERTION_PASS_INELIGIBLE',
  );
  assert.equal(validate(sampleAssertion(reviewOnly, reviewAttempt, rows, 'failed'), reviewOnly, reviewAttempt), 'ok');
});

test('a failed or uncertain assertion may report any non-controller outcome', () => {
  const rows = [row('tests-pass', 'failed'), row('lint-clean', 'uncertain'), row('independent-review', 'not_claimed')];
  assert.equal(validate(withRows(rows, 'failed')), 'ok');
  const summary = validateAssertionForTask(withRows(rows, 'uncertain'), task, attempt);
  assert.equal(summary.required_complete, false);
});

test('wrong task, attempt, operation, actor, fence or executor bindings are refused', () => {
  const base = withRows(PASSING_ROWS);
  const cases: [string, Partial<TaskResultAssertion>][] = [
    ['task_id', { task_id: 'other' }],
    ['task_digest', { task_digest: hex64('0') }],
    ['attempt_id', { attempt_id: 'attempt-0' }],
    ['attempt_digest', { attempt_digest: hex64('0') }],
    ['execution_operation_id', { execution_operation_id: 'op-9' }],
    ['agent', { agent: { owner_id: 'alice', agent_id: 'other' } }],
    ['old fence', { fence: attempt.fence - 1n }],
    ['newer fence', { fence: attempt.fence + 1n }],
    ['executor epoch', { executor: { ...EXECUTOR, registration_epoch: 9n } }],
  ];
  for (const [name, change] of cases) assert.equal(validate({ ...base, ...change }), 'TASK_BINDING_MISMATCH', name);
  // The attempt of another task.
  const otherTask = sampleTask();
  const changedTask = { ...otherTask, required: false };
  assert.equal(validate(base, changedTask, attempt), 'TASK_BINDING_MISMATCH');
});

test('independent_controller_evidence is never accepted as a task result', () => {
  const base = withRows(PASSING_ROWS);
  assert.equal(
    validate({ ...base, trust_class: 'independent_controller_evidence', executor: null }),
    'TRUST_CLASS_INVALID',
  );
});

const enrollment: ExecutorEnrollment = {
  registration_id: 'reg-1',
  repository: '0123456789abcdef0123456789abcdef',
  profile: 'default',
  step: 'unit-tests',
  executor_id: 'ci-box',
  registration_epoch: 1n,
  public_key: hex64('8'),
  verification_key_id: hex64('9'),
};
const scope = { repository: enrollment.repository, profile: 'default', step: 'unit-tests' };

test('ExecutorEnrollment.validateScopeAndBinding: exact scope and binding only', () => {
  assert.equal(
    codeOf(() => validateScopeAndBinding(enrollment, scope, EXECUTOR)),
    'ok',
  );
  assert.equal(
    codeOf(() => validateScopeAndBinding(enrollment, { ...scope, step: 'lint' }, EXECUTOR)),
    'TASK_BINDING_MISMATCH',
  );
  assert.equal(
    codeOf(() => validateScopeAndBinding(enrollment, { ...scope, profile: 'p2' }, EXECUTOR)),
    'TASK_BINDING_MISMATCH',
  );
  assert.equal(
    codeOf(() => validateScopeAndBinding(enrollment, { ...scope, repository: 'f'.repeat(32) }, EXECUTOR)),
    'TASK_BINDING_MISMATCH',
  );
  for (const change of [
    { registration_id: 'reg-2' },
    { executor_id: 'x' },
    { registration_epoch: 2n },
    { verification_key_id: hex64('7') },
  ]) {
    assert.equal(
      codeOf(() => validateScopeAndBinding(enrollment, scope, { ...EXECUTOR, ...change })),
      'TASK_BINDING_MISMATCH',
      JSON.stringify(Object.keys(change)),
    );
  }
});

test('ExecutorRevocation.matchesBinding compares identities only', () => {
  const revocation = bindingOf(enrollment);
  assert.equal(matchesBinding(revocation, EXECUTOR), true);
  assert.equal(matchesBinding(revocation, { ...EXECUTOR, registration_epoch: 2n }), false);
  assert.equal(matchesBinding(revocation, { ...EXECUTOR, verification_key_id: hex64('7') }), false);
});

test('issuedLeaseMs gives the request, capped by the service maximum, never above 24 h', () => {
  assert.equal(issuedLeaseMs(600_000n), 600_000n);
  assert.equal(issuedLeaseMs(600_000n, 60_000n), 60_000n);
  assert.equal(issuedLeaseMs(MAX_LEASE_MS, MAX_LEASE_MS * 2n), MAX_LEASE_MS);
  assert.equal(
    codeOf(() => issuedLeaseMs(0n)),
    'LEASE_INVALID',
  );
  assert.equal(
    codeOf(() => issuedLeaseMs(MAX_LEASE_MS + 1n)),
    'LEASE_INVALID',
  );
  const claimed = sampleClaim(task);
  assert.equal(
    codeOf(() => validateForClaim({ ...attempt, lease_ms: issuedLeaseMs(claimed.requested_lease_ms, 1000n) }, claimed)),
    'ok',
  );
});
