/**
 * One command step of a workflow run (docs/skill-workflows.md "Command steps at run time"):
 * `runCommandStep` reserves a deterministic durable attempt in the journal of the request's
 * Store before any container exists, materializes the exact revision, runs the container, and
 * finishes the attempt with its record. A reserved attempt is never run again: a finished one
 * returns its retained result, an unfinished one needs `skill-workflow recover`.
 * `preflightCommandStep` checks what a step needs before its run is created.
 */
import { join } from 'node:path';

import {
  commandRecipeDigest,
  decodeCommandRecipe,
  RECIPE_LIMITS,
  type CommandRecipe,
} from '../contracts/collector/command-recipe.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { sha256Hex } from '../crypto/sha256.js';
import { readRevisionFile } from '../native/revisions.js';
import type { Store } from '../native/store-handle.js';
import type { Authority } from '../native/store.js';
import {
  commandAttemptId,
  commandContainerName,
  findCommandAttemptForStep,
  finishCommandAttempt,
  noteCommandContainer,
  reserveCommandAttempt,
} from '../workflows/command-attempts.js';
import { checkRecipeWorkdir } from '../workflows/command-binding.js';
import type { CommandStepPreflight, CommandStepRequest, CommandStepResult } from '../workflows/command-step.js';
import { getRunHeader, journalRead, type Journal } from '../workflows/journal.js';
import { refuseStaleDeps, revisionLockfileReader } from './deps-lockfile.js';
import type { DockerClient } from './docker-client.js';
import {
  attemptStateOf,
  buildExecutionRecord,
  recipeJson,
  recordDigest,
  requestDigest,
  stepResultOf,
  summarizeRecord,
  type ExecutionRecord,
  type ExecutionRequest,
} from './execution-record.js';
import { LABELS, runContainer, type ContainerCleanup, type ContainerRunObservation } from './oci-command-collector.js';
import { observeRuntimeIdentity, runtimeIdentityDigest } from './runtime-identity.js';
import { ensurePrivateDir, materializeSnapshot, removeSnapshot, snapshotPathFor } from './snapshot.js';

/** How often a running command looks for a cancellation recorded by another process. */
export const CANCEL_WATCH_MS = 500;

/** The first generation of every step's attempt; later generations need an explicit new attempt. */
export const FIRST_GENERATION = 1n;

/** D/collector/snapshots: the owner-private parent of every workflow snapshot. */
export function snapshotParentOf(store: Pick<Store, 'dataDir'>): string {
  return join(store.dataDir, 'collector', 'snapshots');
}

function runningError(request: Pick<CommandStepRequest, 'runId' | 'stepId'>, attemptId: string): AgentscmError {
  return new AgentscmError(
    'COMMAND_ATTEMPT_RUNNING',
    `command attempt ${attemptId} of step "${request.stepId}" did not finish (its controller stopped); it is never ` +
      'run again',
    {
      hint:
        `reconcile it: agentscm skill-workflow recover ${request.runId} ${request.stepId} --docker PATH ` +
        '--docker-socket PATH',
      details: { attempt_id: attemptId },
    },
  );
}

function loadRecipe(
  auth: Authority,
  request: Pick<CommandStepRequest, 'repository' | 'revision' | 'recipePath' | 'recipeDigest'>,
): CommandRecipe {
  const bytes = readRevisionFile(auth, request.repository, request.revision, request.recipePath, {
    maxBytes: RECIPE_LIMITS.maxRecipeBytes,
  });
  const digest = commandRecipeDigest(bytes);
  if (digest !== request.recipeDigest) {
    throw new AgentscmError(
      'RECIPE_DIGEST_MISMATCH',
      `recipe ${request.recipePath} in revision ${request.revision} has SHA-256 ${digest}, the plan bound ` +
        `${request.recipeDigest}`,
      {
        hint: 'plan the workflow again against the current revision',
      },
    );
  }
  const recipe = decodeCommandRecipe(bytes);
  checkRecipeWorkdir(auth, request.repository, request.revision, recipe.workdir);
  return recipe;
}

/**
 * What a command step needs from the engine, checked before a run that can reach it is
 * created: the recipe loads from the revision (digest, workdir) and its image is present
 * (IMAGE_NOT_FOUND; images are never pulled). Nothing is reserved or created.
 */
