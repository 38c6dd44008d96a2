/**
 * The command step executor (docs/skill-workflows.md "Command steps at run time"): mark the step
 * running, hand it to the collector runtime with a binding recheck that runs inside the
 * reservation of its attempt, keep the run lease while the container runs, and record the
 * attempt's result even when the run was cancelled meanwhile.
 */
import { RECIPE_LIMITS } from '../../contracts/collector/command-recipe.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { currentPolicyEpoch } from '../../native/policy.js';
import { readRevisionFile } from '../../native/revisions.js';
import { readTransaction, type Authority } from '../../native/store.js';
import type { CommandAttemptSummary } from '../command-attempts.js';
import { validateCommandBinding } from '../command-binding.js';
import type { CommandStepResult } from '../command-step.js';
import type { RunRecord } from '../journal.js';
import type { PlanCommandAction, PlanStep } from '../plan.js';
import { bindingChanged, isBindingFailure, policyStale, runtimeNotConfigured } from '../run-errors.js';
import type { RunModelStep } from '../run-model.js';
import {
  commitStep,
  keepRunLease,
  markStepStarted,
  refusedBeforeReservation,
  testPause,
  type Session,
} from '../run-session.js';

/** The step result of a finished command attempt, as the runtime reported it. */
export function commandResultJson(
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

/** The step result of a command attempt the journal retains as finished (recorded without running anything). */
export function attemptToResult(attempt: CommandAttemptSummary): JsonObject {
  return {
    attempt_id: attempt.attempt_id,
    generation: attempt.generation,
    state: attempt.state,
    outcome: attempt.outcome ?? 'unknown',
    record_digest: attempt.record_digest,
    summary: `recorded from the retained command attempt ${attempt.attempt_id}`,
  };
}

export async function executeCommand(
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
      store: session.ctx.store,
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

/**
 * The binding of a command step, checked again inside the reservation of its attempt (a
 * policy bump, a new Change version or a changed context after the run started stops it
 * before anything is reserved or run), in one read snapshot of the authority.
 */
function recheckCommandBinding(auth: Authority, run: RunRecord, step: PlanStep & { action: PlanCommandAction }): void {
  try {
    readTransaction(auth, () => {
      const epoch = currentPolicyEpoch(auth, run.repository);
      if (epoch !== run.policy_epoch) throw policyStale(run.repository, epoch, run.policy_epoch);
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
    if (isBindingFailure(error)) throw bindingChanged(run.run_id, error);
    throw error;
  }
}
