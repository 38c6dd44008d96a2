/**
 * Read-time projections of retained task state (docs/agent-tasks.md "Status and recovery"): expiry
 * is observed when read and never proves that execution stopped; an attempt view reports
 * currently_applicable separately from the retained outcome; a retained registered observation
 * is valid only while its registration is the current, unrevoked one; a dependency is complete
 * only through the authority's own recomputation or a valid task-bound registered observation.
 */
import { shownCollectionTail, type ShownOutputTail, type ShownStreamCuts } from '../contracts/collector/output-tail.js';
import { readTransferEnvelope } from '../contracts/collector/transfer.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { attemptToJson } from '../contracts/task/attempt.js';
import type { ExecutorBinding } from '../contracts/task/common.js';
import type { ObservedState } from '../contracts/task/recovery.js';
import { validateAssertionForTask } from '../contracts/task/result.js';
import type { WorkflowTaskSubject } from '../contracts/task/subject.js';
import type { WorkflowTask } from '../contracts/task/task.js';
import { currentRegistration, getRegistration } from '../native/executor-registry.js';
import { prepared, type Authority } from '../native/store.js';
import type { Journal } from '../workflows/journal.js';
import { assessCapability } from '../workflows/require-capability.js';
import { checkSourcePaths } from '../workflows/source-paths.js';
import { findAssertion, type RetainedAssertion } from './assertion-rows.js';
import { currentAttempt, listAttempts, type RetainedAttempt } from './attempt-rows.js';
import { collectorAuthorizationHolds, findCollectorAttempt } from './collector/attempts.js';
import { parseCanonicalRecord } from './collector/execution.js';
import { readRetainedEnvelope } from './collector/retained-envelope.js';
import { findTransferOfAttempt, type RetainedTransferRow } from './collector/transfers.js';
import type { DerivedSubject, DerivedTask } from './derive.js';
import { findRetainedTask, listRetainedTasks } from './journal-rows.js';

/** The attempt state a reader observes now. */
export type AttemptView = 'leased' | 'expired' | 'finished' | 'cancelled' | 'replaced';

/** Observed state of a retained attempt at `nowMs` (an active attempt past its lease is expired, not stopped). */
export function observeAttempt(retained: RetainedAttempt, nowMs: number): AttemptView {
  if (retained.state === 'active') return nowMs >= retained.lease_expires_at_ms ? 'expired' : 'leased';
  return retained.state;
}

/** The recovery contract's observed state of an attempt view. */
export function observedStateOf(view: AttemptView): ObservedState {
  return view;
}

/** Execution of an attempt that did not finish may still run (expiry, cancellation and supersession prove nothing). */
export function executionMayStillRun(view: AttemptView): boolean {
  return view === 'expired' || view === 'cancelled' || view === 'replaced';
}

/**
 * Whether a retained registered observation is still valid: its registration is the newest,
 * unrevoked epoch of its scope (revocation and re-enrollment invalidate it). Null for an agent
 * assertion, which is never valid evidence.
 */
export function observationValid(auth: Authority, task: WorkflowTask, retained: RetainedAssertion): boolean | null {
  const executor = retained.assertion.executor;
  if (retained.assertion.trust_class !== 'registered_executor_observation' || executor === null) return null;
  const state = currentRegistration(auth, {
    repository: task.subject.repository,
    profile: task.subject.profile,
    step: task.subject.step_id,
    executor: executor.executor_id,
  });
  return (
    state !== null &&
    state.current &&
    state.registration_id === executor.registration_id &&
    state.registration_epoch === executor.registration_epoch &&
    state.verification_key_id === executor.verification_key_id
  );
}

/**
 * The retained-assertion part of a status view (an object type, not an interface, so that it is
 * a JSON value where the status answer embeds it).
 */
export type AssertionStatusView = {
  readonly request_id: string;
  readonly trust_class: string;
  readonly outcome: string;
  readonly criteria: { readonly criterion: string; readonly outcome: string }[];
  readonly observation_digest: string | null;
  readonly registration_id: string | null;
  /** null when read without the authority. */
  readonly observation_valid: boolean | null;
  readonly qualifying: boolean;
};

