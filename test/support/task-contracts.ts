/** Sample agent-task contract values for the contract tests (valid unless a test changes them). */
import type { TaskCriterion } from '../../src/contracts/instruction-entrypoint.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import { attemptDigest, type WorkflowTaskAttempt } from '../../src/contracts/task/attempt.js';
import type { ExecutorBinding } from '../../src/contracts/task/common.js';
import type { TaskClaimRequest, TaskMutationRequest } from '../../src/contracts/task/requests.js';
import type { CriterionResult, TaskResultAssertion } from '../../src/contracts/task/result.js';
import type { WorkflowTaskSubject } from '../../src/contracts/task/subject.js';
import { taskDigest, type WorkflowTask } from '../../src/contracts/task/task.js';

export const hex64 = (c: string): string => c.repeat(64);

export function sampleSubject(): WorkflowTaskSubject {
  return {
    version: 1,
    repository: '0123456789abcdef0123456789abcdef',
    profile: 'default',
    target: 'main',
    revision: hex64('a'),
    change_id: 'change-1',
    change_version: 3n,
    context_digest: hex64('b'),
    policy_epoch: 2n,
    requirement_digest: hex64('c'),
    plan_digest: hex64('d'),
    skill_digest: hex64('e'),
    step_id: 'unit-tests',
  };
}

export const CRITERIA: readonly TaskCriterion[] = [
  { criterion: 'tests-pass', required: true, controller_only: false, description: 'the unit tests pass' },
  { criterion: 'lint-clean', required: false, controller_only: false, description: 'lint reports nothing' },
  { criterion: 'independent-review', required: true, controller_only: true, description: 'reviewed by the controller' },
];

export function sampleTask(criteria: readonly TaskCriterion[] = CRITERIA): WorkflowTask {
  const subject = sampleSubject();
  return {
    version: 1,
    task_id: 'task-unit-tests',
    subject,
    required: true,
    action_kind: 'command',
    needs: ['verify-guide'],
    entrypoint: {
      capability: 'agentscm.agent-workflow-tasks/v1',
      schema_version: 1,
      task_id: 'task-unit-tests',
      step_id: subject.step_id,
      workflow_digest: subject.plan_digest,
      policy_digest: subject.requirement_digest,
      summary: 'Run the unit tests of the exact revision.',
      criteria: [...criteria],
      references: [{ name: 'guide', sha256: hex64('f'), path: 'skills/native-workflow/SKILL.md' }],
      progression: 'claim',
    },
  };
}

export const EXECUTOR: ExecutorBinding = {
  registration_id: 'reg-1',
  executor_id: 'ci-box',
  registration_epoch: 1n,
  verification_key_id: hex64('9'),
};

export function sampleClaim(task: WorkflowTask, executor: ExecutorBinding | null = EXECUTOR): TaskClaimRequest {
  return {
    version: 1,
    request_id: 'claim-1',
    task_id: task.task_id,
    task_digest: taskDigest(task),
    execution_operation_id: 'op-1',
    agent: { owner_id: 'alice', agent_id: 'codex' },
    executor,
    requested_lease_ms: 600_000n,
  };
}

export function sampleAttempt(task: WorkflowTask, claim: TaskClaimRequest = sampleClaim(task)): WorkflowTaskAttempt {
  return {
    version: 1,
    task_id: task.task_id,
    task_digest: taskDigest(task),
    attempt_id: 'attempt-1',
    claim_request_id: claim.request_id,
    execution_operation_id: claim.execution_operation_id,
    agent: claim.agent,
    executor: claim.executor,
    lease_ms: claim.requested_lease_ms,
    fence: 7n,
  };
}

export function sampleMutation(
  task: WorkflowTask,
  attempt: WorkflowTaskAttempt,
  action: TaskMutationRequest['action'] = 'heartbeat',
): TaskMutationRequest {
  return {
    version: 1,
    request_id: `${action}-1`,
    action,
    task_id: task.task_id,
    task_digest: taskDigest(task),
    attempt_id: attempt.attempt_id,
    attempt_digest: attemptDigest(attempt),
    execution_operation_id: attempt.execution_operation_id,
    agent: attempt.agent,
    executor: attempt.executor,
    fence: attempt.fence,
    reason: null,
  };
}

export function row(criterion: string, outcome: CriterionResult['outcome']): CriterionResult {
  return { criterion, outcome, findings: [], evidence_digests: [] };
}

export function sampleAssertion(
  task: WorkflowTask,
  attempt: WorkflowTaskAttempt,
  rows: readonly CriterionResult[],
  outcome: TaskResultAssertion['outcome'] = 'passed',
): TaskResultAssertion {
  return {
    version: 1,
    task_id: task.task_id,
    task_digest: taskDigest(task),
    attempt_id: attempt.attempt_id,
    attempt_digest: attemptDigest(attempt),
    request_id: 'result-1',
    execution_operation_id: attempt.execution_operation_id,
    agent: attempt.agent,
    executor: attempt.executor,
    fence: attempt.fence,
    trust_class: attempt.executor === null ? 'agent_assertion' : 'registered_executor_observation',
    outcome,
    criteria: [...rows],
    executor_provenance: null,
  };
}

/** A passing row set for the sample criteria. */
export const PASSING_ROWS: readonly CriterionResult[] = [
  row('tests-pass', 'passed'),
  row('lint-clean', 'passed'),
  row('independent-review', 'not_claimed'),
];

export function bytesOf(value: JsonValue): Uint8Array {
  return encodeCanonical(value);
}
