/**
 * The Subject base every subject variant extends, and WorkflowTaskSubject (docs/agent-task-contract.md
 * "Types (declared field order)"): everything one task is bound to — the
 * repository, execution profile, protected target, immutable revision, Change and context,
 * policy epoch, installed requirement, compiled plan, immutable skill and workflow step.
 */
import type { JsonObject } from '../json/json-value.js';
import {
  defineTaskDecoder,
  HEX64_SCHEMA,
  ID_SCHEMA,
  REPOSITORY_SCHEMA,
  U64_SCHEMA,
  VERSION_SCHEMA,
  type TaskDecoder,
} from './common.js';

/**
 * What every subject names: one Change version, its review context, its revision and the policy
 * epoch it is judged under. Every subject variant (task, collector descriptor, receipt, approval,
 * hook) extends it; its fields are the ones compared exactly across them.
 */
export interface Subject {
  readonly change_id: string;
  readonly change_version: bigint;
  /** Immutable revision (64 lowercase hex). */
  readonly revision: string;
  /** Digest of the exact current review context of the Change version. */
  readonly context_digest: string;
  readonly policy_epoch: bigint;
}

/** The base fields in the order wire objects that start with them declare them. */
export const SUBJECT_BASE_FIELDS = [
  'change_id',
  'change_version',
  'revision',
  'context_digest',
  'policy_epoch',
] as const;

/** The JSON schema of each base field; variants compose their schemas from it. */
export const SUBJECT_BASE_PROPERTIES = {
  change_id: ID_SCHEMA,
  change_version: U64_SCHEMA,
  revision: HEX64_SCHEMA,
  context_digest: HEX64_SCHEMA,
  policy_epoch: U64_SCHEMA,
} as const;

/** A subject bound to a protected target and its installed requirement. */
export interface TargetSubject extends Subject {
  /** Protected target name. */
  readonly target: string;
  /** Digest of the installed target workflow requirement. */
  readonly requirement_digest: string;
}

/** The subject of one task: the target subject plus repository, profile, plan, skill and step. */
export interface WorkflowTaskSubject extends TargetSubject {
  readonly version: 1;
  /** Native repository id (32 lowercase hex). */
  readonly repository: string;
  /** Execution (workflow task) profile id. */
  readonly profile: string;
  /** Digest of the compiled immutable plan. */
  readonly plan_digest: string;
  /** Digest of the immutable skill package (entrypoint plus resources). */
  readonly skill_digest: string;
  /** Workflow step this task is derived from. */
  readonly step_id: string;
}

/** Field order here is the declared (hashed) order. */
export const SUBJECT_FIELDS = [
  'version',
  'repository',
  'profile',
  'target',
  'revision',
  'change_id',
  'change_version',
  'context_digest',
  'policy_epoch',
  'requirement_digest',
  'plan_digest',
  'skill_digest',
  'step_id',
] as const;

export const SUBJECT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [...SUBJECT_FIELDS],
  properties: {
    version: VERSION_SCHEMA,
    repository: REPOSITORY_SCHEMA,
    profile: ID_SCHEMA,
    target: ID_SCHEMA,
    revision: SUBJECT_BASE_PROPERTIES.revision,
    change_id: SUBJECT_BASE_PROPERTIES.change_id,
    change_version: SUBJECT_BASE_PROPERTIES.change_version,
    context_digest: SUBJECT_BASE_PROPERTIES.context_digest,
    policy_epoch: SUBJECT_BASE_PROPERTIES.policy_epoch,
    requirement_digest: HEX64_SCHEMA,
    plan_digest: HEX64_SCHEMA,
    skill_digest: HEX64_SCHEMA,
    step_id: ID_SCHEMA,
  },
} as const;

/** Canonical (declared-order) JSON of a subject. */
export function subjectToJson(subject: WorkflowTaskSubject): JsonObject {
  return {
    version: subject.version,
    repository: subject.repository,
    profile: subject.profile,
    target: subject.target,
    revision: subject.revision,
    change_id: subject.change_id,
    change_version: subject.change_version,
    context_digest: subject.context_digest,
    policy_epoch: subject.policy_epoch,
    requirement_digest: subject.requirement_digest,
    plan_digest: subject.plan_digest,
    skill_digest: subject.skill_digest,
    step_id: subject.step_id,
  };
}

/** Two subjects are the same binding (every field equal). */
export function sameSubject(a: WorkflowTaskSubject, b: WorkflowTaskSubject): boolean {
  return SUBJECT_FIELDS.every((field) => a[field] === b[field]);
}

/** Strict decoder for a standalone subject (docs/agent-task-contract.md "Types (declared field order)"). */
export const workflowTaskSubjectDecoder: TaskDecoder<WorkflowTaskSubject> = defineTaskDecoder<WorkflowTaskSubject>(
  'agent-task.workflow-task-subject',
  SUBJECT_SCHEMA,
  {
    maxBytes: 8 * 1024,
  },
);