export async function preflightCommandStep(client: DockerClient, request: CommandStepPreflight): Promise<void> {
  const auth = request.store.authority();
  const recipe = loadRecipe(auth, request);
  try {
    const image = await client.inspectImage(recipe.image);
    refuseStaleDeps(
      request.stepId,
      recipe,
      image.labels,
      revisionLockfileReader(auth, request.repository, request.revision),
    );
  } catch (error) {
    if (isAgentscmError(error) && error.code === 'IMAGE_NOT_FOUND') {
      throw new AgentscmError('IMAGE_NOT_FOUND', `step "${request.stepId}": ${error.message}`, {
        hint: error.hint ?? 'load the image into the engine (images are never pulled)',
        details: { step: request.stepId, image: recipe.image },
        cause: error,
      });
    }
    throw error;
  }
}

export interface RuntimeContext {
  readonly client: DockerClient;
  readonly executableSha256: string;
  readonly drainMs: number | undefined;
  readonly graceMs: number | undefined;
}

/** Run one command step (see module comment). */
export async function runCommandStep(context: RuntimeContext, request: CommandStepRequest): Promise<CommandStepResult> {
  const journal = request.store.requireJournal();
  const existing = findCommandAttemptForStep(journal.db, request.runId, request.stepId);
  if (existing !== null) {
    if (existing.state === 'running') throw runningError(request, existing.attempt_id);
    return stepResultOf(existing);
  }
  const auth = request.store.authority();
  const recipe = loadRecipe(auth, request);
  // The image is looked up before the reservation: a missing image is an error with no attempt.
  const { identity, image } = await observeRuntimeIdentity(context.client, {
    image: recipe.image,
    executableSha256: context.executableSha256,
  });
  refuseStaleDeps(
    request.stepId,
    recipe,
    image.labels,
    revisionLockfileReader(auth, request.repository, request.revision),
  );
  const attemptId = commandAttemptId(request.repository, request.runId, request.stepId, FIRST_GENERATION);
  const parent = snapshotParentOf(request.store);
  ensurePrivateDir(join(request.store.dataDir, 'collector'));
  ensurePrivateDir(parent);
  const execution: ExecutionRequest = {
    version: 1,
    kind: 'command/v1',
    attempt_id: attemptId,
    generation: FIRST_GENERATION,
    run_id: request.runId,
    step_id: request.stepId,
    repository: request.repository,
    revision: request.revision,
    policy_epoch: request.policyEpoch,
    change: { repository: request.change.repository, id: request.change.id },
    change_version: request.changeVersion,
    context_digest: request.contextDigest,
    recipe_path: request.recipePath,
    recipe_digest: request.recipeDigest,
    recipe: recipeJson(recipe),
    runtime_identity: identity,
    runtime_identity_digest: runtimeIdentityDigest(identity),
  };
  const prepared = {
    request: execution,
    digest: requestDigest(execution),
    snapshotPath: snapshotPathFor(parent, sha256Hex(attemptId)),
  };
  const reserved = reserveCommandAttempt(journal.db, {
    repository: request.repository,
    runId: request.runId,
    stepId: request.stepId,
    generation: FIRST_GENERATION,
    requestDigest: prepared.digest,
    requestJson: encodeCanonical(execution),
    snapshotPath: prepared.snapshotPath,
    nowMs: Date.now(),
    ...(request.recheckBinding === undefined ? {} : { recheck: request.recheckBinding }),
  });
  if (!reserved.created) {
    if (reserved.attempt.state === 'running') throw runningError(request, reserved.attempt.attempt_id);
    return stepResultOf(reserved.attempt);
  }
  // From here on the attempt exists: every path ends in a finished attempt or leaves it
  // running for recover (a crash), never in a silent retry.
  const snapshotError = materialize(auth, request, prepared.snapshotPath);
  if (snapshotError !== null) {
    return finish(
      journal,
      prepared,
      recipe,
      noContainer('runtime_error', snapshotError),
      removeSnapshot(prepared.snapshotPath) ? 'removed' : 'unconfirmed',
    );
  }
  return await execute(context, journal, prepared, recipe, request.signal);
}

function materialize(auth: Authority, request: CommandStepRequest, snapshotPath: string): string | null {
  try {
    const parent = join(snapshotPath, '..');
    materializeSnapshot(auth, {
      repository: request.repository,
      revision: request.revision,
      parent,
      digest: snapshotPath.slice(-64),
    });
    return null;
  } catch (error) {
    return isAgentscmError(error) ? `${error.code}: ${error.message}` : String(error);
  }
}

function emptyCapture(): ContainerRunObservation['stdout'] {
  return { bytes: Buffer.alloc(0), observedBytes: 0, truncated: false, sha256: sha256Hex(Buffer.alloc(0)) };
}

function noContainer(
  outcome: 'runtime_error' | 'cancelled' | 'uncertain',
  error: string | null,
): ContainerRunObservation {
  return {
    outcome,
    containerId: null,
    exitCode: null,
    oomKilled: false,
    timedOut: false,
    cancelled: outcome === 'cancelled',
    outputLimited: false,
    stdout: emptyCapture(),
    stderr: emptyCapture(),
    startedAt: null,
    finishedAt: null,
    durationMs: 0,
    containerCleanup: 'not_created',
    error,
  };
}