/** The retained-assertion part of a status view. */
export function assertionView(
  auth: Authority | null,
  task: WorkflowTask,
  retained: RetainedAssertion | null,
): AssertionStatusView | null {
  if (retained === null) return null;
  const a = retained.assertion;
  return {
    request_id: a.request_id,
    trust_class: a.trust_class,
    outcome: a.outcome,
    criteria: a.criteria.map((row) => ({ criterion: row.criterion, outcome: row.outcome })),
    observation_digest: retained.observation_digest,
    registration_id: retained.registration_id,
    observation_valid: auth === null ? null : observationValid(auth, task, retained),
    qualifying: false,
  };
}

/** The view of one attempt in a status answer: retained facts plus the read-time observation. */
export type AttemptStatusView = {
  /** The wire encoding of the retained attempt (attemptToJson). */
  readonly attempt: JsonObject;
  readonly attempt_digest: string;
  readonly state: AttemptView;
  readonly lease_expires_at_ms: number;
  readonly supersession: { readonly old_fence: bigint; readonly new_fence: bigint } | null;
  readonly execution_uncertain: boolean;
};

/** The view of one attempt: retained facts plus the read-time observation. */
export function attemptView(retained: RetainedAttempt, nowMs: number): AttemptStatusView {
  const view = observeAttempt(retained, nowMs);
  return {
    attempt: attemptToJson(retained.attempt),
    attempt_digest: retained.digest,
    state: view,
    lease_expires_at_ms: retained.lease_expires_at_ms,
    supersession:
      retained.superseded_by_fence === null
        ? null
        : { old_fence: retained.attempt.fence, new_fence: retained.superseded_by_fence },
    execution_uncertain: executionMayStillRun(view),
  };
}

/**
 * Whether the step a task needs is complete (docs/agent-tasks.md "Dependencies": only task-bound
 * registered observations satisfying the task's criteria complete an observation dependency, and the
 * authority-validated
 * collector dependency of its trust classes): source_paths by the authority's own recomputation
 * from the immutable revision, require_capability never (this profile has no capabilities), a
 * command or review step by a finished attempt whose collector transfer was imported as passed
 * and whose claim's grant and registration are still live (a review only that way: it is
 * controller-only), a command step also by a retained registered observation that passed and
 * whose registration is still current.
 */
export function dependencyComplete(
  auth: Authority,
  journal: Journal | null,
  derived: DerivedSubject,
  needed: DerivedTask,
): boolean {
  const action = needed.step.action;
  if (action.kind === 'source_paths')
    return (
      checkSourcePaths(auth, derived.base.repository, derived.base.revision, action.expectations).state === 'succeeded'
    );
  if (action.kind === 'require_capability') return assessCapability(action.capability).available;
  if (journal === null) return false;
  const retained = findRetainedTask(journal, needed.task.task_id);
  if (retained === null || retained.digest !== needed.digest) return false;
  const attempt = currentAttempt(journal, retained);
  if (attempt === null || attempt.state !== 'finished') return false;
  // A collector attempt is finished by its validated import (docs/collector-transfer.md "Import").
  const imported = findTransferOfAttempt(auth, attempt.attempt.attempt_id);
  if (imported !== null) {
    if (imported.outcome !== 'passed') return false;
    // The live checks qualification and admission make: a revoked or rotated origin grant, or a
    // collector registration no longer current, makes the dependency incomplete again.
    const claim = findCollectorAttempt(journal, attempt.attempt.attempt_id);
    return claim !== null && collectorAuthorizationHolds(auth, claim);
  }
  // A review completes only by its replayed import (docs/review.md "Collecting a review").
  if (action.kind === 'review') return false;
  const assertion = findAssertion(journal, attempt);
  if (assertion === null || assertion.assertion.outcome !== 'passed') return false;
  // The retained assertion is checked again against its canonical task and exact stored attempt.
  try {
    validateAssertionForTask(assertion.assertion, retained.task, attempt.attempt);
  } catch {
    return false;
  }
  return observationValid(auth, needed.task, assertion) === true;
}

