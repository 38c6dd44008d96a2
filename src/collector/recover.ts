/**
 * `skill-workflow recover RUN_ID STEP_ID` and the runtime's cancel of an unfinished attempt
 * (docs/skill-workflows.md "Command steps at run time" and "The lease and crash safety"): only
 * an interrupted command step is recovered, with its backend flags; the retained container
 * custody is reconciled under the run's journal lease before the attempt is finalized, and the
 * command never runs again. After the attempt is final, the runner's budget-0 advance records
 * the step from the retained attempt.
 */
import { AgentscmError } from '../contracts/errors.js';
import { checkGenericId } from '../native/checks.js';
import type { Store } from '../native/store-handle.js';
import { findCommandAttemptForStep } from '../workflows/command-attempts.js';
import type { CommandStepResult } from '../workflows/command-step.js';
import { getRun, journalRead, journalWrite, type RunState } from '../workflows/journal.js';
import { acquireRunLease, newLeaseHolder, releaseRunLease } from '../workflows/lease.js';
import { advance } from '../workflows/runner.js';
import { connectRuntime } from './command-step-runtime.js';
import { reconcileCommandAttempt, type CustodyReport } from './custody.js';
import type { DockerTransport } from './docker-transport.js';
import { stepResultOf } from './execution-record.js';

export interface RecoverInput {
  /** The command's Store ('write'): the journal and the runner's advance come from it. */
  readonly store: Store;
  readonly runId: string;
  readonly stepId: string;
  readonly docker: string;
  readonly dockerSocket: string;
  readonly transport?: DockerTransport;
}

export interface RecoverReport {
  readonly run_id: string;
  readonly step_id: string;
  readonly attempt_id: string;
  readonly generation: bigint;
  readonly state: CommandStepResult['state'];
  readonly outcome: string;
  readonly record_digest: string | null;
  readonly summary: string;
  /** False when the attempt had already finished and only the step was (re)recorded. */
  readonly reconciled: boolean;
  readonly custody: CustodyReport | null;
  readonly run_state: RunState;
  readonly step_state: string;
}

function noAttempt(runId: string, stepId: string): AgentscmError {
  return new AgentscmError(
    'COMMAND_ATTEMPT_NOT_FOUND',
    `step "${stepId}" of run "${runId}" has no command attempt; there is nothing to recover`,
    {
      hint: 'recover applies only to a command step whose attempt was interrupted; resume the run instead',
    },
  );
}

/** Reconcile an interrupted step's attempt without running it, then record the step. */
export async function recoverCommandStep(input: RecoverInput): Promise<RecoverReport> {
  checkGenericId(input.runId, 'run ID');
  checkGenericId(input.stepId, 'step ID');
  const { client } = await connectRuntime({
    docker: input.docker,
    dockerSocket: input.dockerSocket,
    ...(input.transport === undefined ? {} : { transport: input.transport }),
  });
  let custody: CustodyReport | null = null;
  let reconciled = false;
  let result: CommandStepResult;
  const journal = input.store.requireJournal();
  try {
    journalRead(journal, () => getRun(journal, input.runId));
    const attempt = findCommandAttemptForStep(journal.db, input.runId, input.stepId);
    if (attempt === null) throw noAttempt(input.runId, input.stepId);
    if (attempt.state === 'running' || attempt.state === 'uncertain') {
      const holder = newLeaseHolder();
      // A live controller still running this command holds the lease: WORKFLOW_JOURNAL_ACTIVE.
      journalWrite(journal, () => acquireRunLease(journal, input.runId, holder, 'recover', Date.now()));
      try {
        const outcome = await reconcileCommandAttempt(client, journal, attempt, 'interrupted');
        custody = outcome.custody;
        reconciled = outcome.reconciled;
        result = outcome.result;
      } finally {
        journalWrite(journal, () => releaseRunLease(journal, input.runId, holder));
      }
    } else {
      result = stepResultOf(attempt);
    }
  } finally {
    await client.close();
  }
  // Budget 0: executes nothing, records finished attempts into their steps.
  const report = await advance({ store: input.store }, input.runId, 0);
  const step = report.steps.find((s) => s.id === input.stepId);
  return {
    run_id: input.runId,
    step_id: input.stepId,
    attempt_id: result.attemptId,
    generation: result.generation,
    state: result.state,
    outcome: result.outcome,
    record_digest: result.recordDigest,
    summary: result.summary,
    reconciled,
    custody,
    run_state: report.state,
    step_state: step?.state ?? 'unknown',
  };
}
