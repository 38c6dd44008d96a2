/**
 * The server-executed Stop loop (docs/stop-hooks.md "Server-executed mode": the optional Claude
 * Code Stop loop separately checkpoints source, runs isolated tests and bounded review, and returns
 * failure feedback): checkpoint the workspace as the Change's next version, run the target's
 * installed requirement on that exact revision through the workflow runner (source paths in
 * process, command steps in isolated containers, review steps through the finite review
 * controller), and pass when the run completed, else block with each failing step, its exit status
 * and a bounded tail of its output, or a failed review's outcome, reasons and first findings. The
 * run ID is derived from the Change version and the plan, so stopping again without an edit reopens
 * the same run instead of running it twice. A completed run passes only once the loop has
 * revalidated it against the Change's current subject and copied its exact-subject receipt into the
 * authority (docs/admission.md "The server-executed path": the loop revalidates the graph and
 * copies an exact-subject receipt into native authority; `recordStopRunReceipt`, one authority
 * transaction that observes the run and writes the row).
 */
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { oneLine, quoteForMessage } from '../contracts/message-text.js';
import { sha256Hex } from '../crypto/sha256.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { getTargetRequirement } from '../native/requirements.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction } from '../native/store.js';
import { recordStopRunReceipt } from '../tasks/admission/admission.js';
import { showCommandAttempt } from '../workflows/command-attempts.js';
import type { CommandStepRuntime } from '../workflows/command-step.js';
import { compileRequirementPlan } from '../workflows/requirement.js';
import type { ReviewStepRuntime } from '../workflows/review-step.js';
import { runWorkflow, type AdvanceReport } from '../workflows/runner.js';
import type { StepView } from '../workflows/status.js';
import { createVersionContexts } from '../workflows/version-contexts.js';
import { checkpointWorkspace, type CheckpointResult } from '../workspace/checkpoint.js';
import { stopToken, type StopDecision, type StopFailure, type StopFeedback } from './stop/output.js';

/** Output kept per failing command step: the last lines of stdout and stderr. */
export const STOP_TAIL_LINES = 20;
export const STOP_TAIL_BYTES = 2048;
/** The fixed sentence of a server-executed block (next is always checkpoint: this hook checkpoints). */
export const SERVER_STOP_NEXT_ACTION =
  'Fix what the failing steps report in the workspace, then finish again: the Stop hook checkpoints the workspace ' +
  'and runs the requirement on the new version.';
const LOCAL_NEXT_ACTION =
  'The Stop hook could not check this work (see the first lines); fix the cause or ask the operator, then finish ' +
  'again.';

export interface ServerStopInput {
  /** The command's Store ('write'): the requirement is compiled and the run recorded through it. */
  readonly store: Store;
  readonly workspace: string;
  readonly change: string;
  readonly target: string;
  readonly runtime?: CommandStepRuntime;
  readonly reviewRuntime?: ReviewStepRuntime;
  readonly signal?: AbortSignal;
  readonly onProgress?: (message: string) => void;
}

/** The last lines of a text, at most STOP_TAIL_LINES lines and STOP_TAIL_BYTES bytes. */
export function outputTail(text: string): string {
  let tail = text.replace(/\n+$/, '').split('\n').slice(-STOP_TAIL_LINES).join('\n');
  const bytes = Buffer.from(tail, 'utf8');
  if (bytes.length > STOP_TAIL_BYTES)
    tail = `…${bytes
      .subarray(bytes.length - STOP_TAIL_BYTES)
      .toString('utf8')
      .replace(/^\uFFFD+/, '')}`;
  return tail;
}

function localBlock(stage: string, error: unknown): StopDecision {
  const e = isAgentscmError(error)
    ? error
    : new AgentscmError('INTERNAL', error instanceof Error ? error.message : String(error));
  const lines = [`agentscm Stop hook: the ${stage} failed: error[${e.code}] ${oneLine(e.message)}`];
  if (e.hint !== undefined) lines.push(`  hint: ${oneLine(e.hint)}`);
  return {
    decision: 'block',
    feedback: {
      lines,
      failures: [{ task_id: stage, code: e.code.toLowerCase() }],
      next_action: LOCAL_NEXT_ACTION,
      next: { operation: 'checkpoint' },
    },
  };
}

/**
 * The run ID and compiled definition of the subject the checkpoint made, and the review context its command steps bind
 * (null without command steps).
 */
interface PreparedRun {
  readonly runId: string;
  readonly definitionBytes: Uint8Array;
  readonly contextDigest: string | null;
}