async function execute(
  context: RuntimeContext,
  journal: Journal,
  prepared: { request: ExecutionRequest; digest: string; snapshotPath: string },
  recipe: CommandRecipe,
  signal: AbortSignal,
): Promise<CommandStepResult> {
  const attemptId = prepared.request.attempt_id;
  let observation: ContainerRunObservation;
  // A cancel from another process records the run cancelled and stops the container by label;
  // watching for that record stops the command too when that process could not reach the engine.
  const watch = new AbortController();
  const watcher = setInterval(() => {
    try {
      if (runCancelled(journal, prepared.request.run_id)) watch.abort(new Error('the run was cancelled'));
    } catch {
      // A busy journal is read again at the next tick.
    }
  }, CANCEL_WATCH_MS);
  try {
    observation = await runContainer({
      client: context.client,
      containerName: commandContainerName(attemptId),
      labels: {
        [LABELS.managed]: '1',
        [LABELS.attempt]: attemptId,
        [LABELS.run]: prepared.request.run_id,
        [LABELS.step]: prepared.request.step_id,
      },
      recipe,
      imageId: prepared.request.runtime_identity.image.id,
      snapshotPath: prepared.snapshotPath,
      signal: AbortSignal.any([signal, watch.signal]),
      cancelRequested: () => runCancelled(journal, prepared.request.run_id),
      onCreated: (containerId) => noteCommandContainer(journal.db, attemptId, containerId, Date.now()),
      ...(context.drainMs === undefined ? {} : { drainMs: context.drainMs }),
      ...(context.graceMs === undefined ? {} : { graceMs: context.graceMs }),
    });
  } catch (error) {
    // Not an engine answer but a local failure (e.g. the journal refused the custody note):
    // the container may exist, so the attempt is uncertain until recover reconciles it.
    const text = isAgentscmError(error) ? `${error.code}: ${error.message}` : String(error);
    return finish(
      journal,
      prepared,
      recipe,
      { ...noContainer('uncertain', text), containerCleanup: 'unconfirmed' },
      'unconfirmed',
    );
  } finally {
    clearInterval(watcher);
  }
  // The snapshot stays while the container's removal is unconfirmed, so recover can finish both.
  const snapshotCleanup: ContainerCleanup =
    observation.containerCleanup === 'unconfirmed'
      ? 'unconfirmed'
      : removeSnapshot(prepared.snapshotPath)
        ? 'removed'
        : 'unconfirmed';
  return finish(journal, prepared, recipe, observation, snapshotCleanup);
}

/**
 * Whether `skill-workflow cancel` recorded the run as cancelled (from another process, which
 * then stops the container by its custody label). A step run outside any recorded run (the
 * collector's own tests) is never cancelled this way.
 */
function runCancelled(journal: Journal, runId: string): boolean {
  try {
    return journalRead(journal, () => getRunHeader(journal, runId).state === 'cancelled');
  } catch (error) {
    if (isAgentscmError(error) && error.code === 'WORKFLOW_RUN_NOT_FOUND') return false;
    throw error;
  }
}

function finish(
  journal: Journal,
  prepared: { request: ExecutionRequest; digest: string },
  recipe: CommandRecipe,
  observation: ContainerRunObservation,
  snapshotCleanup: ContainerCleanup,
): CommandStepResult {
  const record: ExecutionRecord = buildExecutionRecord({
    request: prepared.request,
    requestDigest: prepared.digest,
    containerName: commandContainerName(prepared.request.attempt_id),
    observation,
    snapshotCleanup,
    outputLimitBytes: recipe.limits.output_bytes,
  });
  const digest = recordDigest(record);
  const attempt = finishCommandAttempt(journal.db, prepared.request.attempt_id, {
    state: attemptStateOf(record),
    outcome: record.outcome,
    recordJson: encodeCanonical(record),
    recordDigest: digest,
    summary: summarizeRecord(record),
    stdout: observation.stdout.bytes,
    stderr: observation.stderr.bytes,
    // A stream cut at the bound keeps its last bytes too (OutputCapture), for the status's output tail.
    tails: {
      ...(observation.stdout.truncated && observation.stdout.last !== undefined
        ? { stdout: observation.stdout.last }
        : {}),
      ...(observation.stderr.truncated && observation.stderr.last !== undefined
        ? { stderr: observation.stderr.last }
        : {}),
    },
    nowMs: Date.now(),
  });
  return stepResultOf(attempt);
}