/** The first step `task` needs that is not complete, or null. */
export function firstIncompleteDependency(
  auth: Authority,
  journal: Journal | null,
  derived: DerivedSubject,
  task: DerivedTask,
): string | null {
  for (const need of task.task.needs) {
    const needed = derived.tasks.find((t) => t.task.subject.step_id === need);
    if (needed === undefined || !dependencyComplete(auth, journal, derived, needed)) return need;
  }
  return null;
}

/** Most tasks one dashboard page lists (docs/dashboard.md "Routes and bounds"). */
export const TASK_PAGE_MAX = 200;
/** Most attempts shown per task, newest first. */
export const TASK_PAGE_ATTEMPTS = 16;

export interface TaskPageQuery {
  readonly repository: string;
  readonly change: string | null;
  /** The cursor: the retention seq of the last task of the previous page (0 for the first). */
  readonly afterSeq: number;
  readonly limit: number;
  readonly nowMs: number;
}

/** A retained transfer in the Tasks view: its row, its signer, its execution record. */
export type TransferView = {
  readonly transfer_digest: string;
  readonly outcome: RetainedTransferRow['outcome'];
  readonly length: number;
  readonly signer: ExecutorBinding & { readonly registration_current: boolean | null };
  readonly collector_profile_id: string;
  /** The execution_record record as the transfer carries it (its wire members), or null. */
  readonly execution_record: JsonObject | null;
  /**
   * A command that did not pass: the last lines of its stdout and stderr from the transfer's
   * command_output_tail record, bounded and escaped as qualification shows them (40 lines, 4 KiB);
   * else null.
   */
  readonly output_tail: ShownOutputTail | null;
  /** Per stream, whether output_tail leaves earlier output of it out; null with output_tail. */
  readonly output_tail_cut: ShownStreamCuts | null;
};

/** One attempt of a task in the Tasks view. */
export type TaskPageAttempt = AttemptStatusView & {
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
  readonly assertion: AssertionStatusView | null;
  readonly transfer: TransferView | null;
};

/** One retained task in the Tasks view, with its newest attempts. */
export type TaskPageTask = {
  readonly seq: number;
  readonly task_id: string;
  readonly task_digest: string;
  readonly step_id: string;
  readonly change_id: string;
  readonly change_version: WorkflowTaskSubject['change_version'];
  readonly revision: string;
  readonly target: string;
  readonly policy_epoch: WorkflowTaskSubject['policy_epoch'];
  readonly context_digest: string;
  readonly required: boolean;
  readonly action_kind: string;
  readonly last_fence: bigint;
  readonly attempts: TaskPageAttempt[];
};

/** A page of the Tasks view: its tasks and the cursor of the next page (null on the last). */
export type TaskPageView = { readonly tasks: TaskPageTask[]; readonly next_cursor: string | null };

/**
 * The signed transfer's signer and its execution record as the authority retained them: the
 * header's executor binding (checked against the registration's current state now) and the
 * execution_record record parsed strictly (sizes, digests and flags, never the output itself).
 */
function transferView(auth: Authority, journal: Journal, row: RetainedTransferRow): TransferView {
  const envelope = readTransferEnvelope(readRetainedEnvelope(auth, row));
  const executor = envelope.header.executor;
  let current: boolean | null = null;
  try {
    current = getRegistration(auth, executor.registration_id).current;
  } catch {
    current = null;
  }
  const recordEntry = envelope.records.find((record) => record.kind === 'execution_record');
  return {
    transfer_digest: row.transfer_digest,
    outcome: row.outcome,
    length: row.length,
    signer: {
      registration_id: executor.registration_id,
      executor_id: executor.executor_id,
      registration_epoch: executor.registration_epoch,
      verification_key_id: executor.verification_key_id,
      registration_current: current,
    },
    collector_profile_id: envelope.header.collector_profile_id,
    execution_record:
      recordEntry === undefined
        ? null
        : parseCanonicalRecord(recordEntry.bytes, 'IMPORT_RECORD_INVALID', 'execution_record'),
    ...shownCollectionTail(envelope.records, row.outcome),
  };
}

