/**
 * Cancellation of a command step whose controller is alive (docs/skill-workflows.md "Command steps
 * at run time": SIGINT and SIGTERM request collector cancellation and cleanup; cancellation is
 * terminal and the same as the underlying command/v1 collector's). The controller holds the journal
 * lease for the whole command, so `skill-workflow cancel` from another process cannot take it.
 * Instead the cancel records the run as cancelled (no lease needed, as for a controller between
 * steps), then the runtime stops the attempt's containers by custody label, and the controller,
 * which sees its container stopped and the run cancelled, records the attempt as `cancelled` and
 * ends. This waits, bounded, for that record.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { getCommandAttemptForStep } from './command-attempts.js';
import { journalRead, listStepStates, type Journal } from './journal.js';
import { isLeaseLive, LEASE_TTL_MS, readRunLease } from './lease.js';

/** How often the stop is repeated and the journal read while waiting for the controller. */
export const LIVE_CANCEL_POLL_MS = 200;

/** How long a cancel waits for a live controller to record the stopped attempts. */
export const LIVE_CANCEL_WAIT_MS = LEASE_TTL_MS;

/**
 * `recorded`: the controller recorded every stopped step. `controller_gone`: the lease holder
 * went away with a step still running (the caller reconciles it). `pending`: the controller
 * holds the run but did not record within the wait (it will when its engine answers).
 */
export type LiveCancelOutcome = 'recorded' | 'controller_gone' | 'pending';

/** True when another live controller holds the run's lease (caller's read snapshot). */
export function liveControllerHolds(journal: Journal, runId: string, nowMs: number): boolean {
  const lease = readRunLease(journal, runId);
  return lease !== null && isLeaseLive(lease, nowMs);
}

export interface StopLiveInput {
  readonly journal: Journal;
  readonly runId: string;
  readonly stepIds: readonly string[];
  /** The runtime's stop of one step (containers by custody label); returns how many it stopped. */
  readonly stop: (stepId: string) => Promise<number>;
  readonly now: () => number;
  readonly waitMs?: number;
}

/**
 * Stop the running attempts of `stepIds` and wait until their live controller has recorded
 * them. The stop is repeated while a step's attempt still runs: a container created or started
 * after one stop (the controller was between reserving and starting) is stopped by the next.
 */
export async function stopLiveCommandSteps(input: StopLiveInput): Promise<LiveCancelOutcome> {
  const { journal, runId } = input;
  const deadline = input.now() + (input.waitMs ?? LIVE_CANCEL_WAIT_MS);
  for (;;) {
    // Steps and lease in one snapshot: a controller that records and releases between two
    // reads must not look like one that went away without recording.
    const seen = journalRead(journal, () => {
      const states = new Map(listStepStates(journal, runId).map((step) => [step.step_id, step.state]));
      const open = input.stepIds.filter((stepId) => states.get(stepId) === 'running');
      const running = open.filter((stepId) => getCommandAttemptForStep(journal.db, runId, stepId)?.state === 'running');
      return { open, running, live: liveControllerHolds(journal, runId, input.now()) };
    });
    if (seen.open.length === 0) return 'recorded';
    if (!seen.live) return 'controller_gone';
    for (const stepId of seen.running) await input.stop(stepId);
    if (input.now() >= deadline) return 'pending';
    await sleep(LIVE_CANCEL_POLL_MS);
  }
}
