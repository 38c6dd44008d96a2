/**
 * Custody reconciliation of an interrupted command attempt
 * (docs/command-collector.md "Cancellation, crashes and recovery": recovery reconciles the retained
 * container custody before finalizing the attempt and does not rerun the command). Every container
 * labelled with the attempt (or carrying its deterministic name) is removed and its absence
 * confirmed; the snapshot is removed; the attempt is finished with a record marked `recovered`.
 * Nothing is created or started. Cleanup that cannot be confirmed leaves the attempt uncertain, and
 * recover can be run again.
 */
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { sha256Hex } from '../crypto/sha256.js';
import {
  commandContainerName,
  findCommandAttemptForStep,
  finishCommandAttempt,
  getCommandAttemptOutput,
  type CommandAttempt,
} from '../workflows/command-attempts.js';
import type { CommandStepCancelRequest, CommandStepResult } from '../workflows/command-step.js';
import { journalRead, type Journal } from '../workflows/journal.js';
import type { ContainerState, DockerClient } from './docker-client.js';
import {
  attemptStateOf,
  buildExecutionRecord,
  recordDigest,
  stepResultOf,
  summarizeRecord,
  type ExecutionRequest,
} from './execution-record.js';
import {
  LABELS,
  removeAndConfirm,
  type ContainerCleanup,
  type ContainerRunObservation,
  type ExecutionOutcome as Outcome,
} from './oci-command-collector.js';
import { removeSnapshot } from './snapshot.js';

export interface CustodyReport {
  /** Containers of the attempt the engine still had. */
  readonly containers_found: number;
  readonly containers_removed: number;
  readonly container_cleanup: ContainerCleanup;
  readonly snapshot_cleanup: ContainerCleanup;
  /** True when the engine and the file system both confirmed that nothing of the attempt remains. */
  readonly confirmed: boolean;
  readonly errors: string[];
}

export interface ReconcileResult {
  readonly result: CommandStepResult;
  readonly custody: CustodyReport | null;
  /** False when the attempt was already finished and nothing was done. */
  readonly reconciled: boolean;
}

const RECORD_MAX_BYTES = 1024 * 1024;

function field(value: JsonValue | undefined, key: string): JsonValue | undefined {
  return isJsonObject(value) ? value[key] : undefined;
}

function describe(error: unknown): string {
  return (
    isAgentscmError(error) ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error)
  ).slice(0, 1024);
}

function numberOrNull(value: JsonValue | undefined): number | null {
  return typeof value === 'number' ? value : null;
}

function stringOrNull(value: JsonValue | undefined): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * The retained bytes of a stream with the observed count and truncation its record gave (none: the bytes themselves).
 */
function capturedOf(bytes: Buffer, recorded: JsonValue | undefined): ContainerRunObservation['stdout'] {
  const observed = numberOrNull(field(recorded, 'observed_bytes'));
  return {
    bytes,
    observedBytes: observed ?? bytes.length,
    truncated: field(recorded, 'truncated') === true,
    sha256: sha256Hex(bytes),
  };
}

/** Remove every container of the attempt and confirm that none remains. */
export async function reconcileContainers(
  client: DockerClient,
  attemptId: string,
  everCreated: boolean,
): Promise<{ found: ContainerState[]; removed: number; cleanup: ContainerCleanup; errors: string[] }> {
  const errors: string[] = [];
  const ids = new Set<string>();
  const found: ContainerState[] = [];
  try {
    for (const summary of await client.listContainersByLabel(LABELS.attempt, attemptId)) ids.add(summary.id);
    const byName = await client.inspectContainer(commandContainerName(attemptId));
    if (byName !== null) ids.add(byName.id);
  } catch (error) {
    return { found, removed: 0, cleanup: 'unconfirmed', errors: [describe(error)] };
  }
  let removed = 0;
  for (const id of ids) {
    try {
      const state = await client.inspectContainer(id);
      if (state !== null) found.push(state);
    } catch (error) {
      errors.push(describe(error));
    }
    const result = await removeAndConfirm(client, id);
    if (result.cleanup === 'removed') removed += 1;
    if (result.error !== null) errors.push(result.error);
  }
  try {
    const left = await client.listContainersByLabel(LABELS.attempt, attemptId);
    if (left.length > 0) errors.push(`${left.length} container(s) of the attempt remain`);
  } catch (error) {
    errors.push(describe(error));
  }
  return {
    found,
    removed,
    cleanup: errors.length === 0 ? (ids.size === 0 && !everCreated ? 'not_created' : 'removed') : 'unconfirmed',
    errors,
  };
}

/**
 * Reconcile and finish a running or uncertain attempt without running anything. A finished
 * (succeeded / failed) attempt is returned as it is.
 */
