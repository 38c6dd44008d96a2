/**
 * The runner loop (docs/skill-workflows.md "Runs"): under the run lease, record finished
 * command attempts, revalidate the stored binding, then execute up to the budget's steps one
 * at a time, each committed in its own transaction before the next starts; a recorded step or
 * a reserved command attempt is never run again.
 */
import { AgentscmError } from '../contracts/errors.js';
import { isJsonObject, type JsonObject } from '../contracts/json/json-value.js';
import { decodeWorkflowDefinition } from '../contracts/workflow-definition.js';
import type { Authority } from '../native/store.js';
import { getCommandAttemptForStep } from './command-attempts.js';
import { isTerminalRunState, journalRead, journalWrite, type Journal, type RunRecord } from './journal.js';
import { releaseRunLease, type LeaseHolder } from './lease.js';
import { compileWorkflow, type CompiledPlan } from './plan.js';
import { bindingChanged, isBindingFailure, reviewRuntimeNotConfigured, runtimeNotConfigured } from './run-errors.js';
import { loadRunModel, stepResultValue, type RunModel, type RunModelStep } from './run-model.js';
import {
  commitStep,
  haltOnBindingChange,
  storeDerivedState,
  type OnBindingChange,
  type Session,
} from './run-session.js';
import { projectRun, type RunView } from './status.js';
import { attemptToResult, executeCommand } from './steps/command.js';
import { executeRequireCapability } from './steps/require-capability.js';
import { executeReview } from './steps/review.js';
import { executeSourcePaths } from './steps/source-paths.js';

/** Why an advance stopped without finishing the run. */
export interface AdvanceWaiting {
  readonly step: string;
  readonly reason: 'command_attempt_unfinished' | 'interrupted';
  readonly attempt_id: string | null;
  readonly message: string;
}

export interface AdvanceReport extends RunView {
  /** Steps executed by this call (skips and reconciliations are not counted). */
  readonly executed: number;
  readonly waiting: AdvanceWaiting | null;
}

/** What one locked advance did: steps executed, and why it stopped early (or null). */
export interface AdvanceOutcome {
  readonly executed: number;
  readonly waiting: AdvanceWaiting | null;
}

/**
 * Recompile the stored definition against the current authority and require the same plan
 * (docs/skill-workflows.md "Runs": resume revalidates the stored definition, native repository,
 * revision, current policy epoch and packaged skill bytes).
 */
export function revalidateRun(auth: Authority, run: RunRecord): CompiledPlan {
  let plan: CompiledPlan;
  try {
    plan = compileWorkflow(auth, decodeWorkflowDefinition(run.definition));
  } catch (error) {
    if (isBindingFailure(error)) throw bindingChanged(run.run_id, error);
    throw error;
  }
  if (plan.digest !== run.plan_digest) {
    throw bindingChanged(
      run.run_id,
      new AgentscmError(
        'WORKFLOW_BINDING_CHANGED',
        `the plan compiles to ${plan.digest}, not the retained ${run.plan_digest}`,
      ),
    );
  }
  return plan;
}

/** The record digest a recorded command step result names, or null. */
function recordedDigestOf(step: RunModelStep): string | null {
  const value = stepResultValue(step);
  const digest = isJsonObject(value) ? value.record_digest : undefined;
  return typeof digest === 'string' ? digest : null;
}

/**
 * Record every running command step whose durable attempt has finished, from its retained
 * result and without running anything (docs/skill-workflows.md "Runs": recovery can finalize
 * already-recorded terminal steps after a policy change without rerunning source checks). An
 * `uncertain` step follows its attempt when reconciliation appended a newer record to it.
 */
function reconcileFinishedAttempts(session: Session, model: RunModel): void {
  for (const step of model.steps) {
    if (step.kind !== 'command' || (step.state !== 'running' && step.state !== 'uncertain')) continue;
    const attempt = getCommandAttemptForStep(session.journal.db, session.runId, step.step_id);
    if (attempt === null || attempt.state === 'running') continue;
    if (step.state === 'uncertain' && attempt.record_digest === recordedDigestOf(step)) continue;
    commitStep(
      session,
      step.step_id,
      [step.state],
      attempt.state,
      attemptToResult(attempt),
      step.started_at_ms ?? session.now(),
      true,
    );
  }
}

/** The first non-terminal step of `kind` that can still be reached (no dependency ended badly), or null. */
export function reachableStep(model: RunModel, kind: 'command' | 'review'): RunModelStep | null {
  const dead = new Set<string>();
  for (const step of model.steps) {
    const open = step.state === 'pending' || step.state === 'running';
    if (!open) {
      if (step.state !== 'succeeded') dead.add(step.step_id);
      continue;
    }
    if (step.needs.some((need) => dead.has(need))) {
      dead.add(step.step_id);
      continue;
    }
    if (step.kind === kind) return step;
  }
  return null;
}

function markSkipped(session: Session, step: RunModelStep, failedNeed: RunModelStep): void {
  const json: JsonObject = {
    reason: `dependency "${failedNeed.step_id}" is ${failedNeed.state}`,
    dependency: failedNeed.step_id,
    dependency_state: failedNeed.state,
  };
  commitStep(session, step.step_id, ['pending'], 'skipped', json, session.now(), false, 'crash-safe');
}

