/**
 * The typed command/v1 request and record of one attempt (spec: a collector transfer "carries
 * only original ExecutionRequest plus ExecutionRecord"). Both are canonical JSON; the request
 * is fixed before any container exists, the record after cleanup. Their digests are SHA-256
 * over the canonical bytes.
 */
import type { CommandRecipe } from '../contracts/collector/command-recipe.js';
import { recipeToJson } from '../contracts/collector/descriptor.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { sha256Hex } from '../crypto/sha256.js';
import type { CommandAttempt } from '../workflows/command-attempts.js';
import type { CommandStepResult } from '../workflows/command-step.js';
import type { ContainerCleanup, ContainerRunObservation, ExecutionOutcome } from './oci-command-collector.js';
import type { RuntimeIdentity } from './runtime-identity.js';

export interface ExecutionRequest extends JsonObject {
  version: number;
  kind: 'command/v1';
  attempt_id: string;
  generation: bigint;
  run_id: string;
  step_id: string;
  repository: string;
  revision: string;
  policy_epoch: bigint;
  change: { repository: string; id: string };
  change_version: bigint;
  context_digest: string;
  recipe_path: string;
  recipe_digest: string;
  recipe: JsonObject;
  runtime_identity: RuntimeIdentity;
  runtime_identity_digest: string;
}

export interface StreamRecord extends JsonObject {
  retained_bytes: number;
  observed_bytes: number;
  truncated: boolean;
  sha256: string;
}

export interface ExecutionRecord extends JsonObject {
  version: number;
  kind: 'command/v1';
  attempt_id: string;
  generation: bigint;
  request_digest: string;
  outcome: ExecutionOutcome;
  exit_code: number | null;
  oom_killed: boolean;
  timed_out: boolean;
  cancelled: boolean;
  output_limited: boolean;
  output_limit_bytes: number;
  stdout: StreamRecord;
  stderr: StreamRecord;
  container_name: string;
  container_id: string | null;
  image_id: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number;
  cleanup: { container: ContainerCleanup; snapshot: ContainerCleanup; confirmed: boolean };
  recovered: boolean;
  previous_record_digest: string | null;
  error: string | null;
}

/** Canonical JSON of a recipe in its declared field order (a recipe's JSON form): the one encoder of contracts. */
export const recipeJson: (recipe: CommandRecipe) => JsonObject = recipeToJson;

export function requestDigest(request: ExecutionRequest): string {
  return sha256Hex(encodeCanonical(request));
}

export function recordDigest(record: ExecutionRecord): string {
  return sha256Hex(encodeCanonical(record));
}

function stream(captured: ContainerRunObservation['stdout']): StreamRecord {
  return {
    retained_bytes: captured.bytes.length,
    observed_bytes: captured.observedBytes,
    truncated: captured.truncated,
    sha256: captured.sha256,
  };
}

/** Build the record of an observed run after snapshot cleanup. */
export function buildExecutionRecord(input: {
  request: ExecutionRequest;
  requestDigest: string;
  containerName: string;
  observation: ContainerRunObservation;
  snapshotCleanup: ContainerCleanup;
  outputLimitBytes: number;
  recovered?: boolean;
  previousRecordDigest?: string | null;
  error?: string | null;
}): ExecutionRecord {
  const o = input.observation;
  const confirmed = o.containerCleanup !== 'unconfirmed' && input.snapshotCleanup !== 'unconfirmed';
  return {
    version: 1,
    kind: 'command/v1',
    attempt_id: input.request.attempt_id,
    generation: input.request.generation,
    request_digest: input.requestDigest,
    outcome: o.outcome,
    exit_code: o.exitCode,
    oom_killed: o.oomKilled,
    timed_out: o.timedOut,
    cancelled: o.cancelled,
    output_limited: o.outputLimited,
    output_limit_bytes: input.outputLimitBytes,
    stdout: stream(o.stdout),
    stderr: stream(o.stderr),
    container_name: input.containerName,
    container_id: o.containerId,
    image_id: input.request.runtime_identity.image.id,
    started_at: o.startedAt,
    finished_at: o.finishedAt,
    duration_ms: o.durationMs,
    cleanup: { container: o.containerCleanup, snapshot: input.snapshotCleanup, confirmed },
    recovered: input.recovered ?? false,
    previous_record_digest: input.previousRecordDigest ?? null,
    error: input.error ?? o.error,
  };
}

/** The attempt state a record leads to: only a confirmed pass succeeds; unconfirmed cleanup is uncertain. */
export function attemptStateOf(record: ExecutionRecord): 'succeeded' | 'failed' | 'uncertain' {
  if (record.outcome === 'uncertain' || !record.cleanup.confirmed) return 'uncertain';
  return record.outcome === 'passed' ? 'succeeded' : 'failed';
}

/** One line for humans and the workflow step summary. */
export function summarizeRecord(record: ExecutionRecord): string {
  const parts = [`outcome ${record.outcome}`];
  if (record.exit_code !== null) parts.push(`exit ${record.exit_code}`);
  if (record.oom_killed) parts.push('OOM-killed');
  if (record.timed_out) parts.push('timed out');
  if (record.output_limited) parts.push(`output cut at ${record.output_limit_bytes} bytes`);
  if (record.cancelled) parts.push('cancelled');
  parts.push(record.cleanup.confirmed ? 'cleanup confirmed' : 'cleanup NOT confirmed');
  return parts.join(', ');
}

/** The step result a finished (or running) attempt stands for. */
export function stepResultOf(
  attempt: Pick<CommandAttempt, 'attempt_id' | 'generation' | 'state' | 'outcome' | 'record_digest' | 'summary'>,
): CommandStepResult {
  if (attempt.state === 'running') {
    return {
      state: 'uncertain',
      attemptId: attempt.attempt_id,
      generation: attempt.generation,
      outcome: 'running',
      recordDigest: null,
      summary: 'the attempt has not finished',
    };
  }
  return {
    state: attempt.state,
    attemptId: attempt.attempt_id,
    generation: attempt.generation,
    outcome: attempt.outcome ?? 'uncertain',
    recordDigest: attempt.record_digest,
    summary: attempt.summary ?? '',
  };
}