/**
 * One page of a repository's retained tasks (the dashboard's Tasks view): each with its newest
 * attempts (fence, lease live/expired/replaced as observed at `nowMs`, retained assertion) and
 * the imported transfer of each attempt with its signer and execution record.
 */
export function taskPage(auth: Authority, journal: Journal, query: TaskPageQuery): TaskPageView {
  const limit = Math.min(Math.max(query.limit, 1), TASK_PAGE_MAX);
  const tasks = listRetainedTasks(journal, {
    repository: query.repository,
    change: query.change,
    afterSeq: query.afterSeq,
    limit: limit + 1,
  });
  const page = tasks.slice(0, limit);
  return {
    tasks: page.map((retained) => {
      const task = retained.task;
      return {
        seq: retained.seq,
        task_id: task.task_id,
        task_digest: retained.digest,
        step_id: task.subject.step_id,
        change_id: task.subject.change_id,
        change_version: task.subject.change_version,
        revision: task.subject.revision,
        target: task.subject.target,
        policy_epoch: task.subject.policy_epoch,
        context_digest: task.subject.context_digest,
        required: task.required,
        action_kind: task.action_kind,
        last_fence: retained.last_fence,
        attempts: listAttempts(journal, retained, TASK_PAGE_ATTEMPTS).map((attempt) => {
          const transfer = findTransferOfAttempt(auth, attempt.attempt.attempt_id);
          return {
            ...attemptView(attempt, query.nowMs),
            created_at_ms: attempt.created_at_ms,
            updated_at_ms: attempt.updated_at_ms,
            assertion: assertionView(auth, task, findAssertion(journal, attempt)),
            transfer: transfer === null ? null : transferView(auth, journal, transfer),
          };
        }),
      };
    }),
    next_cursor: tasks.length > limit && page.length > 0 ? String(page[page.length - 1]?.seq) : null,
  };
}

/** One retained receipt in the Receipts view (its row, `seq` its retention order). */
export type ReceiptPageRow = {
  readonly receipt_digest: string;
  readonly profile: string;
  readonly target: string;
  readonly change_id: string;
  readonly context_digest: string;
  readonly plan_digest: string;
  readonly created_at_ms: number;
  readonly seq: number;
};

/** A page of the Receipts view: its receipts and the cursor of the next page (null on the last). */
export type ReceiptPageView = { readonly receipts: ReceiptPageRow[]; readonly next_cursor: string | null };

/** Most receipts one dashboard page lists. */
export const RECEIPT_PAGE_MAX = 200;

/** One page of a repository's retained receipts in retention order after `afterRow` (the dashboard's Receipts view). */
export function receiptPage(
  auth: Authority,
  query: { readonly repository: string; readonly afterRow: number; readonly limit: number },
): ReceiptPageView {
  const limit = Math.min(Math.max(query.limit, 1), RECEIPT_PAGE_MAX);
  const rows = prepared(
    auth,
    'SELECT rowid AS row, receipt_digest, profile, target, change_id, context_digest, plan_digest, created_at_ms ' +
      'FROM collector_receipts WHERE repository = ? AND rowid > ? ORDER BY rowid LIMIT ?',
  ).all(query.repository, query.afterRow, limit + 1) as {
    row: number;
    receipt_digest: string;
    profile: string;
    target: string;
    change_id: string;
    context_digest: string;
    plan_digest: string;
    created_at_ms: number;
  }[];
  const page = rows.slice(0, limit);
  return {
    receipts: page.map(({ row, ...rest }) => ({ ...rest, seq: row })),
    next_cursor: rows.length > limit && page.length > 0 ? String(page[page.length - 1]?.row) : null,
  };
}
