/**
 * `skill-workflow cancel RUN_ID` (docs/skill-workflows.md "Runs"): a terminal state that keeps
 * every recorded observation, and the stop of a command attempt that is still running.
 */
import { AgentscmError } from '../contracts/errors.js';
import { checkGenericId } from '../native/checks.js';
import { withLease } from './advance.js';
import { getCommandAttemptForStep } from './command-attempts.js';
import type { CommandStepResult } from './command-step.js';
import { getRun, isTerminalRunState, journalRead, journalWrite, updateRunState, type Journal } from './journal.js';
import { acquireRunLease, newLeaseHolder } from './lease.js';
import { liveControllerHolds, stopLiveCommandSteps } from './live-cancel.js';
import { runTerminal } from './run-errors.js';
import { loadRunModel, type RunModelStep } from './run-model.js';
import { commitStep, type JournalSession, type RunnerContext } from './run-session.js';
import { projectRun, type RunView } from './status.js';
import { commandResultJson } from './steps/command.js';

export interface CancelReport extends RunView {
  /** False when the run was already cancelled (cancel is idempotent). */
  readonly cancelled_now: boolean;
}

/**
 * `skill-workflow cancel RUN_ID`: terminal, recorded observations intact.
 * A controller between steps sees the cancellation at its next commit and stops. A command
 * attempt that is still running needs the runtime: while its controller is alive, the run is
 * recorded cancelled, the runtime stops its containers and the controller records the attempt
 * (live-cancel.ts); with no live controller, the runtime's cancel reconciles it as recover does.
 */
export async function cancelWorkflow(ctx: RunnerContext, runId: string): Promise<CancelReport> {
  checkGenericId(runId, 'run ID');
  const now = ctx.now ?? Date.now;
  const journal = ctx.store.requireJournal();
  const view = (cancelledNow: boolean): CancelReport => ({
    ...journalRead(journal, () => projectRun(journal, runId, null)),
    cancelled_now: cancelledNow,
  });
  const model = journalRead(journal, () => loadRunModel(journal, runId));
  if (model.run.state === 'cancelled') return view(false);
  if (isTerminalRunState(model.run.state)) throw runTerminal(runId, model.run.state);
  const unfinishedSteps = (steps: readonly RunModelStep[]): RunModelStep[] =>
    steps.filter(
      (step) =>
        step.kind === 'command' &&
        step.state === 'running' &&
        getCommandAttemptForStep(journal.db, runId, step.step_id)?.state === 'running',
    );
  let unfinished = unfinishedSteps(model.steps);
  const stop = ctx.runtime?.stop?.bind(ctx.runtime);
  if (
    unfinished.length > 0 &&
    stop !== undefined &&
    journalRead(journal, () => liveControllerHolds(journal, runId, now()))
  ) {
    journalWrite(journal, () => cancelRunRow(journal, runId, now()));
    const stopped = await stopLiveCommandSteps({
      journal,
      runId,
      stepIds: unfinished.map((step) => step.step_id),
      stop: (stepId) => stop({ store: ctx.store, runId, stepId, signal: ctx.signal ?? new AbortController().signal }),
      now,
    });
    if (stopped !== 'controller_gone') return view(true);
    // The controller died before it recorded the stopped attempts: reconcile them here.
    unfinished = unfinishedSteps(journalRead(journal, () => loadRunModel(journal, runId)).steps);
  }
  if (unfinished.length > 0) await cancelUnfinished(ctx, journal, runId, unfinished, now);
  else journalWrite(journal, () => cancelRunRow(journal, runId, now()));
  return view(true);
}

/**
 * Cancel a run whose command attempts are still running and have no live controller: under the
 * run lease, the runtime's cancel stops and finalizes each attempt, then the run is cancelled
 * and the attempts recorded in one transaction.
 */
async function cancelUnfinished(
  ctx: RunnerContext,
  journal: Journal,
  runId: string,
  unfinished: readonly RunModelStep[],
  now: () => number,
): Promise<void> {
  const holder = newLeaseHolder();
  // Taking the lease fails with WORKFLOW_JOURNAL_ACTIVE while a live controller runs the command.
  journalWrite(journal, () => acquireRunLease(journal, runId, holder, 'cancel', now()));
  await withLease(journal, runId, holder, async () => {
    const cancel = ctx.runtime?.cancel?.bind(ctx.runtime);
    const first = unfinished[0] as RunModelStep;
    if (cancel === undefined) {
      throw new AgentscmError(
        'WORKFLOW_COMMAND_ATTEMPT_UNFINISHED',
        `run "${runId}" has an unfinished command attempt in step "${first.step_id}"; it is not run again` +
          ' and cancel cannot stop it without the runtime',
        {
          hint:
            'pass --docker PATH --docker-socket PATH, or run ' +
            `\`agentscm skill-workflow recover ${runId} ${first.step_id} --docker PATH --docker-socket PATH\` first`,
          details: { run_id: runId, step: first.step_id },
        },
      );
    }
    const session: JournalSession = { journal, runId, holder, now };
    const results: { step: RunModelStep; result: CommandStepResult }[] = [];
    for (const step of unfinished) {
      const signal = ctx.signal ?? new AbortController().signal;
      results.push({ step, result: await cancel({ store: ctx.store, runId, stepId: step.step_id, signal }) });
    }
    // Cancel first, in the same transaction: a cancelled run stays cancelled whatever the
    // stopped attempts ended as.
    journalWrite(journal, () => {
      cancelRunRow(journal, runId, now());
      for (const { step, result } of results)
        commitStep(
          session,
          step.step_id,
          ['running'],
          result.state,
          commandResultJson(result),
          step.started_at_ms ?? now(),
          true,
        );
    });
  });
}

function cancelRunRow(journal: Journal, runId: string, nowMs: number): void {
  const run = getRun(journal, runId);
  if (run.state === 'cancelled') return;
  if (isTerminalRunState(run.state)) throw runTerminal(runId, run.state);
  updateRunState(journal, runId, 'cancelled', 'cancelled by the operator', nowMs);
}
