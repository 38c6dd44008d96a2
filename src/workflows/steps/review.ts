/**
 * The review step executor (docs/review.md "Review steps in runs"): read the review policy of
 * the bound revision, mark the step running durably, hand it to the review runtime and record
 * its outcome. The controller's journal reserves each call before it is made, so a step
 * reopened after a crash reuses every retained answer and never repeats a call (a reservation
 * without an answer makes the review uncertain). Only a `passed` record makes the step
 * succeed; anything else fails it with the record's reasons.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { REVIEW_LIMITS } from '../../contracts/review/policy.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { currentPolicyEpoch } from '../../native/policy.js';
import { readRevisionFile } from '../../native/revisions.js';
import { readTransaction } from '../../native/store.js';
import type { RunRecord } from '../journal.js';
import type { PlanReviewAction, PlanStep } from '../plan.js';
import type { ReviewStepResult } from '../review-step.js';
import { bindingChanged, policyStale, reviewRuntimeNotConfigured } from '../run-errors.js';
import type { RunModelStep } from '../run-model.js';
import {
  commitStep,
  keepRunLease,
  markStepStarted,
  refusedBeforeReservation,
  testPause,
  type Session,
} from '../run-session.js';

/** Findings a review step result retains, in record order (the review record holds them all). */
export const MAX_STEP_FINDINGS = 16;

export async function executeReview(
  session: Session,
  run: RunRecord,
  step: PlanStep & { action: PlanReviewAction },
  recorded: RunModelStep,
): Promise<void> {
  const runtime = session.ctx.reviewRuntime;
  if (runtime === undefined) throw reviewRuntimeNotConfigured(step.id);
  const policyBytes = readTransaction(session.auth, () => {
    const epoch = currentPolicyEpoch(session.auth, run.repository);
    if (epoch !== run.policy_epoch)
      throw bindingChanged(run.run_id, policyStale(run.repository, epoch, run.policy_epoch));
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
      store: session.ctx.store,
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
