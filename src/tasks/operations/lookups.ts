/**
 * Lookups shared by the task operations: the current derivation of the context's subject, a task
 * by id (retained, else derived), and the retained task and attempt a request names.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { WorkflowTask } from '../../contracts/task/task.js';
import type { Journal } from '../../workflows/journal.js';
import { findTaskWithAttempt, type RetainedAttempt } from '../attempt-rows.js';
import type { TaskContext } from '../context.js';
import { deriveSubject, findDerivedTask, type DerivedSubject } from '../derive.js';
import { findRetainedTask, type RetainedTask } from '../journal-rows.js';
import { readAuthority, readJournal } from '../transition.js';
import { requireAttempt, requireTaskDigest, requireTaskInScope, taskNotRetained } from './checks.js';

function subjectSelection(ctx: TaskContext) {
  if (ctx.subject === undefined) {
    throw new AgentscmError(
      'TASK_SUBJECT_REQUIRED',
      'this operation derives the tasks of a subject and needs its Change and review context',
      {
        hint:
          'pass the Change id and the context digest of its current version (agent-task call --change ID ' +
          '--context DIGEST)',
      },
    );
  }
  return {
    repository: ctx.repository,
    profile: ctx.profile,
    target: ctx.target,
    change_id: ctx.subject.change_id,
    context_digest: ctx.subject.context_digest,
  };
}

/** Derive the current subject of the context (read-only authority snapshot). */
export function deriveCurrent(ctx: TaskContext): DerivedSubject {
  const selection = subjectSelection(ctx);
  return readAuthority(ctx, (auth) => deriveSubject(auth, selection));
}

/** A task by id: the retained canonical task when the journal has it, else the current derivation. */
export function locateTask(ctx: TaskContext, taskId: string): { task: WorkflowTask; digest: string } {
  const retained = readJournal(
    ctx,
    () => null,
    (journal) => findRetainedTask(journal, taskId),
  );
  if (retained !== null) {
    requireTaskInScope(ctx, retained.task);
    return { task: retained.task, digest: retained.digest };
  }
  const derived = deriveCurrent(ctx);
  const found = findDerivedTask(derived, taskId);
  return { task: found.task, digest: found.digest };
}

/**
 * The retained task and attempt a request names, read by one statement: the task is checked
 * first (TASK_NOT_FOUND, TASK_BINDING_MISMATCH), then `between` (a check of the task that
 * precedes the attempt's), then the attempt (TASK_ATTEMPT_NOT_FOUND, TASK_BINDING_MISMATCH).
 */
export function retainedTaskAndAttempt(
  ctx: TaskContext,
  journal: Journal,
  names: {
    readonly task_id: string;
    readonly task_digest: string;
    readonly attempt_id: string;
    readonly attempt_digest: string;
  },
  between: (task: RetainedTask) => void = () => undefined,
): { readonly task: RetainedTask; readonly attempt: RetainedAttempt } {
  const found = findTaskWithAttempt(journal, names.task_id, names.attempt_id);
  if (found === null) throw taskNotRetained(names.task_id);
  requireTaskInScope(ctx, found.task.task);
  const task = requireTaskDigest(found.task, names.task_digest);
  between(task);
  return {
    task,
    attempt: requireAttempt(
      task,
      found.attempt === null ? null : found.attempt(),
      names.attempt_id,
      names.attempt_digest,
    ),
  };
}
