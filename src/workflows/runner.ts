/**
 * The workflow runner (spec "Local CLI"): start or reopen a run by its idempotency key,
 * advance it by a bounded number of steps under the journal lease, persist each completed step
 * in its own transaction before the next starts, revalidate the stored binding before any new
 * work, and never re-run a recorded step or a reserved command attempt.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { RECIPE_LIMITS } from '../contracts/collector/command-recipe.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { isJsonObject, type JsonObject } from '../contracts/json/json-value.js';
import { REVIEW_LIMITS } from '../contracts/review/policy.js';
import {
  decodeWorkflowDefinition,
  encodeWorkflowDefinition,
  WORKFLOW_LIMITS,
} from '../contracts/workflow-definition.js';
import { sha256Hex } from '../crypto/sha256.js';
import { checkGenericId } from '../native/checks.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { readRevisionFile } from '../native/revisions.js';
import { openAuthority, readTransaction, type Authority } from '../native/store.js';
import { getCommandAttemptForStep, type CommandAttemptSummary } from './command-attempts.js';
import { validateCommandBinding } from './command-binding.js';
import type { CommandStepResult, CommandStepRuntime } from './command-step.js';
import {
  findRun,
  getRun,
  getRunHeader,
  haltRun,
  insertRun,
  isTerminalRunState,
  journalPaths,
  journalRead,
  journalWrite,
  markStepPendingAgain,
  markStepRunning,
  openJournal,
  recordStepResult,
  updateRunState,
  type Journal,
  type JournalDurability,
  type RunRecord,
  type StepState,
} from './journal.js';
import {
  acquireRunLease,
  LEASE_TTL_MS,
  newLeaseHolder,
  releaseRunLease,
  renewRunLease,
  type LeaseHolder,
} from './lease.js';
import { liveControllerHolds, stopLiveCommandSteps } from './live-cancel.js';
import {
  compileWorkflow,
  planHasCommandSteps,
  planHasReviewSteps,
  type CompiledPlan,
  type PlanCommandAction,
  type PlanReviewAction,
  type PlanStep,
} from './plan.js';
import { assessCapability } from './require-capability.js';
import type { ReviewStepResult, ReviewStepRuntime } from './review-step.js';
import {
  deriveRunState,
  loadRunModel,
  loadStepStates,
  rememberStoredDefinition,
  stepResultValue,
  type RunModel,
  type RunModelStep,
} from './run-model.js';
import { checkSourcePaths } from './source-paths.js';
import { projectRun, type RunView } from './status.js';

export interface RunnerContext {
  readonly dataDir: string;
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

/**
 * Test hook (docs/skill-workflows.md "Test hooks"): AGENTSCM_WORKFLOW_TEST_PAUSE=WHERE:STEP[:MS]
 * pauses before or after that step's commit (default 600 s), printing one marker line to
 * stderr, so that tests can SIGKILL a controller or act concurrently at an exact point. The
 * pause ends early once the file named by AGENTSCM_WORKFLOW_TEST_RELEASE exists.
 */
const PAUSE_ENV = 'AGENTSCM_WORKFLOW_TEST_PAUSE';
const RELEASE_ENV = 'AGENTSCM_WORKFLOW_TEST_RELEASE';

async function testPause(where: 'before-commit' | 'after-commit', stepId: string): Promise<void> {
  const wanted = process.env[PAUSE_ENV];
  if (wanted === undefined) return;
  const [at, step, ms] = wanted.split(':');
  if (at !== where || step !== stepId) return;
  process.stderr.write(`agentscm-test-pause ${where} ${stepId}\n`);
  const release = process.env[RELEASE_ENV];
  const deadline = Date.now() + (ms === undefined ? 600_000 : Number(ms));
  while (Date.now() < deadline && (release === undefined || !existsSync(release))) await sleep(50);
}

function checkBudget(budget: number, minimum: number): void {
  if (!Number.isSafeInteger(budget) || budget < minimum || budget > WORKFLOW_LIMITS.maxBudget) {
    throw new AgentscmError(
      'USAGE',
      `the step budget must be an integer from ${minimum} to ${WORKFLOW_LIMITS.maxBudget}, got ${String(budget)}`,
      {
        hint: `pass --max-steps between ${Math.max(minimum, 1)} and ${WORKFLOW_LIMITS.maxBudget}`,
      },
    );
  }
}

