/**
 * What every step executor of the runner shares: the session of one locked advance, the
 * journal commit of a step result (lease renewed and run state re-derived in the same
 * transaction), marking a step started, keeping the lease while a step runs, halting a run
 * whose binding changed, and the test pause hook.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { isAgentscmError, type AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { sha256Hex } from '../crypto/sha256.js';
import type { Store } from '../native/store-handle.js';
import type { Authority } from '../native/store.js';
import type { CommandStepRuntime } from './command-step.js';
import {
  getRunHeader,
  haltRun,
  journalWrite,
  markStepPendingAgain,
  markStepRunning,
  recordStepResult,
  updateRunState,
  type Journal,
  type JournalDurability,
  type StepState,
} from './journal.js';
import { LEASE_TTL_MS, renewRunLease, type LeaseHolder } from './lease.js';
import type { ReviewStepRuntime } from './review-step.js';
import { deriveRunState, loadStepStates, type RunModelStep } from './run-model.js';

export interface RunnerContext {
  /** The caller's open Store ('write'): the runner takes the authority and the journal from it. */
  readonly store: Store;
  /** The command collector runtime; without it a reachable command step is refused. */
  readonly runtime?: CommandStepRuntime;
  /** The review runtime (controller and transport); without it a reachable review step is refused. */
  readonly reviewRuntime?: ReviewStepRuntime;
  /** SIGINT/SIGTERM: no new step starts, and a running command is asked to stop. */
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  /** Progress lines for a person watching (the command prints them on stderr). */
  readonly onProgress?: (message: string) => void;
}

/** What a journal commit needs: the run, its lease holder and the clock. */
export interface JournalSession {
  readonly journal: Journal;
  readonly runId: string;
  readonly holder: LeaseHolder;
  readonly now: () => number;
}

/** One locked advance of a run: the journal session, the runner's context and the authority. */
export interface Session extends JournalSession {
  readonly ctx: RunnerContext;
  readonly auth: Authority;
}

/**
 * Test hook (docs/skill-workflows.md "Test hooks"): AGENTSCM_WORKFLOW_TEST_PAUSE=WHERE:STEP[:MS]
 * pauses before or after that step's commit (default 600 s), printing one marker line to
 * stderr, so that tests can SIGKILL a controller or act concurrently at an exact point. The
 * pause ends early once the file named by AGENTSCM_WORKFLOW_TEST_RELEASE exists.
 */
const PAUSE_ENV = 'AGENTSCM_WORKFLOW_TEST_PAUSE';
const RELEASE_ENV = 'AGENTSCM_WORKFLOW_TEST_RELEASE';

export async function testPause(where: 'before-commit' | 'after-commit', stepId: string): Promise<void> {
  const wanted = process.env[PAUSE_ENV];
  if (wanted === undefined) return;
  const [at, step, ms] = wanted.split(':');
  if (at !== where || step !== stepId) return;
  process.stderr.write(`agentscm-test-pause ${where} ${stepId}\n`);
  const release = process.env[RELEASE_ENV];
  const deadline = Date.now() + (ms === undefined ? 600_000 : Number(ms));
  while (Date.now() < deadline && (release === undefined || !existsSync(release))) await sleep(50);
}

function stepResultBytes(result: JsonObject): { bytes: Uint8Array; sha256: string } {
  const bytes = encodeCanonical(result);
  return { bytes, sha256: sha256Hex(bytes) };
}

/** Re-derive and store the run state (caller's write transaction). */
export function storeDerivedState(session: JournalSession): void {
  const model = loadStepStates(session.journal, session.runId);
  const derived = deriveRunState(model.run.state, model.steps, model.run.halted_reason);
  if (derived.state !== model.run.state || derived.reason !== model.run.state_reason) {
    updateRunState(session.journal, session.runId, derived.state, derived.reason, session.now());
  }
}

/**
 * Record a step result in one transaction that also checks the lease and the run state and
 * re-derives the run state. Returns false (nothing written) when the run stopped running.
 * `durability` is 'crash-safe' only for the result of a pure read of immutable data
 * (source_paths, require_capability, a skip): losing it to a power loss repeats the read.
 */
export function commitStep(
  session: JournalSession,
  stepId: string,
  from: readonly StepState[],
  state: StepState,
  result: JsonObject,
  startedAtMs: number,
  recordEvenIfStopped: boolean,
  durability: JournalDurability = 'durable',
): boolean {
  const { bytes, sha256 } = stepResultBytes(result);
  return journalWrite(
    session.journal,
    () => {
      renewRunLease(session.journal, session.runId, session.holder, session.now());
      const run = getRunHeader(session.journal, session.runId);
      if (run.state !== 'running' && !recordEvenIfStopped) return false;
      recordStepResult(session.journal, session.runId, stepId, from, state, bytes, sha256, startedAtMs, session.now());
      storeDerivedState(session);
      return true;
    },
    durability,
  );
}

/**
 * Mark a pending step running (renewing the run lease in the same transaction) and answer when it
 * started; a step already running keeps its recorded start. Null when the run is no longer
 * running, so the step must not start.
 */
export function markStepStarted(session: Session, stepId: string, recorded: RunModelStep): number | null {
  if (recorded.state !== 'pending') return recorded.started_at_ms ?? session.now();
  const startedAt = session.now();
  const marked = journalWrite(session.journal, () => {
    renewRunLease(session.journal, session.runId, session.holder, session.now());
    if (getRunHeader(session.journal, session.runId).state !== 'running') return false;
    markStepRunning(session.journal, session.runId, stepId, startedAt);
    return true;
  });
  return marked ? startedAt : null;
}

/** Renew the run lease every third of its life while a step runs; `onLost` hears a failed renewal. */
export function keepRunLease(session: Session, onLost: (error: unknown) => void): NodeJS.Timeout {
  return setInterval(
    () => {
      try {
        journalWrite(session.journal, () =>
          renewRunLease(session.journal, session.runId, session.holder, session.now()),
        );
      } catch (error) {
        onLost(error);
      }
    },
    Math.floor(LEASE_TTL_MS / 3),
  );
}

/**
 * A runtime that refused a command step before reserving its attempt (image missing, engine
 * down, binding changed) ran nothing: the step goes back to pending, and a changed binding
 * halts the run (blocked, with its reason), in one transaction.
 */
export function refusedBeforeReservation(session: Session, stepId: string, error: unknown): void {
  journalWrite(session.journal, () => {
    if (!markStepPendingAgain(session.journal, session.runId, stepId)) return;
    if (isAgentscmError(error) && error.code === 'WORKFLOW_BINDING_CHANGED')
      haltRun(session.journal, session.runId, haltReason(error), session.now());
  });
}

function haltReason(error: AgentscmError): string {
  return `binding changed: ${error.message}`.slice(0, 2048);
}

/** What a changed binding does to an advance: `resume` rethrows it, `run` reports the retained state. */
export type OnBindingChange = 'throw' | 'report';

/**
 * Stop a run whose binding changed: blocked with the reason, for good. `resume` reports the
 * change as WORKFLOW_BINDING_CHANGED (rethrown); `run`, which reopens a run by its ID, returns
 * the state the run now retains (docs/skill-workflows.md "Runs": reusing an ID with the
 * same plan returns retained state).
 */
export function haltOnBindingChange(session: Session, error: unknown, onBindingChange: OnBindingChange): void {
  if (!isAgentscmError(error) || error.code !== 'WORKFLOW_BINDING_CHANGED') throw error;
  journalWrite(session.journal, () => haltRun(session.journal, session.runId, haltReason(error), session.now()));
  if (onBindingChange === 'throw') throw error;
}
