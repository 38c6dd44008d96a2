/**
 * `qualification` (docs/qualification.md): whether the exact subject `next` would work on qualifies now. Read-only
 * — it never finalizes, writes a receipt or changes a task — and advisory, since landing rechecks.
 * Subject currency and evidence come from one read snapshot (one authority read transaction with
 * one journal read transaction inside it): the subject is derived and checked current, then
 * admission's own decision (`decideSubject`, src/tasks/admission/decision.ts) answers — every
 * task's state and failure, the live origin grant and executor registration of every imported
 * task, the retained receipt rebuilt from the retained transfers, the command and profile checks,
 * and the server-executed path — so that qualification and approval never disagree. Each
 * retained envelope is checked against its stored length and SHA-256, which the receipt names;
 * its signature was verified strictly at import, and admission verifies it again before
 * approving or landing (`'signature'`), so the advisory answer skips that re-verification
 * (docs/qualification.md "Evidence: what is re-read").
 */
import { OUTPUT_TAIL_LIMITS, showOutputTail } from '../../contracts/collector/output-tail.js';
import { AgentscmError } from '../../contracts/errors.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import { qualificationToJson, type QualificationAnswer } from '../../contracts/task/qualification.js';
import type { Subject } from '../../contracts/task/subject.js';
import { collectorCommands, stepCollectorProfileId } from '../../native/collector-commands.js';
import { resolveRepository } from '../../native/repositories.js';
import { findReviewContext } from '../../native/review-contexts.js';
import type { Authority } from '../../native/store.js';
import type { Journal } from '../../workflows/journal.js';
import { failedOutputTailOfTask } from '../collector/transfers.js';
import { nowOf, type TaskContext } from '../context.js';
import { deriveSubject, type DerivedSubject } from '../derive.js';
import { readAuthority, readJournal } from '../transition.js';
import { decideSubject } from './decision.js';
import { withDepsLockfileFailures } from './qualification-deps.js';

export { boundFailures } from './decision.js';

/** What a caller knows beyond the subject: the agent's token file, to fill in the printed command lines. */
export interface QualificationOptions {
  readonly tokenFile?: string | undefined;
}

/**
 * The answer for a current subject: admission's decision with each retained envelope checked by its stored digest.
 * A collector_claim names the step's installed collector profile, and — with the agent's token file — carries the
 * exact claim and collect command lines (docs/agent-tasks.md "One path for the agent").
 */
function qualifyDerived(
  auth: Authority,
  ctx: TaskContext,
  journal: Journal | null,
  derived: DerivedSubject,
  nowMs: number,
  options: QualificationOptions,
): QualificationAnswer {
  const decided = decideSubject(auth, journal, derived, nowMs, 'digest').answer;
  const answer = withDepsLockfileFailures(auth, derived, withOutputTails(auth, decided));
  const next = answer.next;
  if (next.operation !== 'collector_claim') return answer;
  const entry = derived.tasks.find((task) => task.task.task_id === next.task_id);
  if (entry === undefined || entry.step.action.kind !== 'command') return answer;
  const profileId = stepCollectorProfileId(auth, {
    repository: derived.base.repository,
    workflow_profile: derived.base.profile,
    step: entry.task.subject.step_id,
  });
  if (profileId === null) return answer;
  const commands =
    options.tokenFile === undefined
      ? null
      : collectorCommands(auth, {
          data_dir: ctx.store.dataDir,
          collector_profile_id: profileId,
          change_id: derived.base.change_id,
          context_digest: derived.base.context_digest,
          task_id: next.task_id,
          target: derived.base.target,
          token_file: options.tokenFile,
        });
  return {
    ...answer,
    next: { ...next, collector_profile_id: profileId, ...(commands === null ? {} : { commands }) },
  };
}

/**
 * Each `collector_not_passed` failure with the output tail its transfer carries (docs/agent-tasks.md
 * "Status and recovery"): at most 40 lines and 4 KiB per failure, 16 KiB in all (later failures go without
 * once that is spent). Diagnostic only: the rest of the answer is admission's decision unchanged.
 */
function withOutputTails(auth: Authority, answer: QualificationAnswer): QualificationAnswer {
  if (!answer.failures.some((failure) => failure.code === 'collector_not_passed')) return answer;
  let budget: number = OUTPUT_TAIL_LIMITS.answerBytes;
  const failures = answer.failures.map((failure) => {
    if (failure.code !== 'collector_not_passed' || budget <= 0) return failure;
    const tail = failedOutputTailOfTask(auth, failure.task_id);
    if (tail === null) return failure;
    const shown = showOutputTail(tail, budget);
    budget -= Buffer.byteLength(shown.stdout, 'utf8') + Buffer.byteLength(shown.stderr, 'utf8');
    return { ...failure, output_tail: shown };
  });
  return { ...answer, failures };
}

/** The answer for a subject that is no longer current: its own revision, no tasks, checkpoint. */
function superseded(revision: string): QualificationAnswer {
  return {
    qualified: false,
    subject_current: false,
    receipt_digest: null,
    revision,
    tasks: [],
    failures: [],
    next: { operation: 'checkpoint' },
  };
}

/** The review context's revision, or null when the store has no such context. */
function contextRevision(auth: Authority, ctx: TaskContext, contextDigest: string): string | null {
  return findReviewContext(auth, resolveRepository(auth, ctx.repository).id, contextDigest)?.context.revision ?? null;
}

/** The Change and review context a qualification answers for. */
export type QualificationSubject = Pick<Subject, 'change_id' | 'context_digest'>;

/**
 * Qualify the subject `subjectOf` names, read inside the same authority snapshot as the answer
 * (the operator's command resolves its default or abbreviated context there); opens nothing for
 * writing and creates no file.
 */
export function qualifyResolved(
  ctx: TaskContext,
  subjectOf: (auth: Authority) => QualificationSubject,
  options: QualificationOptions = {},
): QualificationAnswer {
  const nowMs = nowOf(ctx);
  return readAuthority(ctx, (auth) => {
    const subject = subjectOf(auth);
    let derived: DerivedSubject;
    try {
      derived = deriveSubject(auth, {
        repository: ctx.repository,
        profile: ctx.profile,
        target: ctx.target,
        change_id: subject.change_id,
        context_digest: subject.context_digest,
      });
    } catch (error) {
      if (error instanceof AgentscmError && error.code === 'TASK_STALE') {
        const revision = contextRevision(auth, ctx, subject.context_digest);
        if (revision !== null) return superseded(revision);
      }
      throw error;
    }
    return readJournal(
      ctx,
      () => qualifyDerived(auth, ctx, null, derived, nowMs, options),
      (journal) => qualifyDerived(auth, ctx, journal, derived, nowMs, options),
    );
  });
}

/**
 * Qualify the context's subject (ctx.subject) from one read snapshot; opens nothing for writing and creates no file.
 */
export function qualify(ctx: TaskContext): QualificationAnswer {
  const subject = ctx.subject;
  if (subject === undefined) {
    throw new AgentscmError(
      'TASK_SUBJECT_REQUIRED',
      'qualification answers for a subject and needs its Change and review context',
      {
        hint: 'pass the Change id and the context digest of the version to qualify (--change ID --context DIGEST)',
      },
    );
  }
  return qualifyResolved(ctx, () => subject);
}

/** The facade operation: the answer as JSON, under the caller's guard. */
export function qualificationOperation(ctx: TaskContext): JsonValue {
  return ctx.guard(ctx.actor, 'qualification', () => qualificationToJson(qualify(ctx)));
}