function bindingChanged(runId: string, cause: AgentscmError): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_BINDING_CHANGED',
    `run "${runId}" cannot continue: its binding changed — [${cause.code}] ${cause.message}`,
    {
      hint: 'recorded observations are kept; start a new run with a definition bound to the current revision and policy epoch',
      details: { run_id: runId, cause_code: cause.code },
      cause,
    },
  );
}

/**
 * Recompile the stored definition against the current authority and require the same plan
 * (spec: resume "revalidates the stored definition, native repository, revision, current
 * policy epoch and packaged skill bytes").
 */
export function revalidateRun(auth: Authority, run: RunRecord): CompiledPlan {
  let plan: CompiledPlan;
  try {
    plan = compileWorkflow(auth, decodeWorkflowDefinition(run.definition));
  } catch (error) {
    if (isAgentscmError(error) && error.code !== 'STORE_BUSY' && error.code !== 'IO_ERROR' && error.code !== 'INTERNAL')
      throw bindingChanged(run.run_id, error);
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

/** What a journal commit needs: the run, its lease holder and the clock. */
interface JournalSession {
  readonly journal: Journal;
  readonly runId: string;
  readonly holder: LeaseHolder;
  readonly now: () => number;
}

interface Session extends JournalSession {
  readonly ctx: RunnerContext;
  readonly auth: Authority;
}

function stepResultBytes(result: JsonObject): { bytes: Uint8Array; sha256: string } {
  const bytes = encodeCanonical(result);
  return { bytes, sha256: sha256Hex(bytes) };
}

/** Re-derive and store the run state (caller's write transaction). */
function storeDerivedState(session: JournalSession): void {
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
function commitStep(
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

function commandResultJson(
  result: Pick<CommandStepResult, 'attemptId' | 'generation' | 'state' | 'outcome' | 'recordDigest' | 'summary'>,
): JsonObject {
  return {
    attempt_id: result.attemptId,
    generation: result.generation,
    state: result.state,
    outcome: result.outcome,
    record_digest: result.recordDigest,
    summary: result.summary,
  };
}

function attemptToResult(attempt: CommandAttemptSummary): JsonObject {
  return {
    attempt_id: attempt.attempt_id,
    generation: attempt.generation,
    state: attempt.state,
    outcome: attempt.outcome ?? 'unknown',
    record_digest: attempt.record_digest,
    summary: `recorded from the retained command attempt ${attempt.attempt_id}`,
  };
}

/** The record digest a recorded command step result names, or null. */
function recordedDigestOf(step: RunModelStep): string | null {
  const value = stepResultValue(step);
  const digest = isJsonObject(value) ? value.record_digest : undefined;
  return typeof digest === 'string' ? digest : null;
}

/**
 * Record every running command step whose durable attempt has finished, from its retained
 * result and without running anything (spec: "Recovery can finalize already-recorded terminal
 * steps after a policy change without rerunning source checks"). An `uncertain` step follows
 * its attempt when reconciliation appended a newer record to it.
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
function reachableStep(model: RunModel, kind: 'command' | 'review'): RunModelStep | null {
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

async function executeSourcePaths(
  session: Session,
  run: RunRecord,
  step: PlanStep & { action: { kind: 'source_paths' } },
): Promise<void> {
  const startedAt = session.now();
  const result = readTransaction(session.auth, () => {
    const epoch = currentPolicyEpoch(session.auth, run.repository);
    if (epoch !== run.policy_epoch) {
      throw bindingChanged(
        run.run_id,
        new AgentscmError(
          'WORKFLOW_POLICY_STALE',
          `repository ${run.repository} moved to policy epoch ${epoch}; the run is bound to ${run.policy_epoch}`,
        ),
      );
    }
    return checkSourcePaths(session.auth, run.repository, run.revision, step.action.expectations);
  });
  const json: JsonObject = {
    reason: result.reason,
    bytes_read: result.bytes_read,
    observations: result.observations.map((o) => ({
      path: o.path,
      expected_sha256: o.expected_sha256,
      actual_sha256: o.actual_sha256,
      size: o.size,
      outcome: o.outcome,
    })),
  };
  await testPause('before-commit', step.id);
  commitStep(session, step.id, ['pending'], result.state, json, startedAt, false, 'crash-safe');
  await testPause('after-commit', step.id);
}

async function executeRequireCapability(
  session: Session,
  step: PlanStep & { action: { kind: 'require_capability' } },
): Promise<void> {
  const startedAt = session.now();
  const observation = assessCapability(step.action.capability);
  const json: JsonObject = {
    capability: observation.capability,
    available: observation.available,
    reason: observation.available ? null : `capability "${observation.capability}" is not available in this profile`,
  };
  await testPause('before-commit', step.id);
  commitStep(
    session,
    step.id,
    ['pending'],
    observation.available ? 'succeeded' : 'unavailable',
    json,
    startedAt,
    false,
    'crash-safe',
  );
  await testPause('after-commit', step.id);
}

/**
 * Mark a pending step running (renewing the run lease in the same transaction) and answer when it
 * started; a step already running keeps its recorded start. Null when the run is no longer
 * running, so the step must not start.
 */
function markStepStarted(session: Session, stepId: string, recorded: RunModelStep): number | null {
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
function keepRunLease(session: Session, onLost: (error: unknown) => void): NodeJS.Timeout {
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

async function executeCommand(
  session: Session,
  run: RunRecord,
  step: PlanStep & { action: PlanCommandAction },
  recorded: RunModelStep,
): Promise<void> {
  const runtime = session.ctx.runtime;
  if (runtime === undefined) throw runtimeNotConfigured(step.id);
  const startedAt = markStepStarted(session, step.id, recorded);
  if (startedAt === null) return;
  const controller = new AbortController();
  const outer = session.ctx.signal;
  const onAbort = (): void => controller.abort(outer?.reason);
  if (outer?.aborted === true) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  // Keep the lease while the container runs; a lost lease asks the collector to stop.
  const renew = keepRunLease(session, (error) => controller.abort(error));
  let result: CommandStepResult;
  try {
    result = await runtime.run({
      dataDir: session.ctx.dataDir,
      runId: session.runId,
      stepId: step.id,
      repository: run.repository,
      revision: run.revision,
      policyEpoch: run.policy_epoch,
      runner: step.action.runner,
      recipePath: step.action.recipe_path,
      recipeDigest: step.action.recipe_sha256,
      change: { repository: step.action.change.repository, id: step.action.change.id },
      changeVersion: step.action.change_version,
      contextDigest: step.action.context_digest,
      signal: controller.signal,
      recheckBinding: () => recheckCommandBinding(session.auth, run, step),
    });
  } catch (error) {
    refusedBeforeReservation(session, step.id, error);
    throw error;
  } finally {
    clearInterval(renew);
    outer?.removeEventListener('abort', onAbort);
  }
  await testPause('before-commit', step.id);
  // The command ran: its result is recorded even if the run was cancelled meanwhile.
  commitStep(session, step.id, ['running'], result.state, commandResultJson(result), startedAt, true);
  await testPause('after-commit', step.id);
}

/** Findings a review step result retains, in record order (the review record holds them all). */
export const MAX_STEP_FINDINGS = 16;

/**
 * Run a review step through the review runtime (docs/review.md "Review steps in runs"). The
 * step is marked running durably first; the controller's journal reserves each call before it
 * is made, so a step reopened after a crash reuses every retained answer and never repeats a
 * call (a reservation without an answer makes the review uncertain). Only a `passed` record
 * makes the step succeed; anything else fails it with the record's reasons.
 */
async function executeReview(
  session: Session,
  run: RunRecord,
  step: PlanStep & { action: PlanReviewAction },
  recorded: RunModelStep,
): Promise<void> {
  const runtime = session.ctx.reviewRuntime;
  if (runtime === undefined) throw reviewRuntimeNotConfigured(step.id);
  const policyBytes = readTransaction(session.auth, () => {
    const epoch = currentPolicyEpoch(session.auth, run.repository);
    if (epoch !== run.policy_epoch) {
      throw bindingChanged(
        run.run_id,
        new AgentscmError(
          'WORKFLOW_POLICY_STALE',
          `repository ${run.repository} moved to policy epoch ${epoch}; the run is bound to ${run.policy_epoch}`,
        ),
      );
    }
    return readRevisionFile(session.auth, run.repository, run.revision, step.action.policy_path, {
      maxBytes: REVIEW_LIMITS.maxPolicyBytes,
    });
  });
  if (sha256Hex(policyBytes) !== step.action.policy_sha256)
    throw new AgentscmError(
      'INTERNAL',
      `the review policy ${step.action.policy_path} of an immutable revision changed its bytes`,
    );
  const startedAt = markStepStarted(session, step.id, recorded);
  if (startedAt === null) return;
  // A lost lease is seen at the commit below, which renews it in the same transaction.
  const renew = keepRunLease(session, () => undefined);
  let result: ReviewStepResult;
  try {
    const { policy_path: _path, policy_sha256: _sha256, ...action } = step.action;
    result = await runtime.run({
      dataDir: session.ctx.dataDir,
      runId: session.runId,
      stepId: step.id,
      repository: run.repository,
      revision: run.revision,
      action,
      policyBytes,
      signal: session.ctx.signal ?? new AbortController().signal,
    });
  } catch (error) {
    // Nothing the controller retained is lost: its journal keeps every reservation and answer.
    refusedBeforeReservation(session, step.id, error);
    throw error;
  } finally {
    clearInterval(renew);
  }
  const json: JsonObject = {
    review_id: result.reviewId,
    record_digest: result.recordDigest,
    outcome: result.outcome,
    reasons: [...result.reasons],
    calls: result.calls,
    findings_total: result.findings.length,
    findings: result.findings
      .slice(0, MAX_STEP_FINDINGS)
      .map((f) => ({ criterion: f.criterion, path: f.path, line: f.line, severity: f.severity, message: f.message })),
  };
  await testPause('before-commit', step.id);
  commitStep(
    session,
    step.id,
    ['running'],
    result.outcome === 'passed' ? 'succeeded' : 'failed',
    json,
    startedAt,
    true,
  );
  await testPause('after-commit', step.id);
}

/**
 * The binding of a command step, checked again inside the reservation of its attempt (a
 * policy bump, a new Change version or a changed context after the run started stops it
 * before anything is reserved or run), in one read snapshot of the authority.
 */
function recheckCommandBinding(auth: Authority, run: RunRecord, step: PlanStep & { action: PlanCommandAction }): void {
  try {
    readTransaction(auth, () => {
      const epoch = currentPolicyEpoch(auth, run.repository);
      if (epoch !== run.policy_epoch) {
        throw new AgentscmError(
          'WORKFLOW_POLICY_STALE',
          `repository ${run.repository} moved to policy epoch ${epoch}; the run is bound to ${run.policy_epoch}`,
        );
      }
      const recipeBytes = readRevisionFile(auth, run.repository, run.revision, step.action.recipe_path, {
        maxBytes: RECIPE_LIMITS.maxRecipeBytes,
      });
      validateCommandBinding(auth, {
        stepId: step.id,
        source: { repository: run.repository, revision: run.revision, policy_epoch: run.policy_epoch },
        action: step.action,
        recipePath: step.action.recipe_path,
        recipeBytes,
        recipeSha256: step.action.recipe_sha256,
        checkWorkdir: false,
      });
    });
  } catch (error) {
    if (isAgentscmError(error) && error.code !== 'STORE_BUSY' && error.code !== 'IO_ERROR' && error.code !== 'INTERNAL')
      throw bindingChanged(run.run_id, error);
    throw error;
  }
}

/**
 * A runtime that refused a command step before reserving its attempt (image missing, engine
 * down, binding changed) ran nothing: the step goes back to pending, and a changed binding
 * halts the run (blocked, with its reason), in one transaction.
 */
function refusedBeforeReservation(session: Session, stepId: string, error: unknown): void {
  journalWrite(session.journal, () => {
    if (!markStepPendingAgain(session.journal, session.runId, stepId)) return;
    if (isAgentscmError(error) && error.code === 'WORKFLOW_BINDING_CHANGED')
      haltRun(session.journal, session.runId, haltReason(error), session.now());
  });
}

function haltReason(error: AgentscmError): string {
  return `binding changed: ${error.message}`.slice(0, 2048);
}

/**
 * Stop a run whose binding changed: blocked with the reason, for good. `resume` reports the
 * change as WORKFLOW_BINDING_CHANGED (rethrown); `run`, which reopens a run by its ID, returns
 * the state the run now retains (spec: "Reusing an ID with the same plan returns retained state").
 */
function haltOnBindingChange(session: Session, error: unknown, onBindingChange: OnBindingChange): void {
  if (!isAgentscmError(error) || error.code !== 'WORKFLOW_BINDING_CHANGED') throw error;
  journalWrite(session.journal, () => haltRun(session.journal, session.runId, haltReason(error), session.now()));
  if (onBindingChange === 'throw') throw error;
}

type OnBindingChange = 'throw' | 'report';

function runtimeNotConfigured(stepId: string): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED',
    `command runtime not configured: step "${stepId}" is a command step and no container runtime was given`,
    {
      hint: 'pass both --docker PATH and --docker-socket PATH; nothing was recorded as run for this step',
      details: { step: stepId },
    },
  );
}

function reviewRuntimeNotConfigured(stepId: string): AgentscmError {
  return new AgentscmError(
    'REVIEW_RUNTIME_NOT_CONFIGURED',
    `review transport not configured: step "${stepId}" is a review step and no review transport was given`,
    {
      hint: 'pass --review-executable PATH --review-model NAME --review-provider-scope ID --review-state-dir DIR (and --review-env NAME for each variable the executable needs); nothing was recorded as run for this step',
      details: { step: stepId },
    },
  );
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
async function advanceLocked(
  session: Session,
  budget: number,
  validated: CompiledPlan | null,
  onBindingChange: OnBindingChange,
): Promise<{ executed: number; waiting: AdvanceWaiting | null }> {
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
            message: `command attempt ${attempt.attempt_id} of step "${next.step_id}" did not finish; it is not run again — use \`agentscm skill-workflow recover ${session.runId} ${next.step_id} --docker PATH --docker-socket PATH\``,
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

function withLease<T>(journal: Journal, runId: string, holder: LeaseHolder, body: () => Promise<T>): Promise<T> {
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

function report(
  session: Pick<Session, 'journal' | 'runId'>,
  outcome: { executed: number; waiting: AdvanceWaiting | null },
  auth: Authority | null,
): AdvanceReport {
  const view = journalRead(session.journal, () => projectRun(session.journal, session.runId, auth));
  return { ...view, executed: outcome.executed, waiting: outcome.waiting };
}

/**
 * `skill-workflow run RUN_ID FILE`: start the run, or reopen it when the run ID already holds
 * the same plan (a different plan is WORKFLOW_RUN_CONFLICT), then advance it by `budget` steps.
 */
export async function runWorkflow(
  ctx: RunnerContext,
  runId: string,
  definitionBytes: Uint8Array,
  budget: number,
): Promise<AdvanceReport> {
  checkGenericId(runId, 'run ID');
  checkBudget(budget, WORKFLOW_LIMITS.minBudget);
  const now = ctx.now ?? Date.now;
  const definition = decodeWorkflowDefinition(definitionBytes);
  const canonical = encodeWorkflowDefinition(definition);
  const auth = openAuthority(ctx.dataDir, { mode: 'read' });
  let journal: Journal | null = null;
  try {
    const exists = existsSync(journalPaths(ctx.dataDir).db);
    if (exists) journal = openJournal(ctx.dataDir, 'write');
    const existing = journal === null ? null : journalRead(journal, () => findRun(journal as Journal, runId));
    let plan: CompiledPlan | null = null;
    if (existing === null || !Buffer.from(canonical).equals(existing.definition)) {
      plan = compileWorkflow(auth, definition);
      if (existing !== null && plan.digest !== existing.plan_digest)
        throw runConflict(runId, existing.plan_digest, plan.digest);
    }
    if (existing === null && plan !== null) await preflightNewRun(ctx, plan);
    journal ??= openJournal(ctx.dataDir, 'create');
    const open = journal;
    const holder = newLeaseHolder();
    journalWrite(open, () => {
      const again = findRun(open, runId);
      if (again === null) {
        if (plan === null) throw new AgentscmError('INTERNAL', 'a new run needs its compiled plan');
        const definitionSha256 = sha256Hex(plan.definitionBytes);
        rememberStoredDefinition(
          definitionSha256,
          plan.definition,
          plan.steps.map((step) => plan.definition.steps.findIndex((declared) => declared.id === step.id)),
        );
        insertRun(open, {
          run_id: runId,
          name: plan.name,
          plan_digest: plan.digest,
          skill_digest: plan.skill.digest,
          definition: plan.definitionBytes,
          definition_sha256: definitionSha256,
          repository: plan.source.repository,
          revision: plan.source.revision,
          policy_epoch: plan.source.policy_epoch,
          steps: plan.steps.map((step) => ({ step_id: step.id, kind: step.action.kind, required: step.required })),
          now_ms: now(),
        });
      } else if (plan !== null && again.plan_digest !== plan.digest) {
        throw runConflict(runId, again.plan_digest, plan.digest);
      }
      acquireRunLease(open, runId, holder, 'run', now());
    });
    const session: Session = { ctx, journal: open, auth, runId, holder, now };
    const outcome = await withLease(open, runId, holder, () => advanceLocked(session, budget, plan, 'report'));
    return report(session, outcome, auth);
  } finally {
    journal?.close();
    auth.close();
  }
}

/**
 * A new run is refused before anything is created (journal, run row) when a command step of
 * its plan could not start: no runtime configured, or what the runtime checks up front (the
 * recipe image) is missing. Every step of a new run is pending, so every command step is reachable.
 */
async function preflightNewRun(ctx: RunnerContext, plan: CompiledPlan): Promise<void> {
  if (planHasReviewSteps(plan) && ctx.reviewRuntime === undefined) {
    const first = plan.steps.find((step) => step.action.kind === 'review');
    throw reviewRuntimeNotConfigured(first?.id ?? 'review');
  }
  if (!planHasCommandSteps(plan)) return;
  const runtime = ctx.runtime;
  for (const step of plan.steps) {
    if (step.action.kind !== 'command') continue;
    if (runtime === undefined) throw runtimeNotConfigured(step.id);
    await runtime.preflight?.({
      dataDir: ctx.dataDir,
      stepId: step.id,
      repository: plan.source.repository,
      revision: plan.source.revision,
      recipePath: step.action.recipe_path,
      recipeDigest: step.action.recipe_sha256,
    });
  }
}

function runConflict(runId: string, retained: string, offered: string): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_RUN_CONFLICT',
    `run "${runId}" is bound to plan ${retained}; this definition compiles to plan ${offered}`,
    {
      hint: 'use a new run ID for a different workflow, or the original definition to reopen this run',
      details: { run_id: runId, retained_plan: retained, offered_plan: offered },
    },
  );
}

/**
 * Library advance (spec: "advance(..., 0) execute[s] no new steps, but may reconcile an
 * already recorded all-terminal run outcome"); budget 0..32. The journal must exist.
 */
export async function advance(ctx: RunnerContext, runId: string, budget: number): Promise<AdvanceReport> {
  checkGenericId(runId, 'run ID');
  checkBudget(budget, 0);
  const now = ctx.now ?? Date.now;
  const journal = openJournal(ctx.dataDir, 'write');
  let auth: Authority | null = null;
  try {
    journalRead(journal, () => getRun(journal, runId));
    auth = openAuthority(ctx.dataDir, { mode: 'read' });
    const holder = newLeaseHolder();
    journalWrite(journal, () => acquireRunLease(journal, runId, holder, budget === 0 ? 'reconcile' : 'resume', now()));
    const session: Session = { ctx, journal, auth, runId, holder, now };
    const outcome = await withLease(journal, runId, holder, () => advanceLocked(session, budget, null, 'throw'));
    return report(session, outcome, auth);
  } finally {
    journal.close();
    auth?.close();
  }
}

/** `skill-workflow resume RUN_ID --max-steps N` (budget 1..32). */
export async function resumeWorkflow(ctx: RunnerContext, runId: string, budget: number): Promise<AdvanceReport> {
  checkBudget(budget, WORKFLOW_LIMITS.minBudget);
  return advance(ctx, runId, budget);
}

export interface CancelReport extends RunView {
  /** False when the run was already cancelled (cancel is idempotent). */
  readonly cancelled_now: boolean;
}

/**
 * `skill-workflow cancel RUN_ID`: terminal, recorded observations intact (spec "Local CLI").
 * A controller between steps sees the cancellation at its next commit and stops. A command
 * attempt that is still running needs the runtime: while its controller is alive, the run is
 * recorded cancelled, the runtime stops its containers and the controller records the attempt
 * (live-cancel.ts); with no live controller, the runtime's cancel reconciles it as recover does.
 */
export async function cancelWorkflow(ctx: RunnerContext, runId: string): Promise<CancelReport> {
  checkGenericId(runId, 'run ID');
  const now = ctx.now ?? Date.now;
  const journal = openJournal(ctx.dataDir, 'write');
  try {
    const model = journalRead(journal, () => loadRunModel(journal, runId));
    if (model.run.state === 'cancelled')
      return { ...journalRead(journal, () => projectRun(journal, runId, null)), cancelled_now: false };
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
        stop: (stepId) =>
          stop({ dataDir: ctx.dataDir, runId, stepId, signal: ctx.signal ?? new AbortController().signal }),
        now,
      });
      if (stopped !== 'controller_gone')
        return { ...journalRead(journal, () => projectRun(journal, runId, null)), cancelled_now: true };
      // The controller died before it recorded the stopped attempts: reconcile them here.
      unfinished = unfinishedSteps(journalRead(journal, () => loadRunModel(journal, runId)).steps);
    }
    if (unfinished.length > 0) {
      const holder = newLeaseHolder();
      // Taking the lease fails with WORKFLOW_JOURNAL_ACTIVE while a live controller runs the command.
      journalWrite(journal, () => acquireRunLease(journal, runId, holder, 'cancel', now()));
      await withLease(journal, runId, holder, async () => {
        const cancel = ctx.runtime?.cancel?.bind(ctx.runtime);
        const first = unfinished[0] as RunModelStep;
        if (cancel === undefined) {
          throw new AgentscmError(
            'WORKFLOW_COMMAND_ATTEMPT_UNFINISHED',
            `run "${runId}" has an unfinished command attempt in step "${first.step_id}"; it is not run again and cancel cannot stop it without the runtime`,
            {
              hint: `pass --docker PATH --docker-socket PATH, or run \`agentscm skill-workflow recover ${runId} ${first.step_id} --docker PATH --docker-socket PATH\` first`,
              details: { run_id: runId, step: first.step_id },
            },
          );
        }
        const session: JournalSession = { journal, runId, holder, now };
        const results: { step: RunModelStep; result: CommandStepResult }[] = [];
        for (const step of unfinished) {
          results.push({
            step,
            result: await cancel({
              dataDir: ctx.dataDir,
              runId,
              stepId: step.step_id,
              signal: ctx.signal ?? new AbortController().signal,
            }),
          });
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
    } else {
      journalWrite(journal, () => cancelRunRow(journal, runId, now()));
    }
    return { ...journalRead(journal, () => projectRun(journal, runId, null)), cancelled_now: true };
  } finally {
    journal.close();
  }
}

function runTerminal(runId: string, state: string): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_RUN_TERMINAL',
    `run "${runId}" already ended as ${state}; cancellation applies only to a running run`,
    {
      hint: 'inspect it with `agentscm skill-workflow status RUN_ID`',
      details: { run_id: runId, state },
    },
  );
}

function cancelRunRow(journal: Journal, runId: string, nowMs: number): void {
  const run = getRun(journal, runId);
  if (run.state === 'cancelled') return;
  if (isTerminalRunState(run.state)) throw runTerminal(runId, run.state);
  updateRunState(journal, runId, 'cancelled', 'cancelled by the operator', nowMs);
}
