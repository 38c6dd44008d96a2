/**
 * The tasks of a compiled subject (docs/agent-tasks.md "Derivation rules"): one task per step of
 * the compiled plan, with its id, instruction entrypoint (criterion, summary, references and
 * progression fixed by the step's action class) and canonical encoding. Pure: src/tasks/derive.ts
 * reads the subject from the authority and calls buildTasks.
 */
import type { InstructionEntrypoint, TaskCriterion, TaskProgression } from '../contracts/instruction-entrypoint.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { MAX_REFERENCES, type NamedReference } from '../contracts/named-reference.js';
import { TASK_CAPABILITY } from '../contracts/task/common.js';
import { subjectToJson, type WorkflowTaskSubject } from '../contracts/task/subject.js';
import { checkTask, encodeTask, type WorkflowTask } from '../contracts/task/task.js';
import { sha256Hex } from '../crypto/sha256.js';
import type { PlanStep } from '../workflows/plan.js';
import type { CompiledRequirement } from '../workflows/requirement.js';

export interface DerivedTask {
  readonly task: WorkflowTask;
  readonly digest: string;
  /** The task's canonical encoding (what the digest covers and the journal retains). */
  readonly canonical: Buffer;
  readonly step: PlanStep;
}

/** Fixed criterion, progression and summary of each action class (docs/agent-tasks.md). */
export const ACTION_CLASS_RULES = {
  source_paths: { criterion: 'source-paths', controller_only: true, progression: 'none' },
  command: { criterion: 'command', controller_only: false, progression: 'claim' },
  require_capability: { criterion: 'capability', controller_only: true, progression: 'none' },
  // Controller-only: no agent claims or asserts a review; only a collector claim under a
  // finite-review profile reaches it, and only its replayed import completes it (docs/review.md
  // "Collecting a review"); the server-executed path runs it too.
  review: { criterion: 'review', controller_only: true, progression: 'none' },
} as const satisfies Record<
  PlanStep['action']['kind'],
  { criterion: string; controller_only: boolean; progression: TaskProgression }
>;

/**
 * The task id of a subject (its step included): a digest prefix, so that one subject always
 * names the same task and any changed subject field names another one.
 */
export function taskIdOf(subject: WorkflowTaskSubject): string {
  return `t-${sha256Hex(encodeCanonical(['agentscm.agent-workflow-task-id.v1', subjectToJson(subject)])).slice(0, 40)}`;
}

function criterionFor(step: PlanStep, revision: string): TaskCriterion {
  const action = step.action;
  const rule = ACTION_CLASS_RULES[action.kind];
  let description: string;
  switch (action.kind) {
    case 'source_paths':
      description =
        `The authority recomputes the SHA-256 of ${action.expectations.length} source path(s) from ` +
        `revision ${revision}; report this criterion not_claimed.`;
      break;
    case 'command':
      description =
        `Run the command recipe ${action.recipe_path} (sha256 ${action.recipe_sha256}) against ` +
        `revision ${revision} in an isolated container and report its outcome.`;
      break;
    case 'require_capability':
      description =
        `Needs the capability ${JSON.stringify(action.capability).slice(0, 256)}, which only the ` +
        `controller can perform; report this criterion not_claimed.`;
      break;
    case 'review':
      description =
        `A bounded review of ${action.coverage.length} revision path(s) by the review controller ` +
        `under policy ${action.policy_path} (sha256 ${action.policy_sha256}); only the controller can perform ` +
        'it; report this criterion not_claimed.';
      break;
  }
  // A criterion's `required` says whether the task's own pass needs it, not whether the step is
  // required by the workflow (that is the task's `required`): the one criterion of an optional
  // step is required of its task, so a claimable optional step can pass and complete the steps
  // that need it.
  return { criterion: rule.criterion, required: true, controller_only: rule.controller_only, description };
}

function summaryFor(step: PlanStep): string {
  const kind = step.action.kind;
  const role = ACTION_CLASS_RULES[kind].controller_only ? 'controller-only' : 'claimable';
  return (
    `${step.required ? 'Required' : 'Optional'} ${role} ${kind} step "${step.id}" of the installed workflow ` +
    `requirement.`
  );
}

/**
 * Named references of a step: SKILL.md ("skill"), the command recipe ("recipe") for a command
 * step, then the other packaged resources ("resource-N", N = declared position) while at most
 * MAX_REFERENCES fit. Hashes come from the bounded compilation; nothing is read again.
 */
function referencesFor(compiled: CompiledRequirement, step: PlanStep): NamedReference[] {
  const entries = compiled.plan.skill.entries;
  const references: NamedReference[] = [];
  const used = new Set<string>();
  const add = (name: string, path: string, sha256: string): void => {
    if (references.length >= MAX_REFERENCES || used.has(path)) return;
    used.add(path);
    references.push({ name, sha256, path });
  };
  const entrypoint = entries[0];
  if (entrypoint !== undefined) add('skill', entrypoint.path, entrypoint.sha256);
  if (step.action.kind === 'command') add('recipe', step.action.recipe_path, step.action.recipe_sha256);
  entries.slice(1).forEach((entry, index) => add(`resource-${index + 1}`, entry.path, entry.sha256));
  return references;
}

/** Build the tasks of a compiled subject (pure). */
export function buildTasks(base: Omit<WorkflowTaskSubject, 'step_id'>, compiled: CompiledRequirement): DerivedTask[] {
  return compiled.plan.steps.map((step): DerivedTask => {
    const subject: WorkflowTaskSubject = { ...base, step_id: step.id };
    const taskId = taskIdOf(subject);
    const entrypoint: InstructionEntrypoint = {
      capability: TASK_CAPABILITY,
      schema_version: 1,
      task_id: taskId,
      step_id: step.id,
      workflow_digest: compiled.plan.digest,
      policy_digest: compiled.requirement.requirement_digest,
      summary: summaryFor(step),
      criteria: [criterionFor(step, base.revision)],
      references: referencesFor(compiled, step),
      progression: ACTION_CLASS_RULES[step.action.kind].progression,
    };
    const task: WorkflowTask = {
      version: 1,
      task_id: taskId,
      subject,
      required: step.required,
      action_kind: step.action.kind,
      needs: [...step.needs],
      entrypoint,
    };
    checkTask(task);
    const { canonical, digest } = encodeTask(task);
    return { task, digest, canonical, step };
  });
}
