/**
 * The server-executed path of admission (docs/admission.md "The server-executed path"): the
 * exact-subject receipt a completed server-executed run of the subject's compiled plan gives, and
 * the newest such run among the retained runs of that plan.
 */
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import { isJsonObject } from '../../contracts/json/json-value.js';
import type { QualificationTaskState } from '../../contracts/task/qualification.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { authorityId } from '../../native/authority-identity.js';
import type { Authority } from '../../native/store.js';
import { findCommandAttemptForStep } from '../../workflows/command-attempts.js';
import { findRun, listSteps, type Journal, type StepRecord } from '../../workflows/journal.js';
import { listPlanRunIds } from '../../workflows/plan-runs.js';
import { stepResultValue } from '../../workflows/run-model.js';
import type { DerivedSubject } from '../derive.js';
import { exactSubjectBinding } from './exact-subject.js';

/** Domain of a server-executed run's receipt (docs/admission.md "The server-executed path"). */
export const SERVER_RUN_RECEIPT_DOMAIN = 'agentscm.server-run-receipt.v2';

/** One step of a server-run receipt, in plan order. */
interface ServerRunStep {
  readonly step_id: string;
  readonly required: boolean;
  readonly state: string;
  readonly result_sha256: string | null;
  readonly attempt_id: string | null;
  readonly record_digest: string | null;
}

/**
 * The exact-subject receipt of a completed server-executed run: the canonical JSON
 * `[SERVER_RUN_RECEIPT_DOMAIN, document]` is what the digest covers; `receipt` is the
 * document's canonical bytes (what the authority retains, docs/admission.md).
 */
export interface ServerRunReceipt {
  readonly run_id: string;
  readonly receipt_digest: string;
  readonly receipt: Buffer;
  readonly state: 'completed' | 'completed_with_omissions';
  /** Each step's state in the run, by step id (the qualification answer's task states). */
  readonly steps: ReadonlyMap<string, string>;
}

/**
 * The review record digest of a review step that passed in a run, or null: the step succeeded,
 * its retained result still has its digest, and it names a `passed` review and its record.
 */
export function passedReviewDigest(step: StepRecord): string | null {
  if (step.state !== 'succeeded' || step.result === null || step.result_sha256 !== sha256Hex(step.result)) return null;
  const result = stepResultValue(step);
  if (!isJsonObject(result) || result.outcome !== 'passed' || typeof result.record_digest !== 'string') return null;
  return result.record_digest;
}

/**
 * The receipt of a completed server-executed run of the subject's exact compiled plan, or null:
 * the run is completed (or completed with omissions) and not halted, it ran the subject's plan,
 * every required step and every command step succeeded, each command step's newest attempt
 * passed and its retained record still has its digest, every required review step has a passed
 * review record, and the source paths and capabilities recomputed now (`now`) hold.
 */
export function serverRunReceipt(
  auth: Authority,
  journal: Journal,
  derived: DerivedSubject,
  now: (taskId: string) => QualificationTaskState | undefined,
  runId: string,
): ServerRunReceipt | null {
  const run = findRun(journal, runId);
  const b = derived.base;
  if (
    run === null ||
    run.halted_reason !== null ||
    (run.state !== 'completed' && run.state !== 'completed_with_omissions')
  )
    return null;
  if (
    run.plan_digest !== b.plan_digest ||
    run.repository !== b.repository ||
    run.revision !== b.revision ||
    run.policy_epoch !== b.policy_epoch
  )
    return null;
  const steps = listSteps(journal, runId);
  const rows: ServerRunStep[] = [];
  for (const entry of derived.tasks) {
    const step = steps.find((s) => s.step_id === entry.step.id);
    if (step === undefined) return null;
    const row = {
      step_id: step.step_id,
      required: entry.step.required,
      state: step.state,
      result_sha256: step.result_sha256,
    };
    const kind = entry.step.action.kind;
    if (kind === 'review') {
      // A review counts only as a passed record; the receipt names its record digest.
      const digest = passedReviewDigest(step);
      if (digest === null && entry.step.required) return null;
      rows.push({ ...row, attempt_id: null, record_digest: digest });
      continue;
    }
    if (kind === 'command') {
      if (step.state !== 'succeeded') return null;
      const attempt = findCommandAttemptForStep(journal.db, runId, step.step_id);
      if (
        attempt?.state !== 'succeeded' ||
        attempt.outcome !== 'passed' ||
        attempt.record_json === null ||
        attempt.record_digest !== sha256Hex(attempt.record_json)
      )
        return null;
      rows.push({ ...row, attempt_id: attempt.attempt_id, record_digest: attempt.record_digest });
      continue;
    }
    if (entry.step.required && (step.state !== 'succeeded' || now(entry.task.task_id) !== 'succeeded')) return null;
    rows.push({ ...row, attempt_id: null, record_digest: null });
  }
  const document = {
    version: 2,
    authority_id: authorityId(auth),
    repository_id: b.repository,
    subject: { ...exactSubjectBinding(b), plan_digest: b.plan_digest },
    run_id: run.run_id,
    definition_sha256: run.definition_sha256,
    state: run.state,
    steps: rows.map((r) => ({ ...r })),
  };
  return {
    run_id: run.run_id,
    receipt_digest: sha256Hex(encodeCanonical([SERVER_RUN_RECEIPT_DOMAIN, document])),
    receipt: encodeCanonical(document),
    state: run.state,
    steps: new Map(rows.map((r) => [r.step_id, r.state])),
  };
}

/** The newest (of at most 8) completed server-executed runs of the subject's plan that gives a receipt, or null. */
export function serverRunEvidence(
  auth: Authority,
  journal: Journal,
  derived: DerivedSubject,
  now: (taskId: string) => QualificationTaskState | undefined,
): ServerRunReceipt | null {
  for (const runId of listPlanRunIds(journal, derived.base, { completed: true })) {
    const receipt = serverRunReceipt(auth, journal, derived, now, runId);
    if (receipt !== null) return receipt;
  }
  return null;
}
