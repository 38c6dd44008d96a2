/**
 * `agent-task collect`, `retry-upload` and `upload` (docs/collect.md "What collect does, in order").
 * A collection runs, in this order:
 * 1. decode the descriptor strictly; load the key (it must be the key the descriptor's executor
 *    names); open the owner-private state directory;
 * 2. a collection already reserved under the descriptor's upload request id is never run again:
 *    a retained envelope is uploaded as it is, a reservation without one is COLLECT_INTERRUPTED
 *    (a review's reopens from its journal instead, collectReview);
 * 3. recompile the descriptor against the authority of --data-dir and recheck the grant, task
 *    and attempt (collect-check.ts) — on a host with no store, through the hub of --endpoint, which
 *    also serves every object of the revision, fetched and checked now (remote-objects/source.ts);
 *    observe the runtime identity, which must be the pinned one;
 * 4. reserve the collection durably in the state directory, before any container exists;
 * 5. materialize the exact revision, run the recipe with the OCI command collector, remove the
 *    snapshot, build the ExecutionRecord;
 * 6. recheck the authority, build and sign the transfer header, retain the envelope durably;
 * 7. upload it (the local authority's import, or the hub's upload route with --endpoint).
 * A typed failed record is a completed collection like a passing one: the verdict is reported,
 * qualification decides what it means.
 */
import { encodeTransferEnvelope } from '../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import {
  decodeAnyCollectorDescriptor,
  isReviewDescriptor,
  MAX_REVIEW_DESCRIPTOR_BYTES,
} from '../contracts/review/collector-descriptor.js';
import { sha256Hex } from '../crypto/sha256.js';
import { readBoundedInput } from '../native/bounded-input.js';
import { pauseAtTestPoint } from '../native/test-pause.js';
import { refuseStaleDepsOf } from './collect-check.js';
import { collectionHeader, collectionIsolation, collectionRecords, collectionRequest } from './collect-request.js';
import { collectReview } from './collect-review.js';
import { openCollection, type CollectInput } from './collect-start.js';
import { readReservedDescriptor, reserveCollection, retainEnvelope } from './collect-state.js';
import { finishUpload, type CollectResult } from './collect-upload.js';
import { connectRuntime } from './command-step-runtime.js';
import { DEFAULT_DOCKER_SOCKET, dockerExecutable } from './docker-path.js';
import { buildExecutionRecord, requestDigest, type ExecutionRecord } from './execution-record.js';
import { LABELS, runContainer, type ContainerCleanup, type ContainerRunObservation } from './oci-command-collector.js';
import { revisionSourceOf } from './remote-objects/source.js';
import { observeRuntimeIdentity, runtimeIdentityDigest } from './runtime-identity.js';
import { removeSnapshot, snapshotPathFor } from './snapshot.js';

/**
 * Test pause points (docs/collect.md "Test hooks"): `collect:after-reservation` (reserved, no
 * container yet), `collect:before-signing` (the command ran, the authority is not rechecked yet)
 * and `collect:after-retention` (the signed envelope is retained, nothing was uploaded).
 */
export const COLLECT_PAUSE_POINTS = [
  'collect:after-reservation',
  'collect:before-signing',
  'collect:after-retention',
] as const;

function noContainer(error: string): ContainerRunObservation {
  const empty = { bytes: Buffer.alloc(0), observedBytes: 0, truncated: false, sha256: sha256Hex(Buffer.alloc(0)) };
  return {
    outcome: 'runtime_error',
    containerId: null,
    exitCode: null,
    oomKilled: false,
    timedOut: false,
    cancelled: false,
    outputLimited: false,
    stdout: empty,
    stderr: empty,
    startedAt: null,
    finishedAt: null,
    durationMs: 0,
    containerCleanup: 'not_created',
    error,
  };
}