/**
 * The contexts, compiled requirement and run ID of the subject the checkpoint made. The contexts
 * are the ones `agentscm checkpoint` creates (createVersionContexts: one per distinct recipe path
 * of the command steps, idempotent); the run binds the first.
 */
function prepareRun(input: ServerStopInput, checkpoint: CheckpointResult): PreparedRun {
  const auth = input.store.authority();
  const requirement = readTransaction(auth, () => getTargetRequirement(auth, checkpoint.repository, input.target));
  // A requirement with command steps binds them to a review context of this exact version.
  const made = createVersionContexts(input.store, {
    repository: checkpoint.repository,
    change: checkpoint.change,
    target: input.target,
  });
  const contextDigest = made.contexts[0]?.context_digest ?? null;
  const compiled = readTransaction(auth, () =>
    compileRequirementPlan(auth, requirement, {
      revision: checkpoint.revision,
      policyEpoch: currentPolicyEpoch(auth, checkpoint.repository),
      ...(contextDigest === null
        ? {}
        : { change: { id: checkpoint.change, version: checkpoint.version, contextDigest } }),
    }),
  );
  const runKey = [checkpoint.repository, checkpoint.change, checkpoint.version, compiled.plan.digest].join('\0');
  const runId = `stop-${sha256Hex(`agentscm.stop-run.v1\0${runKey}`).slice(0, 40)}`;
  return { runId, definitionBytes: compiled.plan.definitionBytes, contextDigest };
}

