/**
 * The read-only run projection (docs/skill-workflows.md "Status view": status shows state,
 * per-step results and observations, the execution member of command steps and "admission":
 * "not_assessed"; it never creates a missing journal or store; historical state is kept apart
 * from present source applicability). Nothing here writes.
 */
import type { ShownOutputTail, ShownStreamCuts } from '../contracts/collector/output-tail.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import type { WorkflowDefinition } from '../contracts/workflow-definition.js';
import { findChange } from '../native/changes.js';
import { checkGenericId } from '../native/checks.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { hasRevision } from '../native/revisions.js';
import type { Store } from '../native/store-handle.js';
import { isStoreInitialized, readTransaction, type Authority } from '../native/store.js';
import { getCommandAttemptForStep } from './command-attempts.js';
import { attemptOutputTail } from './command-output-tail.js';
import {
  isTerminalRunState,
  journalRead,
  type Journal,
  type RunRecord,
  type RunState,
  type StepKind,
  type StepState,
} from './journal.js';
import { isLeaseLive, readRunLease } from './lease.js';
import { loadRunModel, stepResultValue } from './run-model.js';

export interface StepExecutionView {
  readonly attempt_id: string;
  readonly generation: bigint;
  readonly state: string;
  readonly outcome: string | null;
  readonly record_digest: string | null;
  /**
   * An attempt that finished without passing: the last lines of its stdout and stderr (40 lines,
   * 4 KiB, escaped); null otherwise.
   */
  readonly output_tail: ShownOutputTail | null;
  /** Per stream, whether output_tail leaves earlier output of it out; null with output_tail. */
  readonly output_tail_cut: ShownStreamCuts | null;
}

export interface StepView {
  readonly id: string;
  readonly position: number;
  readonly kind: StepKind;
  readonly required: boolean;
  readonly needs: readonly string[];
  /** `not_run` is a pending step of a run that ended. */
  readonly state: StepState | 'not_run';
  readonly started_at_ms: number | null;
  readonly finished_at_ms: number | null;
  readonly result: JsonValue;
  /** Command steps: the newest durable attempt, or null before one was reserved. Other kinds: null. */
  readonly execution: StepExecutionView | null;
}

export interface ControllerView {
  /** True while another controller holds a live journal lease on this run. */
  readonly active: boolean;
  readonly operation: string | null;
  readonly pid: number | null;
  readonly expires_at_ms: number | null;
}

export interface RunView {
  readonly run_id: string;
  readonly name: string;
  readonly state: RunState;
  readonly state_reason: string | null;
  /** A standalone run is an observation, never an approval (docs/skill-workflows.md "Status view"). */
  readonly admission: 'not_assessed';
  readonly plan_digest: string;
  readonly skill_digest: string;
  readonly source: { readonly repository: string; readonly revision: string; readonly policy_epoch: bigint };
  /**
   * Present applicability: the revision still exists and the policy epoch is current; null when the
   * store cannot be read.
   */
  readonly source_current: boolean | null;
  readonly controller: ControllerView;
  readonly counts: Readonly<Record<StepState | 'not_run', number>>;
  readonly steps: readonly StepView[];
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

/**
 * Present applicability: the revision still exists, the policy epoch is current, and every
 * Change a command step binds is still at the bound version (a Change that moved on makes
 * the run's source no longer current).
 */
function sourceCurrent(auth: Authority | null, run: RunRecord, definition: WorkflowDefinition): boolean | null {
  if (auth === null) return null;
  try {
    return readTransaction(auth, () => {
      if (
        !hasRevision(auth, run.repository, run.revision) ||
        currentPolicyEpoch(auth, run.repository) !== run.policy_epoch
      )
        return false;
      for (const step of definition.steps) {
        if (step.action.kind !== 'command') continue;
        const change = findChange(auth, step.action.change.repository, step.action.change.id);
        if (
          change === null ||
          change.current_version !== step.action.change_version ||
          change.current_revision !== run.revision
        )
          return false;
      }
      return true;
    });
  } catch (error) {
    if (isAgentscmError(error) && error.code === 'REPOSITORY_NOT_FOUND') return false;
    return null;
  }
}

/** Project one run (call inside a journal read snapshot). */
export function projectRun(journal: Journal, runId: string, auth: Authority | null): RunView {
  const model = loadRunModel(journal, runId);
  const { run } = model;
  const terminal = isTerminalRunState(run.state);
  const counts: Record<StepState | 'not_run', number> = {
    pending: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
    unavailable: 0,
    uncertain: 0,
    skipped: 0,
    not_run: 0,
  };
  const steps = model.steps.map((step): StepView => {
    const state = terminal && step.state === 'pending' ? 'not_run' : step.state;
    counts[state]++;
    let execution: StepExecutionView | null = null;
    if (step.kind === 'command') {
      const attempt = getCommandAttemptForStep(journal.db, runId, step.step_id);
      if (attempt !== null) {
        const tail = attemptOutputTail(journal.db, attempt);
        execution = {
          attempt_id: attempt.attempt_id,
          generation: attempt.generation,
          state: attempt.state,
          outcome: attempt.outcome,
          record_digest: attempt.record_digest,
          output_tail: tail?.output_tail ?? null,
          output_tail_cut: tail?.output_tail_cut ?? null,
        };
      }
    }
    return {
      id: step.step_id,
      position: step.position,
      kind: step.kind,
      required: step.required,
      needs: step.needs,
      state,
      started_at_ms: step.started_at_ms,
      finished_at_ms: step.finished_at_ms,
      result: stepResultValue(step),
      execution,
    };
  });
  const lease = readRunLease(journal, runId);
  const live = lease !== null && lease.pid !== process.pid && isLeaseLive(lease, Date.now());
  return {
    run_id: run.run_id,
    name: run.name,
    state: run.state,
    state_reason: run.state_reason,
    admission: 'not_assessed',
    plan_digest: run.plan_digest,
    skill_digest: run.skill_digest,
    source: { repository: run.repository, revision: run.revision, policy_epoch: run.policy_epoch },
    source_current: sourceCurrent(auth, run, model.definition),
    controller: {
      active: live,
      operation: live ? lease.operation : null,
      pid: live ? lease.pid : null,
      expires_at_ms: live ? lease.expires_at_ms : null,
    },
    counts,
    steps,
    created_at_ms: run.created_at_ms,
    updated_at_ms: run.updated_at_ms,
  };
}

/**
 * `skill-workflow status RUN_ID`: read-only. A missing journal is WORKFLOW_JOURNAL_NOT_INITIALIZED
 * and nothing is created; the native store is consulted only when it exists.
 */
export function readRunStatus(store: Store, runId: string): RunView {
  checkGenericId(runId, 'run ID');
  const journal = store.requireJournal();
  let auth: Authority | null = null;
  try {
    if (isStoreInitialized(store.dataDir)) {
      try {
        auth = store.authority();
      } catch (error) {
        if (!isAgentscmError(error)) throw error;
        auth = null;
      }
    }
    const opened = auth;
    return journalRead(journal, () => projectRun(journal, runId, opened));
  } catch (error) {
    if (isAgentscmError(error) && error.code === 'STORE_BUSY') {
      throw new AgentscmError('STORE_BUSY', `${error.message}: a workflow controller is writing this journal`, {
        hint: 'retry after that operation finishes',
        cause: error,
      });
    }
    throw error;
  }
}
