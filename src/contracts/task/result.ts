/**
 * TaskResultAssertion (docs/wire.md "TaskResultAssertion"): one
 * unique row per task criterion with a bounded outcome, findings and evidence commitments.
 * Counts and completeness are derived here, never submitted. Declared field order is the
 * signing order of docs/keys-and-enrollment.md "Observation signatures".
 */
import { DOMAINS, encodedOncePerValue, type CanonicalEncoding } from '../digest.js';
import { AgentscmError } from '../errors.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import { attemptDigest, type WorkflowTaskAttempt } from './attempt.js';
import {
  AGENT_SCHEMA,
  agentToJson,
  checkUtf8Bound,
  defineTaskDecoder,
  executorToJson,
  HEX64_SCHEMA,
  HEX128_SCHEMA,
  ID_SCHEMA,
  NULLABLE_EXECUTOR_SCHEMA,
  POSITIVE_U64_SCHEMA,
  sameAgent,
  sameExecutor,
  VERSION_SCHEMA,
  type AgentRef,
  type ExecutorBinding,
  type TaskDecoder,
} from './common.js';
import { checkFence } from './requests.js';
import { taskDigest, type WorkflowTask } from './task.js';

export const MAX_ASSERTION_CRITERIA = 64;
export const MAX_FINDINGS = 32;
export const MAX_FINDING_BYTES = 4096;
export const MAX_EVIDENCE_DIGESTS = 32;
/** The whole assertion, as received and as canonically encoded: 256 KiB. */
export const MAX_ASSERTION_BYTES = 256 * 1024;

/** Trust classes a wire assertion may name; the collector class is assigned internally only. */
export type TrustClass = 'agent_assertion' | 'registered_executor_observation' | 'independent_controller_evidence';
export const WIRE_TRUST_CLASSES: readonly TrustClass[] = [
  'agent_assertion',
  'registered_executor_observation',
  'independent_controller_evidence',
];

export type AssertionOutcome = 'passed' | 'failed' | 'uncertain';
export const ASSERTION_OUTCOMES: readonly AssertionOutcome[] = ['passed', 'failed', 'uncertain'];
export type CriterionOutcome = 'passed' | 'failed' | 'not_claimed' | 'uncertain';
export const CRITERION_OUTCOMES: readonly CriterionOutcome[] = ['passed', 'failed', 'not_claimed', 'uncertain'];

export interface CriterionResult {
  readonly criterion: string;
  readonly outcome: CriterionOutcome;
  readonly findings: readonly string[];
  readonly evidence_digests: readonly string[];
}

export interface ExecutorProvenance {
  readonly observation_digest: string;
  /** Ed25519 signature over the 32 raw digest bytes, 128 lowercase hex. */
  readonly signature: string;
}

export interface TaskResultAssertion {
  readonly version: 1;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly request_id: string;
  readonly execution_operation_id: string;
  readonly agent: AgentRef;
  readonly executor: ExecutorBinding | null;
  readonly fence: bigint;
  readonly trust_class: TrustClass;
  readonly outcome: AssertionOutcome;
  readonly criteria: readonly CriterionResult[];
  readonly executor_provenance: ExecutorProvenance | null;
}

export const CRITERION_RESULT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['criterion', 'outcome', 'findings', 'evidence_digests'],
  properties: {
    criterion: ID_SCHEMA,
    outcome: { enum: [...CRITERION_OUTCOMES] },
    findings: { type: 'array', maxItems: MAX_FINDINGS, items: { type: 'string', maxUtf8Bytes: MAX_FINDING_BYTES } },
    evidence_digests: { type: 'array', maxItems: MAX_EVIDENCE_DIGESTS, items: HEX64_SCHEMA },
  },
} as const;

export const PROVENANCE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['observation_digest', 'signature'],
  properties: { observation_digest: HEX64_SCHEMA, signature: HEX128_SCHEMA },
} as const;

export const ASSERTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'task_id',
    'task_digest',
    'attempt_id',
    'attempt_digest',
    'request_id',
    'execution_operation_id',
    'agent',
    'executor',
    'fence',
    'trust_class',
    'outcome',
    'criteria',
    'executor_provenance',
  ],
  properties: {
    version: VERSION_SCHEMA,
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    attempt_id: ID_SCHEMA,
    attempt_digest: HEX64_SCHEMA,
    request_id: ID_SCHEMA,
    execution_operation_id: ID_SCHEMA,
    agent: AGENT_SCHEMA,
    executor: NULLABLE_EXECUTOR_SCHEMA,
    fence: POSITIVE_U64_SCHEMA,
    trust_class: { enum: [...WIRE_TRUST_CLASSES] },
    outcome: { enum: [...ASSERTION_OUTCOMES] },
    criteria: { type: 'array', minItems: 1, maxItems: MAX_ASSERTION_CRITERIA, items: CRITERION_RESULT_SCHEMA },
    executor_provenance: { anyOf: [{ type: 'null' }, PROVENANCE_SCHEMA] },
  },
} as const;