export async function reconcileCommandAttempt(
  client: DockerClient,
  journal: Journal,
  attempt: CommandAttempt,
  reason: 'interrupted' | 'cancelled' = 'interrupted',
): Promise<ReconcileResult> {
  if (attempt.state === 'succeeded' || attempt.state === 'failed')
    return { result: stepResultOf(attempt), custody: null, reconciled: false };
  const containers = await reconcileContainers(client, attempt.attempt_id, attempt.container_id !== null);
  // The snapshot goes only once no container can still have it mounted.
  const snapshotCleanup: ContainerCleanup =
    containers.cleanup === 'unconfirmed'
      ? 'unconfirmed'
      : removeSnapshot(attempt.snapshot_path)
        ? 'removed'
        : 'unconfirmed';
  const confirmed = containers.cleanup !== 'unconfirmed' && snapshotCleanup !== 'unconfirmed';
  const custody: CustodyReport = {
    containers_found: containers.found.length,
    containers_removed: containers.removed,
    container_cleanup: containers.cleanup,
    snapshot_cleanup: snapshotCleanup,
    confirmed,
    errors: containers.errors,
  };

  const request = parseStrictJson(attempt.request_json, { maxBytes: RECORD_MAX_BYTES }) as unknown as ExecutionRequest;
  const previous =
    attempt.record_json === null ? null : parseStrictJson(attempt.record_json, { maxBytes: RECORD_MAX_BYTES });
  const previousOutcome = field(previous ?? undefined, 'outcome');
  // A result the collector observed completely keeps its outcome; one it lost is "interrupted".
  const observedOutcome: Outcome | null =
    typeof previousOutcome === 'string' && previousOutcome !== 'uncertain' ? (previousOutcome as Outcome) : null;
  // Unconfirmed cleanup keeps the attempt uncertain through the record's cleanup, not its outcome.
  const outcome: Outcome = observedOutcome ?? (confirmed ? reason : 'uncertain');
  const exited = containers.found.find((c) => !c.running && c.exitCode >= 0);
  const output =
    previous === null
      ? { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) }
      : getCommandAttemptOutput(journal.db, attempt.attempt_id);
  const limits = field(field(request.recipe, 'limits'), 'output_bytes');
  const observation: ContainerRunObservation =
    previous === null
      ? {
          outcome,
          containerId: attempt.container_id,
          exitCode: exited?.exitCode ?? null,
          oomKilled: exited?.oomKilled === true,
          timedOut: false,
          cancelled: reason === 'cancelled',
          outputLimited: false,
          stdout: capturedOf(output.stdout, undefined),
          stderr: capturedOf(output.stderr, undefined),
          startedAt: exited !== undefined && !exited.startedAt.startsWith('0001-') ? exited.startedAt : null,
          finishedAt: exited !== undefined && !exited.finishedAt.startsWith('0001-') ? exited.finishedAt : null,
          durationMs: 0,
          containerCleanup: containers.cleanup,
          error: containers.errors.length === 0 ? null : containers.errors.join('; ').slice(0, 2048),
        }
      : {
          // What the previous record observed is carried over as it was: only the outcome (when
          // it was lost), the cleanup and the error come from this reconciliation.
          outcome,
          containerId: attempt.container_id,
          exitCode: numberOrNull(field(previous, 'exit_code')),
          oomKilled: field(previous, 'oom_killed') === true,
          timedOut: field(previous, 'timed_out') === true,
          cancelled: field(previous, 'cancelled') === true,
          outputLimited: field(previous, 'output_limited') === true,
          stdout: capturedOf(output.stdout, field(previous, 'stdout')),
          stderr: capturedOf(output.stderr, field(previous, 'stderr')),
          startedAt: stringOrNull(field(previous, 'started_at')),
          finishedAt: stringOrNull(field(previous, 'finished_at')),
          durationMs: numberOrNull(field(previous, 'duration_ms')) ?? 0,
          containerCleanup: containers.cleanup,
          error:
            containers.errors.length === 0
              ? stringOrNull(field(previous, 'error'))
              : containers.errors.join('; ').slice(0, 2048),
        };
  const record = buildExecutionRecord({
    request,
    requestDigest: attempt.request_digest,
    containerName: attempt.container_name,
    observation,
    snapshotCleanup,
    outputLimitBytes: typeof limits === 'number' ? limits : 0,
    recovered: true,
    previousRecordDigest: attempt.record_digest,
  });
  const finished = finishCommandAttempt(
    journal.db,
    attempt.attempt_id,
    {
      state: attemptStateOf(record),
      outcome: record.outcome,
      recordJson: encodeCanonical(record),
      recordDigest: recordDigest(record),
      summary:
        `${reason === 'cancelled' ? 'cancelled' : 'recovered'} without running again: ` + `${summarizeRecord(record)}`,
      stdout: output.stdout,
      stderr: output.stderr,
      nowMs: Date.now(),
    },
    { allowUncertain: true, previousRecordDigest: attempt.record_digest },
  );
  return { result: stepResultOf(finished), custody, reconciled: true };
}

/**
 * The runtime's stop, for a cancel from another process while the controller is alive: SIGKILL
 * every running container labelled with the step's running attempt, and nothing else. The
 * controller observes the stop, removes the container and snapshot, and records the attempt
 * (as cancelled, since the run is). Returns how many containers were stopped.
 */
export async function stopCommandStep(client: DockerClient, request: CommandStepCancelRequest): Promise<number> {
  const journal = request.store.requireJournal();
  const attempt = journalRead(journal, () => findCommandAttemptForStep(journal.db, request.runId, request.stepId));
  if (attempt === null || attempt.state !== 'running') return 0;
  let stopped = 0;
  for (const container of await client.listContainersByLabel(LABELS.attempt, attempt.attempt_id)) {
    if (container.state !== 'running') continue;
    await client.killContainer(container.id);
    stopped += 1;
  }
  return stopped;
}

/** The runtime's cancel: stop and clean up a running attempt with no live controller, recorded as cancelled. */
export async function cancelCommandStep(
  client: DockerClient,
  request: CommandStepCancelRequest,
): Promise<CommandStepResult> {
  const journal = request.store.requireJournal();
  const attempt = findCommandAttemptForStep(journal.db, request.runId, request.stepId);
  if (attempt === null) {
    throw new AgentscmError(
      'COMMAND_ATTEMPT_NOT_FOUND',
      `step "${request.stepId}" of run "${request.runId}" has no command attempt to cancel`,
    );
  }
  if (attempt.state !== 'running' && attempt.state !== 'uncertain') return stepResultOf(attempt);
  return (await reconcileCommandAttempt(client, journal, attempt, 'cancelled')).result;
}
