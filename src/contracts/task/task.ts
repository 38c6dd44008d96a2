/**
 * WorkflowTask (docs/agent-task-contract.md "Types (declared field order)"): a subject plus a logical task id, the
 * required/optional graph status and a compact instruction entrypoint. Its digest
 * (DOMAINS.task, canonical declared-order JSON, subject embedded) changes with every bound input.
 */
import { DOMAINS, encodedOncePerValue, type CanonicalEncoding } from '../digest.js';
import { AgentscmError } from '../errors.js';
import {
  checkEntrypoint,
  ENTRYPOINT_SCHEMA,
  entrypointToJson,
  type InstructionEntrypoint,
} from '../instruction-entrypoint.js';
import type { JsonObject } from '../json/json-value.js';
import { checkUnique, defineTaskDecoder, ID_SCHEMA, VERSION_SCHEMA, type TaskDecoder } from './common.js';
import { SUBJECT_SCHEMA, subjectToJson, type WorkflowTaskSubject } from './subject.js';

/** At most this many step dependencies per task (the workflow definition's bound). */
export const MAX_NEEDS = 32;

export interface WorkflowTask {
  readonly version: 1;
  readonly task_id: string;
  readonly subject: WorkflowTaskSubject;
  /** Required (true) or optional (false) in the workflow graph. */
  readonly required: boolean;
  /** The step's action kind (e.g. source_paths, command, review); fixes the action-class rules. */
  readonly action_kind: string;
  /** Step ids this step depends on, in plan order. */
  readonly needs: readonly string[];
  readonly entrypoint: InstructionEntrypoint;
}

export const TASK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'task_id', 'subject', 'required', 'action_kind', 'needs', 'entrypoint'],
  properties: {
    version: VERSION_SCHEMA,
    task_id: ID_SCHEMA,
    subject: SUBJECT_SCHEMA,
    required: { type: 'boolean' },
    action_kind: ID_SCHEMA,
    needs: { type: 'array', maxItems: MAX_NEEDS, items: ID_SCHEMA },
    entrypoint: ENTRYPOINT_SCHEMA,
  },
} as const;

/**
 * Structural rules of a task (docs/agent-task-contract.md "Types (declared field order)"): at least one criterion,
 * unique criteria, the entrypoint names the same task and step, no self-dependency.
 */
export function checkTask(task: WorkflowTask): void {
  checkEntrypoint(task.entrypoint);
  checkUnique(task.needs, '/needs');
  if (task.entrypoint.task_id !== task.task_id) {
    throw new AgentscmError(
      'TASK_BINDING_MISMATCH',
      `the entrypoint names task ${task.entrypoint.task_id}, the task is ${task.task_id}`,
    );
  }
  if (task.entrypoint.step_id !== task.subject.step_id) {
    throw new AgentscmError(
      'TASK_BINDING_MISMATCH',
      `the entrypoint names step ${task.entrypoint.step_id}, the subject step is ${task.subject.step_id}`,
    );
  }
  if (task.needs.includes(task.subject.step_id)) {
    throw new AgentscmError('SCHEMA_TYPE', `step ${task.subject.step_id} depends on itself`);
  }
}

/** Canonical (declared-order) JSON of a task, subject embedded. */
export function taskToJson(task: WorkflowTask): JsonObject {
  return {
    version: task.version,
    task_id: task.task_id,
    subject: subjectToJson(task.subject),
    required: task.required,
    action_kind: task.action_kind,
    needs: [...task.needs],
    entrypoint: entrypointToJson(task.entrypoint),
  };
}

/**
 * Task digest (docs/agent-task-contract.md "Types (declared field order)"; docs/wire.md domain
 * agentscm.agent-workflow-task.v1).
 */
export function taskDigest(task: WorkflowTask): string {
  return encodeTask(task).digest;
}

/**
 * The task's canonical bytes and their domain digest (taskDigest), encoded once for both and
 * remembered for the same task object: a task value is immutable (every field readonly), and
 * one task is digested again by each transition that checks a binding against it
 * (validateAssertionForTask). Callers must not modify the returned bytes.
 */
export const encodeTask: (task: WorkflowTask) => CanonicalEncoding = encodedOncePerValue(DOMAINS.task, taskToJson);

/** Strict decoder of a task (schema, then checkTask). */
export const workflowTaskDecoder: TaskDecoder<WorkflowTask> = defineTaskDecoder<WorkflowTask>(
  'agent-task.workflow-task',
  TASK_SCHEMA,
  {
    maxBytes: 512 * 1024,
    check: checkTask,
  },
);