/** Canonical (declared-order) JSON of one criterion row. */
export function criterionResultToJson(row: CriterionResult): JsonObject {
  return {
    criterion: row.criterion,
    outcome: row.outcome,
    findings: [...row.findings],
    evidence_digests: [...row.evidence_digests],
  };
}

/** Canonical JSON of an assertion in declared (signing) order; `provenance` overrides executor_provenance. */
export function assertionToJson(
  assertion: TaskResultAssertion,
  provenance: ExecutorProvenance | null = assertion.executor_provenance,
): JsonObject {
  const provenanceJson: JsonValue =
    provenance === null ? null : { observation_digest: provenance.observation_digest, signature: provenance.signature };
  return {
    version: assertion.version,
    task_id: assertion.task_id,
    task_digest: assertion.task_digest,
    attempt_id: assertion.attempt_id,
    attempt_digest: assertion.attempt_digest,
    request_id: assertion.request_id,
    execution_operation_id: assertion.execution_operation_id,
    agent: agentToJson(assertion.agent),
    executor: executorToJson(assertion.executor),
    fence: assertion.fence,
    trust_class: assertion.trust_class,
    outcome: assertion.outcome,
    criteria: assertion.criteria.map(criterionResultToJson),
    executor_provenance: provenanceJson,
  };
}

/**
 * Shape rules beyond the schema: byte bounds and no NUL in findings, unique rows, positive fence,
 * the trust class fits executor/provenance, and the canonical size is within 256 KiB.
 */
export function checkAssertion(assertion: TaskResultAssertion): void {
  checkFence(assertion.fence, '/fence');
  const seen = new Set<string>();
  assertion.criteria.forEach((row, index) => {
    if (seen.has(row.criterion)) {
      throw new AgentscmError('CRITERION_DUPLICATE', `criterion ${row.criterion} is reported twice (row ${index})`, {
        hint: 'report every criterion of the task in exactly one row',
        details: { criterion: row.criterion },
      });
    }
    seen.add(row.criterion);
    row.findings.forEach((finding, findingIndex) => {
      const where = `/criteria/${index}/findings/${findingIndex}`;
      checkUtf8Bound(finding, MAX_FINDING_BYTES, where);
      if (finding.includes('\u0000')) {
        throw new AgentscmError('SCHEMA_TYPE', `${where} contains NUL`, {
          hint: 'remove NUL characters from findings',
          details: { pointer: where },
        });
      }
    });
  });
  const registered = assertion.trust_class === 'registered_executor_observation';
  if (registered && assertion.executor === null) {
    throw new AgentscmError('TRUST_CLASS_INVALID', 'a registered_executor_observation needs its executor binding', {
      hint: 'fill executor with the enrollment the observation is signed under',
    });
  }
  if (!registered && (assertion.executor !== null || assertion.executor_provenance !== null)) {
    throw new AgentscmError(
      'TRUST_CLASS_INVALID',
      `a ${assertion.trust_class} carries no executor and no executor_provenance (both null)`,
    );
  }
  const size = encodeAssertion(assertion).canonical.byteLength;
  if (size > MAX_ASSERTION_BYTES) {
    throw new AgentscmError(
      'INPUT_TOO_LARGE',
      `the assertion encodes to ${size} bytes, more than ${MAX_ASSERTION_BYTES}`,
      { details: { size, limit: MAX_ASSERTION_BYTES } },
    );
  }
}

/**
 * The assertion's canonical bytes (declared order, its own executor_provenance) and their result
 * domain digest (resultRequestDigest), encoded once per assertion object (assertions are
 * immutable): the size check, the request digest and the retained row cover the same bytes.
 * Callers must not modify the returned bytes.
 */
export const encodeAssertion: (assertion: TaskResultAssertion) => CanonicalEncoding = encodedOncePerValue(
  DOMAINS.result,
  assertionToJson,
);

/** Result request identity (docs/wire.md domain agentscm.agent-workflow-result.v1), over the full assertion. */
export function resultRequestDigest(assertion: TaskResultAssertion): string {
  return encodeAssertion(assertion).digest;
}

/** Strict decoder of an assertion (≤ 256 KiB, then schema, then checkAssertion). */
export const taskResultAssertionDecoder: TaskDecoder<TaskResultAssertion> = defineTaskDecoder<TaskResultAssertion>(
  'agent-task.task-result-assertion',
  ASSERTION_SCHEMA,
  {
    maxBytes: MAX_ASSERTION_BYTES,
    check: checkAssertion,
  },
);

/** Derived from the rows and the task; never submitted. */
export interface AssertionSummary {
  readonly passed: number;
  readonly failed: number;
  readonly not_claimed: number;
  readonly uncertain: number;
  /** Every required criterion a non-controller can claim is reported passed. */
  readonly required_complete: boolean;
  /** Always false for wire assertions: agent assertions and registered observations never pass admission. */
  readonly qualifying: false;
}

