/**
 * Receipt v2 (docs/collector-transfer.md "Receipt v2": "The resulting v2 receipt names every
 * transfer, task, attempt, fence, registration epoch/key/profile and originating actor/grant";
 * docs/wire.md "Receipt v2"): the authority's record that the compiled workflow graph of one exact
 * subject completed, one row per plan step in plan order. An imported collector task's row
 * names its attempt, fence, transfer (plain SHA-256 of the whole envelope), collector profile,
 * registration and origin, whatever its outcome (an optional one that did not pass is an
 * omission that still names its transfer); a passed native source_paths task's row names its
 * recomputed result digest; any other row (an omitted optional step without a transfer, a step
 * of another kind) names neither.
 * Digest domain `agentscm.workflow-receipt.v2`. Pure: shape, strict decoding, canonical bytes.
 */
import { AUTHORITY_ID_SCHEMA, ORIGIN_SCHEMA, originToJson } from '../collector/descriptor.js';
import { domainDigest, DOMAINS } from '../digest.js';
import { AgentscmError } from '../errors.js';
import type { GrantOrigin } from '../grant.js';
import { encodeCanonical } from '../json/canonical-json.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { HEX64_SCHEMA, ID_SCHEMA, POSITIVE_U64_SCHEMA, REPOSITORY_SCHEMA, U64_SCHEMA } from '../task/common.js';
import { SUBJECT_BASE_FIELDS, SUBJECT_BASE_PROPERTIES, type TargetSubject } from '../task/subject.js';

export const RECEIPT_VERSION = 2;
/** One row per plan step; a plan has at most 32 steps (docs/skill-workflows.md). */
export const MAX_RECEIPT_TASKS = 32;
/** 32 rows of at most about 1 KiB each, with room to spare. */
export const MAX_RECEIPT_BYTES = 64 * 1024;

/** Run states that produce a receipt (docs/wire.md "Enumerations": as for runs). */
export const RECEIPT_STATES = ['completed', 'completed_with_omissions'] as const;
export type ReceiptState = (typeof RECEIPT_STATES)[number];

/**
 * A row's outcome: `passed`, or for an optional step that did not pass, the step state that made
 * it an omission (failed, unavailable, uncertain, skipped).
 */
export const RECEIPT_TASK_OUTCOMES = ['passed', 'failed', 'unavailable', 'uncertain', 'skipped'] as const;
export type ReceiptTaskOutcome = (typeof RECEIPT_TASK_OUTCOMES)[number];

/** The outcomes of a collector row: a transfer was imported, so the step was not skipped. */
const COLLECTOR_ROW_OUTCOMES: readonly ReceiptTaskOutcome[] = ['passed', 'failed', 'unavailable', 'uncertain'];

/**
 * The receipt outcome of an imported record's outcome: a command record's own (`passed`,
 * `failed`, `unavailable`, `uncertain`), and a review record's `incomplete` as `failed` (as a
 * server-executed review step that did not pass ends `failed`). The authority writing a row and
 * the offline verifier comparing a signed record with it both map through this one function.
 */
export function receiptOutcomeOf(recordOutcome: string): ReceiptTaskOutcome {
  if (recordOutcome === 'incomplete') return 'failed';
  if ((COLLECTOR_ROW_OUTCOMES as readonly string[]).includes(recordOutcome)) return recordOutcome as ReceiptTaskOutcome;
  throw new AgentscmError(
    'RECEIPT_INVALID',
    `an imported record has outcome ${recordOutcome}, which no receipt row can name`,
    { hint: 'a record outcome is passed, failed, incomplete, unavailable or uncertain' },
  );
}

/** The receipt's subject: the target subject and the compiled plan it completed. */
export interface ReceiptSubject extends TargetSubject {
  readonly plan_digest: string;
}

interface ReceiptTaskBase {
  readonly task_id: string;
  readonly task_digest: string;
  readonly step_id: string;
  readonly required: boolean;
  readonly outcome: ReceiptTaskOutcome;
}

/** The evidence of an imported collector task. */
export interface ReceiptCollectorEvidence {
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly fence: bigint;
  /** Plain SHA-256 of the whole signed envelope as it was imported. */
  readonly transfer_digest: string;
  readonly collector_profile_id: string;
  readonly registration_id: string;
  readonly registration_epoch: bigint;
  readonly verification_key_id: string;
  readonly origin: GrantOrigin;
}