/** `agentscm agent-task collect` (see module comment). */
export async function collect(input: CollectInput): Promise<CollectResult> {
  const progress = input.onProgress ?? ((): void => undefined);
  const decoded = decodeAnyCollectorDescriptor(
    readBoundedInput(input.descriptorFile, {
      limit: MAX_REVIEW_DESCRIPTOR_BYTES,
      what: 'the collector descriptor',
      missingHint: 'pass the descriptor file `agentscm agent-task claim --out FILE` wrote',
      tooLargeHint: 'a command descriptor holds one recipe and its bindings; a review descriptor one review action',
    }),
  );
  if (isReviewDescriptor(decoded)) return collectReview(input, decoded);
  const descriptor = decoded;
  // Left out: the docker on PATH and the default socket; the runtime identity check below still
  // refuses a runtime other than the one the profile pins (COLLECT_RUNTIME_MISMATCH).
  const docker = dockerExecutable(input.docker);
  const dockerSocket = input.dockerSocket ?? DEFAULT_DOCKER_SOCKET;
  const { descriptorBytes, privateKey, state, target, id } = openCollection(input, descriptor);

  // A collection reserved before is never run again.
  if (readReservedDescriptor(state, id) !== null) {
    const reopened = reserveCollection(state, id, descriptorBytes);
    if (reopened.state === 'retained') {
      progress(`upload request ${id} already retains its signed envelope; nothing runs again`);
      return finishUpload(state, descriptor, target, reopened.envelope, false, progress);
    }
  }

  progress(
    `checking the descriptor against the authority (task ${descriptor.task.task_id}, attempt ` +
      `${descriptor.attempt.attempt_id})`,
  );
  const source = revisionSourceOf({
    store: input.store,
    endpoint: input.endpoint,
    token: target.token,
    stateDir: input.stateDir,
    descriptor,
    descriptorBytes,
    onFetched: progress,
  });
  const binding = await source.check();
  // From the hub: every object of the revision is fetched and checked before anything is reserved.
  await source.prefetch();
  const { client, executableSha256 } = await connectRuntime({
    docker,
    dockerSocket,
    hashCacheDir: input.stateDir,
    ...(input.transport === undefined ? {} : { transport: input.transport }),
  });
  let envelope: Buffer;
  try {
    const { identity, image } = await observeRuntimeIdentity(client, {
      image: descriptor.recipe.image,
      executableSha256,
    });
    if (!source.remote) refuseStaleDepsOf(input.store, descriptor, binding.stepId, image.labels);
    const observed = runtimeIdentityDigest(identity);
    if (observed !== descriptor.runtime_identity_digest) {
      throw new AgentscmError(
        'COLLECT_RUNTIME_MISMATCH',
        `the runtime identity observed now has SHA-256 ${observed}; the collector profile pins ` +
          `${descriptor.runtime_identity_digest}`,
        {
          hint:
            'run on the engine, image and docker executable the profile was made for (agentscm agent-task ' +
            'runtime-probe shows the identity)',
          details: { observed },
        },
      );
    }
    const request = collectionRequest(descriptor, binding, identity);
    const reserved = reserveCollection(state, id, descriptorBytes);
    if (reserved.state === 'retained')
      return await finishUpload(state, descriptor, target, reserved.envelope, false, progress);
    pauseAtTestPoint('collect:after-reservation');

    const snapshotPath = snapshotPathFor(state.snapshots, sha256Hex(Buffer.from(id, 'utf8')));
    let observation: ContainerRunObservation | null = null;
    let snapshotCleanup: ContainerCleanup;
    progress(`materializing revision ${descriptor.subject.revision}`);
    try {
      await source.materialize(state.snapshots, snapshotPath.slice(-64));
    } catch (error) {
      observation = noContainer(isAgentscmError(error) ? `${error.code}: ${error.message}` : String(error));
    }
    const containerName = `agentscm-collect-${sha256Hex(Buffer.from(id, 'utf8')).slice(0, 40)}`;
    if (observation === null) {
      progress(`running ${JSON.stringify(descriptor.recipe.argv).slice(0, 200)} in ${descriptor.recipe.image}`);
      observation = await runContainer({
        client,
        containerName,
        labels: {
          [LABELS.managed]: '1',
          [LABELS.attempt]: descriptor.attempt.attempt_id,
          [LABELS.run]: descriptor.attempt.execution_operation_id,
          [LABELS.step]: binding.stepId,
        },
        recipe: descriptor.recipe,
        imageId: identity.image.id,
        snapshotPath,
      });
      snapshotCleanup =
        observation.containerCleanup === 'unconfirmed'
          ? 'unconfirmed'
          : removeSnapshot(snapshotPath)
            ? 'removed'
            : 'unconfirmed';
    } else {
      snapshotCleanup = removeSnapshot(snapshotPath) ? 'removed' : 'unconfirmed';
    }
    const record: ExecutionRecord & { isolation: JsonObject } = {
      ...buildExecutionRecord({
        request,
        requestDigest: requestDigest(request),
        containerName,
        observation,
        snapshotCleanup,
        outputLimitBytes: descriptor.recipe.limits.output_bytes,
      }),
      isolation: collectionIsolation(descriptor.recipe),
    };
    progress(
      `the command finished: ${record.outcome}${record.exit_code === null ? '' : ` (exit ${record.exit_code})`}; ` +
        'rechecking the authority before signing',
    );
    pauseAtTestPoint('collect:before-signing');
    await source.check();
    const records = collectionRecords(request, record, observation);
    envelope = encodeTransferEnvelope(
      collectionHeader(descriptor, request, records, input.agentscmVersion),
      records,
      privateKey,
    );
    retainEnvelope(state, id, envelope);
    progress(`retained the signed envelope (${envelope.byteLength} bytes)`);
  } finally {
    await client.close();
  }
  pauseAtTestPoint('collect:after-retention');
  return finishUpload(state, descriptor, target, envelope, true, progress);
}