function stepLines(store: Store, step: StepView): { lines: string[]; failure: StopFailure } {
  const lines = [`step "${step.id}" (${step.kind}${step.required ? ', required' : ''}): ${step.state}`];
  let code = `step_${step.state}`;
  if (step.execution !== null) {
    try {
      const attempt = showCommandAttempt(store, step.execution.attempt_id);
      const record = isJsonObject(attempt.record) ? attempt.record : {};
      const exit =
        typeof record.exit_code === 'number' || typeof record.exit_code === 'bigint'
          ? String(record.exit_code)
          : 'none';
      lines.push(
        `  outcome ${attempt.outcome ?? 'none'}, exit status ` +
          `${exit}${attempt.summary === null ? '' : `: ${oneLine(attempt.summary)}`}`,
      );
      if (attempt.outcome !== null) code = `command_${attempt.outcome}`;
      for (const [name, stream] of [
        ['stdout', attempt.stdout],
        ['stderr', attempt.stderr],
      ] as const) {
        if (stream.bytes === 0) continue;
        lines.push(
          `  last ${name} (${stream.bytes} bytes in all):`,
          ...outputTail(stream.text)
            .split('\n')
            .map((l) => `    ${l}`),
        );
      }
      lines.push(`  full record: agentscm --data-dir ${store.dataDir} check-command-show ${attempt.attempt_id}`);
    } catch (error) {
      lines.push(`  (its command record cannot be read: ${isAgentscmError(error) ? error.code : 'error'})`);
    }
  } else if (step.kind === 'review' && isJsonObject(step.result)) {
    const review = reviewLines(step.result);
    lines.push(...review.lines);
    code = review.code;
  } else if (step.result !== null) {
    const text = JSON.stringify(step.result, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    lines.push(`  result: ${text.length > STOP_TAIL_BYTES ? `${text.slice(0, STOP_TAIL_BYTES)}…` : text}`);
  }
  return { lines, failure: { task_id: stopToken(step.id), code: stopToken(code) } };
}

/** Findings named per failing review step; the step result and the review record hold the rest. */
export const STOP_REVIEW_FINDINGS = 8;

/**
 * A failed review step in the feedback: its outcome and reasons, the record digest, and its
 * first findings, each path and message quoted (control characters escaped, bounded).
 */
function reviewLines(result: JsonObject): { lines: string[]; code: string } {
  const text = (value: JsonValue | undefined): string => (typeof value === 'string' ? value : '');
  const outcome = text(result.outcome);
  const reasons = Array.isArray(result.reasons) ? result.reasons.map((r) => text(r)).filter((r) => r !== '') : [];
  const lines = [
    `  review ${outcome}${reasons.length === 0 ? '' : ` (${reasons.join(', ')})`}, record ` +
      `${text(result.record_digest)}`,
  ];
  const findings = Array.isArray(result.findings) ? result.findings.filter(isJsonObject) : [];
  const total =
    typeof result.findings_total === 'number' || typeof result.findings_total === 'bigint'
      ? Number(result.findings_total)
      : findings.length;
  for (const finding of findings.slice(0, STOP_REVIEW_FINDINGS)) {
    const line = typeof finding.line === 'number' || typeof finding.line === 'bigint' ? `:${String(finding.line)}` : '';
    lines.push(
      `  finding (${oneLine(text(finding.severity))}, ${oneLine(text(finding.criterion))}) ` +
        `${quoteForMessage(text(finding.path), 256)}${line}: ${quoteForMessage(text(finding.message), 512)}`,
    );
  }
  if (total > Math.min(findings.length, STOP_REVIEW_FINDINGS))
    lines.push(`  … ${total - Math.min(findings.length, STOP_REVIEW_FINDINGS)} more finding(s) in the review record`);
  return { lines, code: `review_${outcome === '' ? 'unknown' : outcome}` };
}

/** Block feedback for a run that did not complete. */
export function runFeedback(store: Store, report: AdvanceReport): StopFeedback {
  const lines = [
    `agentscm Stop hook: run ${report.run_id} of "${report.name}" on revision ${report.source.revision} is ` +
      `${report.state}${report.state_reason === null ? '' : ` (${oneLine(report.state_reason)})`}.`,
  ];
  const failures: StopFailure[] = [];
  if (report.waiting !== null) {
    lines.push(`waiting at step "${report.waiting.step}": ${oneLine(report.waiting.message)}`);
    failures.push({ task_id: stopToken(report.waiting.step), code: stopToken(report.waiting.reason) });
  }
  for (const step of report.steps) {
    if (step.state === 'succeeded' || step.state === 'skipped' || step.state === 'pending' || step.state === 'not_run')
      continue;
    if (report.waiting !== null && step.id === report.waiting.step) continue;
    const { lines: more, failure } = stepLines(store, step);
    lines.push(...more);
    failures.push(failure);
  }
  return { lines, failures, next_action: SERVER_STOP_NEXT_ACTION, next: { operation: 'checkpoint' } };
}

/** One server-executed Stop: pass when the requirement's run on the checkpointed revision completed. */
export async function runServerStop(input: ServerStopInput): Promise<StopDecision> {
  let checkpoint: CheckpointResult;
  try {
    checkpoint = checkpointWorkspace(input.store, {
      change: input.change,
      workspace: input.workspace,
      ...(input.onProgress === undefined ? {} : { onProgress: input.onProgress }),
    });
  } catch (error) {
    return localBlock('checkpoint', error);
  }
  let prepared: PreparedRun;
  try {
    prepared = prepareRun(input, checkpoint);
  } catch (error) {
    return localBlock('requirement', error);
  }
  let report: AdvanceReport;
  try {
    report = await runWorkflow(
      {
        store: input.store,
        ...(input.runtime === undefined ? {} : { runtime: input.runtime }),
        ...(input.reviewRuntime === undefined ? {} : { reviewRuntime: input.reviewRuntime }),
        ...(input.signal === undefined ? {} : { signal: input.signal }),
        ...(input.onProgress === undefined ? {} : { onProgress: input.onProgress }),
      },
      prepared.runId,
      prepared.definitionBytes,
      32,
    );
  } catch (error) {
    return localBlock('run', error);
  }
  if (report.waiting !== null || (report.state !== 'completed' && report.state !== 'completed_with_omissions'))
    return { decision: 'block', feedback: runFeedback(input.store, report) };
  // A requirement without command steps binds no review context, so there is no exact subject
  // to approve and no receipt to copy: the completed run is the answer.
  if (prepared.contextDigest === null) return { decision: 'pass' };
  try {
    const recorded = recordStopRunReceipt(input.store, {
      repository: checkpoint.repository,
      target: input.target,
      change: checkpoint.change,
      contextDigest: prepared.contextDigest,
      runId: prepared.runId,
    });
    if (recorded !== null) {
      input.onProgress?.(
        `receipt ${recorded.row.receipt_digest} of run ${prepared.runId} ` +
          `${recorded.created ? 'recorded' : 'already recorded'} in the authority`,
      );
      return { decision: 'pass' };
    }
  } catch (error) {
    return localBlock('receipt', error);
  }
  return { decision: 'block', feedback: noReceiptFeedback(input.store, report) };
}

/**
 * Block feedback for a run that completed but gives the exact subject no receipt (admission's
 * server-executed check refuses it): most often an optional command step that did not pass —
 * an optional flag never waives a command its context requires (docs/admission.md).
 */
function noReceiptFeedback(store: Store, report: AdvanceReport): StopFeedback {
  const feedback = runFeedback(store, report);
  return {
    ...feedback,
    lines: [
      ...feedback.lines,
      'the completed run gives no receipt for the exact subject: every command step (optional or not) must pass, ' +
        'and every required step must succeed again now',
    ],
    failures: [...feedback.failures, { task_id: 'receipt', code: 'receipt_not_written' }],
  };
}