/** The fields only a collector row has, in declared order. */
export const COLLECTOR_ROW_FIELDS = [
  'attempt_id',
  'attempt_digest',
  'fence',
  'transfer_digest',
  'collector_profile_id',
  'registration_id',
  'registration_epoch',
  'verification_key_id',
  'origin',
] as const;

export type ReceiptTask =
  | ReceiptTaskBase
  | (ReceiptTaskBase & ReceiptCollectorEvidence)
  | (ReceiptTaskBase & { readonly result_digest: string });

/** docs/wire.md "Receipt v2", fields in declared (encoding) order. */
export interface WorkflowReceiptV2 {
  readonly version: 2;
  readonly authority_id: string;
  readonly repository_id: string;
  readonly workflow_profile: string;
  readonly subject: ReceiptSubject;
  readonly state: ReceiptState;
  readonly tasks: readonly ReceiptTask[];
}

/** The row kind of a task: which evidence it names. */
export function receiptTaskKind(task: ReceiptTask): 'collector' | 'source_paths' | 'plain' {
  if ('transfer_digest' in task) return 'collector';
  if ('result_digest' in task) return 'source_paths';
  return 'plain';
}

export const RECEIPT_V2_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'authority_id', 'repository_id', 'workflow_profile', 'subject', 'state', 'tasks'],
  properties: {
    version: { type: 'integer', const: RECEIPT_VERSION },
    authority_id: AUTHORITY_ID_SCHEMA,
    repository_id: REPOSITORY_SCHEMA,
    workflow_profile: ID_SCHEMA,
    subject: {
      type: 'object',
      additionalProperties: false,
      required: [...SUBJECT_BASE_FIELDS, 'target', 'requirement_digest', 'plan_digest'],
      properties: {
        ...SUBJECT_BASE_PROPERTIES,
        target: ID_SCHEMA,
        requirement_digest: HEX64_SCHEMA,
        plan_digest: HEX64_SCHEMA,
      },
    },
    state: { type: 'string', enum: [...RECEIPT_STATES] },
    tasks: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_RECEIPT_TASKS,
      items: {
        // One closed object with every optional field; which combination is allowed (collector
        // evidence complete, result_digest alone, or neither) is checked after the schema, so
        // that a missing collector field is named rather than lost among anyOf branches.
        type: 'object',
        additionalProperties: false,
        required: ['task_id', 'task_digest', 'step_id', 'required', 'outcome'],
        properties: {
          task_id: ID_SCHEMA,
          task_digest: HEX64_SCHEMA,
          step_id: ID_SCHEMA,
          required: { type: 'boolean' },
          outcome: { type: 'string', enum: [...RECEIPT_TASK_OUTCOMES] },
          attempt_id: ID_SCHEMA,
          attempt_digest: HEX64_SCHEMA,
          fence: POSITIVE_U64_SCHEMA,
          transfer_digest: HEX64_SCHEMA,
          collector_profile_id: HEX64_SCHEMA,
          registration_id: ID_SCHEMA,
          registration_epoch: U64_SCHEMA,
          verification_key_id: HEX64_SCHEMA,
          origin: ORIGIN_SCHEMA,
          result_digest: HEX64_SCHEMA,
        },
      },
    },
  },
} as const;

const receiptDecoder = defineDecoder<WorkflowReceiptV2>('agent-task.workflow-receipt-v2', RECEIPT_V2_SCHEMA, {
  versionField: 'version',
  supportedVersions: [RECEIPT_VERSION],
});

function invalid(message: string, pointer: string, hint: string): never {
  throw new AgentscmError('RECEIPT_INVALID', `${pointer}: ${message}`, { hint, details: { pointer } });
}

/**
 * The rules beyond the schema: each row is plain, a complete collector row (any outcome but
 * skipped) or a source_paths row (passed only); task and step ids are unique; `completed` means
 * every task passed, `completed_with_omissions` that every required task passed and at least
 * one optional task did not.
 */
