/**
 * The workflow runner's entry points (docs/skill-workflows.md "Runs", "Library"): start or
 * reopen a run by its idempotency key, or resume it, and advance it by a bounded number of
 * steps under the journal lease (advance.ts, one module per step executor under steps/);
 * cancellation is cancel.ts.
 */
import { AgentscmError } from '../contracts/errors.js';
import {
  decodeWorkflowDefinition,
  encodeWorkflowDefinition,
  WORKFLOW_LIMITS,
} from '../contracts/workflow-definition.js';
import { sha256Hex } from '../crypto/sha256.js';
import { checkGenericId } from '../native/checks.js';
import type { Store } from '../native/store-handle.js';
import { advanceLocked, report, withLease, type AdvanceReport } from './advance.js';
import { findRun, getRun, insertRun, journalRead, journalWrite, type Journal } from './journal.js';
import { acquireRunLease, newLeaseHolder } from './lease.js';
import { compileWorkflow, planHasCommandSteps, planHasReviewSteps, type CompiledPlan } from './plan.js';
import { reviewRuntimeNotConfigured, runConflict, runtimeNotConfigured } from './run-errors.js';
import { rememberStoredDefinition } from './run-model.js';
import type { RunnerContext, Session } from './run-session.js';

export type { AdvanceReport, AdvanceWaiting } from './advance.js';
export type { RunnerContext } from './run-session.js';

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
  const auth = ctx.store.authority();
  const journal = ctx.store.journal(false);
  const existing = journal === null ? null : journalRead(journal, () => findRun(journal, runId));
  let plan: CompiledPlan | null = null;
  if (existing === null || !Buffer.from(canonical).equals(existing.definition)) {
    plan = compileWorkflow(auth, definition);
    if (existing !== null && plan.digest !== existing.plan_digest)
      throw runConflict(runId, existing.plan_digest, plan.digest);
  }
  if (existing === null && plan !== null) await preflightNewRun(ctx, plan);
  // Created only now, once the definition compiled and the runtime accepted every command step.
  const open = journal ?? createdJournal(ctx.store);
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
}

/** The journal, created when absent (a 'write' Store). */
function createdJournal(store: Store): Journal {
  const journal = store.journal(true);
  if (journal === null) throw new AgentscmError('INTERNAL', 'the journal was not created');
  return journal;
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
      store: ctx.store,
      stepId: step.id,
      repository: plan.source.repository,
      revision: plan.source.revision,
      recipePath: step.action.recipe_path,
      recipeDigest: step.action.recipe_sha256,
    });
  }
}

/**
 * Library advance (docs/skill-workflows.md "Library": `advance(…, 0)` executes nothing new but
 * records finished command attempts and reconciles an all-terminal outcome); budget 0..32.
 * The journal must exist.
 */
export async function advance(ctx: RunnerContext, runId: string, budget: number): Promise<AdvanceReport> {
  checkGenericId(runId, 'run ID');
  checkBudget(budget, 0);
  const now = ctx.now ?? Date.now;
  const journal = ctx.store.requireJournal();
  journalRead(journal, () => getRun(journal, runId));
  const auth = ctx.store.authority();
  const holder = newLeaseHolder();
  journalWrite(journal, () => acquireRunLease(journal, runId, holder, budget === 0 ? 'reconcile' : 'resume', now()));
  const session: Session = { ctx, journal, auth, runId, holder, now };
  const outcome = await withLease(journal, runId, holder, () => advanceLocked(session, budget, null, 'throw'));
  return report(session, outcome, auth);
}

/** `skill-workflow resume RUN_ID --max-steps N` (budget 1..32). */
export async function resumeWorkflow(ctx: RunnerContext, runId: string, budget: number): Promise<AdvanceReport> {
  checkBudget(budget, WORKFLOW_LIMITS.minBudget);
  return advance(ctx, runId, budget);
}