/** The locked part of every advance: reconcile, revalidate, then execute up to `budget` steps. */
export async function advanceLocked(
  session: Session,
  budget: number,
  validated: CompiledPlan | null,
  onBindingChange: OnBindingChange,
): Promise<AdvanceOutcome> {
  let model = journalRead(session.journal, () => loadRunModel(session.journal, session.runId));
  reconcileFinishedAttempts(session, model);
  journalWrite(session.journal, () => storeDerivedState(session));
  model = journalRead(session.journal, () => loadRunModel(session.journal, session.runId));
  if (isTerminalRunState(model.run.state) || budget === 0) return { executed: 0, waiting: null };
  let plan: CompiledPlan;
  try {
    plan = validated ?? revalidateRun(session.auth, model.run);
  } catch (error) {
    haltOnBindingChange(session, error, onBindingChange);
    return { executed: 0, waiting: null };
  }
  const command = session.ctx.runtime === undefined ? reachableStep(model, 'command') : null;
  if (command !== null) throw runtimeNotConfigured(command.step_id);
  const review = session.ctx.reviewRuntime === undefined ? reachableStep(model, 'review') : null;
  if (review !== null) throw reviewRuntimeNotConfigured(review.step_id);
  const byId = new Map(plan.steps.map((step) => [step.id, step]));
  let executed = 0;
  for (;;) {
    if (session.ctx.signal?.aborted === true) {
      // The report names the state the interruption left: a run that ended (its command was
      // cancelled, failed or became uncertain) has nothing to resume.
      model = journalRead(session.journal, () => loadRunModel(session.journal, session.runId));
      if (model.run.state !== 'running') return { executed, waiting: null };
      const next = model.steps.find((s) => s.state === 'pending' || s.state === 'running');
      return {
        executed,
        waiting: {
          step: next?.step_id ?? '',
          reason: 'interrupted',
          attempt_id: null,
          message: 'interrupted by a signal before the run ended; resume the run to continue',
        },
      };
    }
    model = journalRead(session.journal, () => loadRunModel(session.journal, session.runId));
    if (model.run.state !== 'running') return { executed, waiting: null };
    const next = model.steps.find((s) => s.state === 'pending' || s.state === 'running');
    if (next === undefined) return { executed, waiting: null };
    const planned = byId.get(next.step_id);
    if (planned === undefined)
      throw new AgentscmError('WORKFLOW_JOURNAL_INCONSISTENT', `step "${next.step_id}" is not in the compiled plan`);
    if (next.state === 'running' && next.kind === 'command') {
      const attempt = getCommandAttemptForStep(session.journal.db, session.runId, next.step_id);
      if (attempt !== null && attempt.state === 'running') {
        return {
          executed,
          waiting: {
            step: next.step_id,
            reason: 'command_attempt_unfinished',
            attempt_id: attempt.attempt_id,
            message:
              `command attempt ${attempt.attempt_id} of step "${next.step_id}" did not finish; it is not run again` +
              ` — use \`agentscm skill-workflow recover ${session.runId} ${next.step_id}` +
              ' --docker PATH --docker-socket PATH`',
          },
        };
      }
      if (attempt !== null) {
        commitStep(
          session,
          next.step_id,
          ['running'],
          attempt.state,
          attemptToResult(attempt),
          next.started_at_ms ?? session.now(),
          true,
        );
        continue;
      }
    }
    const steps = new Map(model.steps.map((s) => [s.step_id, s]));
    const unmet = next.needs
      .map((need) => steps.get(need))
      .find((dep) => dep !== undefined && dep.state !== 'succeeded');
    if (unmet !== undefined) {
      if (unmet.state === 'pending' || unmet.state === 'running')
        throw new AgentscmError(
          'INTERNAL',
          `step "${next.step_id}" is ordered before its dependency "${unmet.step_id}"`,
        );
      markSkipped(session, next, unmet);
      continue;
    }
    if (executed >= budget) return { executed, waiting: null };
    const action = planned.action;
    session.ctx.onProgress?.(`step ${planned.id} (${action.kind}): running`);
    try {
      if (action.kind === 'source_paths') await executeSourcePaths(session, model.run, { ...planned, action });
      else if (action.kind === 'require_capability') await executeRequireCapability(session, { ...planned, action });
      else if (action.kind === 'review') await executeReview(session, model.run, { ...planned, action }, next);
      else await executeCommand(session, model.run, { ...planned, action }, next);
    } catch (error) {
      haltOnBindingChange(session, error, onBindingChange);
      return { executed, waiting: null };
    }
    executed++;
  }
}

/** Run `body` holding the run lease `holder` took, and release the lease however it ends. */
export function withLease<T>(journal: Journal, runId: string, holder: LeaseHolder, body: () => Promise<T>): Promise<T> {
  return (async () => {
    try {
      return await body();
    } finally {
      try {
        journalWrite(journal, () => releaseRunLease(journal, runId, holder));
      } catch {
        // The lease expires on its own; a failed release must not hide the real outcome.
      }
    }
  })();
}

/** The run's view after an advance, with what the advance did. */
export function report(
  session: Pick<Session, 'journal' | 'runId'>,
  outcome: AdvanceOutcome,
  auth: Authority | null,
): AdvanceReport {
  const view = journalRead(session.journal, () => projectRun(session.journal, session.runId, auth));
  return { ...view, executed: outcome.executed, waiting: outcome.waiting };
}