export function checkReceipt(receipt: WorkflowReceiptV2): WorkflowReceiptV2 {
  const taskIds = new Set<string>();
  const stepIds = new Set<string>();
  let omissions = 0;
  receipt.tasks.forEach((task, index) => {
    const at = `/tasks/${index}`;
    const fields = task as unknown as Record<string, unknown>;
    const present = COLLECTOR_ROW_FIELDS.filter((field) => fields[field] !== undefined);
    if (present.length > 0 && present.length < COLLECTOR_ROW_FIELDS.length) {
      const missing = COLLECTOR_ROW_FIELDS.filter((field) => fields[field] === undefined);
      invalid(
        `a collector row names ${present.join(', ')} but not ${missing.join(', ')}`,
        at,
        'a collector row names its attempt, fence, transfer, profile, registration and origin together',
      );
    }
    if (present.length > 0 && fields.result_digest !== undefined) {
      invalid(
        'a row names both collector evidence and result_digest',
        at,
        'a collector row and a source_paths row are different rows',
      );
    }
    if (receiptTaskKind(task) === 'source_paths' && task.outcome !== 'passed') {
      invalid(
        `a row with a result_digest has outcome ${task.outcome}`,
        at,
        'only a passed source_paths task names its result digest',
      );
    }
    if (receiptTaskKind(task) === 'collector' && !COLLECTOR_ROW_OUTCOMES.includes(task.outcome)) {
      invalid(
        `a row with a transfer has outcome ${task.outcome}`,
        at,
        'a collector row is passed, failed, unavailable or uncertain: its transfer was imported, so the step was not ' +
          'skipped',
      );
    }
    if (taskIds.has(task.task_id))
      invalid(`task ${task.task_id} is listed twice`, `${at}/task_id`, 'list each task of the plan once');
    if (stepIds.has(task.step_id))
      invalid(`step ${task.step_id} is listed twice`, `${at}/step_id`, 'one row per plan step');
    taskIds.add(task.task_id);
    stepIds.add(task.step_id);
    if (task.outcome !== 'passed') {
      if (task.required)
        invalid(
          `required task ${task.task_id} is ${task.outcome}`,
          `${at}/outcome`,
          'a receipt is written only when every required task passed',
        );
      omissions++;
    }
  });
  if (receipt.state === 'completed' && omissions > 0) {
    invalid(
      `state is completed but ${omissions} optional task(s) did not pass`,
      '/state',
      'the state is completed_with_omissions when an optional task did not pass',
    );
  }
  if (receipt.state === 'completed_with_omissions' && omissions === 0) {
    invalid(
      'state is completed_with_omissions but every task passed',
      '/state',
      'the state is completed when every task passed',
    );
  }
  return receipt;
}

/** Strict decoding of a v2 receipt (docs/wire.md "Receipt v2"). */
export function decodeReceiptV2(bytes: Uint8Array): WorkflowReceiptV2 {
  return checkReceipt(receiptDecoder.decode(bytes, MAX_RECEIPT_BYTES));
}

/** Strict validation of an already parsed receipt (the input is not modified). */
export function validateReceiptV2(value: JsonValue): WorkflowReceiptV2 {
  return checkReceipt(receiptDecoder.validate(value));
}

function taskToJson(task: ReceiptTask): JsonObject {
  const row: JsonObject = {
    task_id: task.task_id,
    task_digest: task.task_digest,
    step_id: task.step_id,
    required: task.required,
    outcome: task.outcome,
  };
  if ('transfer_digest' in task) {
    row.attempt_id = task.attempt_id;
    row.attempt_digest = task.attempt_digest;
    row.fence = task.fence;
    row.transfer_digest = task.transfer_digest;
    row.collector_profile_id = task.collector_profile_id;
    row.registration_id = task.registration_id;
    row.registration_epoch = task.registration_epoch;
    row.verification_key_id = task.verification_key_id;
    row.origin = originToJson(task.origin);
  } else if ('result_digest' in task) {
    row.result_digest = task.result_digest;
  }
  return row;
}

/** Canonical (declared-order) JSON of a receipt. */
export function receiptV2ToJson(receipt: WorkflowReceiptV2): JsonObject {
  const { subject } = receipt;
  return {
    version: receipt.version,
    authority_id: receipt.authority_id,
    repository_id: receipt.repository_id,
    workflow_profile: receipt.workflow_profile,
    subject: {
      change_id: subject.change_id,
      change_version: subject.change_version,
      revision: subject.revision,
      context_digest: subject.context_digest,
      policy_epoch: subject.policy_epoch,
      target: subject.target,
      requirement_digest: subject.requirement_digest,
      plan_digest: subject.plan_digest,
    },
    state: receipt.state,
    tasks: receipt.tasks.map(taskToJson),
  };
}

/** The canonical receipt bytes (what is stored and digested). */
export function encodeReceiptV2(receipt: WorkflowReceiptV2): Buffer {
  return encodeCanonical(receiptV2ToJson(receipt));
}

/** The receipt digest: domain `agentscm.workflow-receipt.v2` over the canonical bytes. */
export function receiptV2Digest(receipt: WorkflowReceiptV2): string {
  return domainDigest(DOMAINS.receipt, encodeReceiptV2(receipt));
}