function bindingMismatch(field: string, message: string): never {
  throw new AgentscmError('TASK_BINDING_MISMATCH', message, {
    hint: 'send the result for the exact task, attempt and fence you hold',
    details: { field },
  });
}

/**
 * Task-aware validation (docs/wire.md "TaskResultAssertion"): exact task/attempt/fence/actor/
 * executor binding; one row per task criterion (duplicate, unknown and omitted refused);
 * controller-only rows not_claimed; a pass needs an eligible required criterion and every eligible
 * required row passed, with no failed or uncertain row. Returns the derived counts.
 */
export function validateAssertionForTask(
  assertion: TaskResultAssertion,
  task: WorkflowTask,
  attempt: WorkflowTaskAttempt,
): AssertionSummary {
  checkAssertion(assertion);
  if (assertion.trust_class === 'independent_controller_evidence') {
    throw new AgentscmError(
      'TRUST_CLASS_INVALID',
      'independent_controller_evidence is collected by the controller itself, never submitted as a task result',
      {
        hint: 'submit an agent_assertion or a registered_executor_observation',
      },
    );
  }
  const digestOfTask = taskDigest(task);
  if (assertion.task_id !== task.task_id)
    bindingMismatch('task_id', `the assertion is for task ${assertion.task_id}, not ${task.task_id}`);
  if (assertion.task_digest !== digestOfTask)
    bindingMismatch('task_digest', 'the assertion task_digest is not the digest of the stored task');
  if (attempt.task_id !== task.task_id || attempt.task_digest !== digestOfTask)
    bindingMismatch('attempt', 'the attempt does not belong to this task');
  if (assertion.attempt_id !== attempt.attempt_id)
    bindingMismatch('attempt_id', `the assertion is for attempt ${assertion.attempt_id}, not ${attempt.attempt_id}`);
  if (assertion.attempt_digest !== attemptDigest(attempt))
    bindingMismatch('attempt_digest', 'the assertion attempt_digest is not the digest of the stored attempt');
  if (assertion.execution_operation_id !== attempt.execution_operation_id)
    bindingMismatch('execution_operation_id', 'the assertion names another execution operation');
  if (!sameAgent(assertion.agent, attempt.agent))
    bindingMismatch('agent', 'the assertion names another owner/agent than the attempt');
  if (assertion.fence !== attempt.fence)
    bindingMismatch('fence', `the assertion fence ${assertion.fence} is not the attempt fence ${attempt.fence}`);
  if (
    assertion.trust_class === 'registered_executor_observation' &&
    !sameExecutor(assertion.executor, attempt.executor)
  ) {
    bindingMismatch('executor', 'the observation names another executor registration than the attempt');
  }

  const byCriterion = new Map(task.entrypoint.criteria.map((row) => [row.criterion, row]));
  const counts = { passed: 0, failed: 0, not_claimed: 0, uncertain: 0 };
  const reported = new Set<string>();
  for (const row of assertion.criteria) {
    const definition = byCriterion.get(row.criterion);
    if (definition === undefined) {
      throw new AgentscmError('CRITERION_UNKNOWN', `task ${task.task_id} has no criterion ${row.criterion}`, {
        details: { criterion: row.criterion },
      });
    }
    if (definition.controller_only && row.outcome !== 'not_claimed') {
      throw new AgentscmError(
        'CRITERION_CONTROLLER_ONLY',
        `criterion ${row.criterion} is controller-only; report it as not_claimed`,
        { details: { criterion: row.criterion } },
      );
    }
    reported.add(row.criterion);
    counts[row.outcome] += 1;
  }
  const missing = task.entrypoint.criteria.filter((row) => !reported.has(row.criterion)).map((row) => row.criterion);
  if (missing.length > 0) {
    throw new AgentscmError('CRITERION_MISSING', `the assertion omits criteria ${missing.join(', ')}`, {
      hint: 'report every criterion; use not_claimed for one you did not check',
      details: { missing },
    });
  }

  const rowOf = new Map(assertion.criteria.map((row) => [row.criterion, row]));
  const eligibleRequired = task.entrypoint.criteria.filter((row) => row.required && !row.controller_only);
  const requiredComplete =
    eligibleRequired.length > 0 && eligibleRequired.every((row) => rowOf.get(row.criterion)?.outcome === 'passed');
  if (assertion.outcome === 'passed') {
    if (eligibleRequired.length === 0) {
      throw new AgentscmError(
        'ASSERTION_PASS_INELIGIBLE',
        `task ${task.task_id} has no required criterion this assertion can claim, so it cannot pass`,
        { hint: 'report failed or uncertain' },
      );
    }
    if (!requiredComplete || counts.failed > 0 || counts.uncertain > 0) {
      throw new AgentscmError(
        'ASSERTION_PASS_INELIGIBLE',
        'a passed assertion needs every claimable required criterion passed and no failed or uncertain row',
        { hint: 'report failed or uncertain' },
      );
    }
  }
  return { ...counts, required_complete: requiredComplete, qualifying: false };
}
