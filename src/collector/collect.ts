/**
 * `agent-task collect`, `retry-upload` and `upload` (spec "Operator-enrolled collector
 * transfer"; docs/collect.md). A collection runs, in this order:
 * 1. decode the descriptor strictly; load the key (it must be the key the descriptor's executor
 *    names); open the owner-private state directory;
 * 2. a collection already reserved under the descriptor's upload request id is never run again:
 *    a retained envelope is uploaded as it is, a reservation without one is COLLECT_INTERRUPTED
 *    (a review's reopens from its journal instead, collectReview);
 * 3. recompile the descriptor against the authority of --data-dir and recheck the grant, task
 *    and attempt (collect-check.ts); observe the runtime identity, which must be the pinned one;
 * 4. reserve the collection durably in the state directory, before any container exists;
 * 5. materialize the exact revision, run the recipe with the OCI command collector, remove the
 *    snapshot, build the ExecutionRecord;
 * 6. recheck the authority, build and sign the transfer header, retain the envelope durably;
 * 7. upload it (the local authority's import, or the hub's upload route with --endpoint).
 * A typed failed record is a completed collection like a passing one: the verdict is reported,
 * qualification decides what it means.
 */
import { dirname, join, resolve } from 'node:path';

import {
  encodeTransferEnvelope,
  readTransferEnvelope,
  TRANSFER_LIMITS,
  transferDigest,
} from '../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import {
  decodeAnyCollectorDescriptor,
  encodeAnyCollectorDescriptor,
  isReviewDescriptor,
  MAX_REVIEW_DESCRIPTOR_BYTES,
  type AnyCollectorDescriptor,
  type ReviewCollectorDescriptor,
} from '../contracts/review/collector-descriptor.js';
import { reviewRecordToJson } from '../contracts/review/record.js';
import { sha256Hex } from '../crypto/sha256.js';
import { readBoundedInput } from '../native/bounded-input.js';
import { readTokenFile } from '../native/grant-token-file.js';
import { openAuthority } from '../native/store.js';
import { pauseAtTestPoint } from '../native/test-pause.js';
import { authorizeTaskToken } from '../tasks/grant-guard.js';
import { findEnclosingWorkspace } from '../workspace/locate.js';
import { checkDescriptorAgainstAuthority, checkReviewDescriptorAgainstAuthority } from './collect-check.js';
import {
  collectionHeader,
  collectionIsolation,
  collectionRecords,
  collectionRequest,
  reviewCollectionHeader,
} from './collect-request.js';
import {
  collectionDir,
  openCollectState,
  readReservedDescriptor,
  readRetainedEnvelope,
  recordUploadAnswer,
  reserveCollection,
  retainEnvelope,
  type CollectState,
} from './collect-state.js';
import { connectRuntime } from './command-step-runtime.js';
import type { DockerTransport } from './docker-transport.js';
import { buildExecutionRecord, requestDigest, type ExecutionRecord } from './execution-record.js';
import { loadSigningKey } from './key-store.js';
import { LABELS, runContainer, type ContainerCleanup, type ContainerRunObservation } from './oci-command-collector.js';
import { revisionReviewSources, runReview } from './review/controller.js';
import { importTransfer } from './review/import.js';
import { listJournalRequests, openReviewJournal } from './review/journal.js';
import { createClaudeCodeTransport, pickEnvironment } from './review/transports.js';
import { observeRuntimeIdentity, runtimeIdentityDigest } from './runtime-identity.js';
import { materializeSnapshot, removeSnapshot, snapshotPathFor } from './snapshot.js';
import { postEnvelope } from './upload-client.js';

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

/** Where an envelope goes: the local authority of the data directory, or a hub endpoint. */
export interface UploadTarget {
  readonly dataDir: string;
  readonly endpoint?: string | undefined;
  /** The grant's bearer token. */
  readonly token: string;
}

export interface UploadResult {
  readonly target: 'local' | 'endpoint';
  readonly answer: JsonValue;
}

export interface CollectInput {
  readonly dataDir: string;
  readonly descriptorFile: string;
  readonly keyFile: string;
  readonly stateDir: string;
  /** A command descriptor needs both (USAGE without them); a review descriptor neither. */
  readonly docker?: string | undefined;
  readonly dockerSocket?: string | undefined;
  readonly tokenFile: string;
  readonly endpoint?: string | undefined;
  /** The agentscm version written into the transfer header. */
  readonly agentscmVersion: string;
  readonly onProgress?: (message: string) => void;
  /** Replaces the engine transport (fault injection in tests). */
  readonly transport?: DockerTransport;
  /** A review descriptor: the operator-selected Claude Code executable (absolute path) the profile pins by digest. */
  readonly reviewExecutable?: string | undefined;
  /** A review descriptor: names of the variables passed to the executable (nothing else is). */
  readonly reviewEnv?: readonly string[] | undefined;
}

export interface CollectResult {
  readonly upload_request_id: string;
  /** False when a retained envelope was found: nothing ran, the same bytes were uploaded again. */
  readonly ran: boolean;
  readonly task_id: string;
  readonly attempt_id: string;
  readonly outcome: string;
  readonly exit_code: number | null;
  readonly transfer_digest: string;
  readonly envelope_bytes: number;
  readonly envelope_file: string;
  readonly upload: UploadResult;
}

/** Send an envelope: into the local authority's import, or to the hub's upload route. */
export async function uploadEnvelope(target: UploadTarget, envelope: Buffer): Promise<UploadResult> {
  if (target.endpoint !== undefined) {
    const answer = await postEnvelope({ endpoint: target.endpoint, token: target.token, envelope });
    return { target: 'endpoint', answer: answer.answer };
  }
  const authorization = authorizeTaskToken({ dataDir: target.dataDir, token: target.token });
  return { target: 'local', answer: await importTransfer(target.dataDir, envelope, authorization) };
}

/** The typed record an envelope carries (its last record: the ExecutionRecord or ReviewRecord), for the verdict a command prints. */
export function envelopeVerdict(envelope: Buffer): {
  outcome: string;
  exit_code: number | null;
  task_id: string;
  attempt_id: string;
} {
  const read = readTransferEnvelope(envelope);
  const record = read.records[read.records.length - 1];
  let outcome = 'unknown';
  let exitCode: number | null = null;
  if (record !== undefined) {
    const value = parseStrictJson(record.bytes, { maxBytes: TRANSFER_LIMITS.maxEnvelopeBytes });
    if (isJsonObject(value)) {
      if (typeof value.outcome === 'string') outcome = value.outcome;
      if (typeof value.exit_code === 'number') exitCode = value.exit_code;
    }
  }
  return { outcome, exit_code: exitCode, task_id: read.header.task_id, attempt_id: read.header.attempt_id };
}

function keyOf(keyFile: string, descriptor: AnyCollectorDescriptor): Uint8Array {
  const workspace = findEnclosingWorkspace(dirname(resolve(keyFile)));
  if (workspace !== null) {
    throw new AgentscmError(
      'COLLECT_STATE_UNSAFE',
      `the key file ${resolve(keyFile)} is inside the agentscm workspace ${workspace}, where a checkpoint would record it`,
      {
        hint: 'keep the key in a state directory outside every workspace',
      },
    );
  }
  const key = loadSigningKey(keyFile);
  const keyId = key.keyId;
  if (keyId !== descriptor.executor.verification_key_id) {
    throw new AgentscmError(
      'COLLECT_KEY_MISMATCH',
      `the key file holds key ${keyId}, not the key ${descriptor.executor.verification_key_id} of registration ${descriptor.executor.registration_id} the descriptor names`,
      {
        hint: 'pass the key file that was enrolled for this registration (agentscm agent-task key --state-dir, then enroll its public key)',
        details: { registration_id: descriptor.executor.registration_id },
      },
    );
  }
  return key.privateKey;
}

async function finishUpload(
  state: CollectState,
  descriptor: AnyCollectorDescriptor,
  target: UploadTarget,
  envelope: Buffer,
  ran: boolean,
  progress: (m: string) => void,
): Promise<CollectResult> {
  const digest = transferDigest(envelope);
  progress(
    `uploading transfer ${digest} (${envelope.byteLength} bytes) to ${target.endpoint === undefined ? 'the local authority' : target.endpoint}`,
  );
  const upload = await uploadEnvelope(target, envelope);
  recordUploadAnswer(state, descriptor.upload_request_id, encodeCanonical(upload.answer));
  const verdict = envelopeVerdict(envelope);
  return {
    upload_request_id: descriptor.upload_request_id,
    ran,
    task_id: verdict.task_id,
    attempt_id: verdict.attempt_id,
    outcome: verdict.outcome,
    exit_code: verdict.exit_code,
    transfer_digest: digest,
    envelope_bytes: envelope.byteLength,
    envelope_file: join(collectionDir(state, descriptor.upload_request_id), 'envelope.agscmtr'),
    upload,
  };
}

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

/** What both kinds of collection start from: the descriptor's bytes, the key, the state directory and the upload target. */
function openCollection(
  input: CollectInput,
  descriptor: AnyCollectorDescriptor,
): { descriptorBytes: Buffer; privateKey: Uint8Array; state: CollectState; target: UploadTarget; id: string } {
  const descriptorBytes = encodeAnyCollectorDescriptor(descriptor);
  const privateKey = keyOf(input.keyFile, descriptor);
  const token = readTokenFile(input.tokenFile);
  const state = openCollectState(input.stateDir, input.dataDir);
  return {
    descriptorBytes,
    privateKey,
    state,
    target: { dataDir: input.dataDir, endpoint: input.endpoint, token },
    id: descriptor.upload_request_id,
  };
}

/** `agentscm agent-task collect` (see module comment). */
export async function collect(input: CollectInput): Promise<CollectResult> {
  const progress = input.onProgress ?? ((): void => undefined);
  const decoded = decodeAnyCollectorDescriptor(
    readBoundedInput(input.descriptorFile, {
      limit: MAX_REVIEW_DESCRIPTOR_BYTES,
      what: 'the collector descriptor',
      tooLargeHint: 'a command descriptor holds one recipe and its bindings; a review descriptor one review action',
    }),
  );
  if (isReviewDescriptor(decoded)) return collectReview(input, decoded);
  const descriptor = decoded;
  if (input.docker === undefined || input.dockerSocket === undefined) {
    throw new AgentscmError('USAGE', 'a command descriptor needs --docker and --docker-socket', {
      hint: "pass the docker executable and the Docker Engine socket the profile's runtime identity was probed with",
    });
  }
  const docker = input.docker;
  const dockerSocket = input.dockerSocket;
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
    `checking the descriptor against the authority (task ${descriptor.task.task_id}, attempt ${descriptor.attempt.attempt_id})`,
  );
  const binding = checkDescriptorAgainstAuthority(input.dataDir, descriptor, target.token);
  const { client, executableSha256 } = await connectRuntime({
    docker,
    dockerSocket,
    ...(input.transport === undefined ? {} : { transport: input.transport }),
  });
  let envelope: Buffer;
  try {
    const { identity } = await observeRuntimeIdentity(client, { image: descriptor.recipe.image, executableSha256 });
    const observed = runtimeIdentityDigest(identity);
    if (observed !== descriptor.runtime_identity_digest) {
      throw new AgentscmError(
        'COLLECT_RUNTIME_MISMATCH',
        `the runtime identity observed now has SHA-256 ${observed}; the collector profile pins ${descriptor.runtime_identity_digest}`,
        {
          hint: 'run on the engine, image and docker executable the profile was made for (agentscm agent-task runtime-probe shows the identity)',
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
    const auth = openAuthority(input.dataDir, { mode: 'read' });
    try {
      materializeSnapshot(auth, {
        repository: descriptor.repository_id,
        revision: descriptor.subject.revision,
        parent: state.snapshots,
        digest: snapshotPath.slice(-64),
      });
    } catch (error) {
      observation = noContainer(isAgentscmError(error) ? `${error.code}: ${error.message}` : String(error));
    } finally {
      auth.close();
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
      `the command finished: ${record.outcome}${record.exit_code === null ? '' : ` (exit ${record.exit_code})`}; rechecking the authority before signing`,
    );
    pauseAtTestPoint('collect:before-signing');
    checkDescriptorAgainstAuthority(input.dataDir, descriptor, target.token);
    const records = collectionRecords(request, record);
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

/**
 * A review descriptor's collection (docs/review.md "Collecting a review"): the same order as a
 * command's — check, reserve, run, recheck, sign, retain, upload — with the finite review
 * controller over the Claude Code transport in place of the container. The executable is the
 * operator's choice, but its digest, the model and the provider scope are the profile's; the
 * review journal in the state directory reserves every call before it is made, so a collection
 * reopened after a crash reuses every answered call and never makes a reserved one again (the
 * record is then uncertain).
 */
async function collectReview(input: CollectInput, descriptor: ReviewCollectorDescriptor): Promise<CollectResult> {
  const progress = input.onProgress ?? ((): void => undefined);
  const { descriptorBytes, privateKey, state, target, id } = openCollection(input, descriptor);
  if (readReservedDescriptor(state, id) !== null) {
    const reopened = reserveCollection(state, id, descriptorBytes, { reopen: true });
    if (reopened.state === 'retained') {
      progress(`upload request ${id} already retains its signed envelope; nothing runs again`);
      return finishUpload(state, descriptor, target, reopened.envelope, false, progress);
    }
    progress(
      `upload request ${id} was reserved before; the review reopens from its journal and makes no retained call again`,
    );
  }
  if (input.reviewExecutable === undefined) {
    throw new AgentscmError(
      'REVIEW_RUNTIME_NOT_CONFIGURED',
      `the descriptor names review task ${descriptor.task.task_id}, and no review executable was given`,
      {
        hint: 'pass --review-executable with the absolute path of the Claude Code executable whose SHA-256 the profile pins (and --review-env for each variable it needs)',
        details: { task_id: descriptor.task.task_id },
      },
    );
  }
  progress(
    `checking the descriptor against the authority (task ${descriptor.task.task_id}, attempt ${descriptor.attempt.attempt_id})`,
  );
  const binding = checkReviewDescriptorAgainstAuthority(input.dataDir, descriptor, target.token);
  const transport = createClaudeCodeTransport({
    executable: input.reviewExecutable,
    workDir: join(state.root, 'review', 'work'),
    env: pickEnvironment(input.reviewEnv ?? []),
    model: descriptor.transport.model,
    providerScope: descriptor.transport.provider_scope,
  });
  if (transport.identity.executable_sha256 !== descriptor.transport.executable_sha256) {
    throw new AgentscmError(
      'COLLECT_RUNTIME_MISMATCH',
      `the review executable ${input.reviewExecutable} has SHA-256 ${String(transport.identity.executable_sha256)}; the finite-review profile pins ${descriptor.transport.executable_sha256}`,
      {
        hint: 'run the exact executable the profile pins (readlink -f "$(command -v claude)"), or install a profile pinning this one',
        details: { observed: transport.identity.executable_sha256 },
      },
    );
  }
  const reserved = reserveCollection(state, id, descriptorBytes, { reopen: true });
  if (reserved.state === 'retained') return finishUpload(state, descriptor, target, reserved.envelope, false, progress);
  pauseAtTestPoint('collect:after-reservation');

  const journal = openReviewJournal(state.root);
  let envelope: Buffer;
  try {
    const auth = openAuthority(input.dataDir, { mode: 'read' });
    let record;
    try {
      progress(
        `reviewing ${descriptor.review.action.coverage.length} path(s) of revision ${descriptor.subject.revision} with ${descriptor.transport.model}`,
      );
      record = await runReview(
        {
          repository: descriptor.repository_id,
          revision: descriptor.subject.revision,
          action: descriptor.review.action,
          policyBytes: binding.policyBytes,
        },
        {
          sources: revisionReviewSources(auth, descriptor.repository_id, descriptor.subject.revision),
          transport,
          journal,
        },
      );
    } finally {
      auth.close();
    }
    progress(
      `the review finished: ${record.outcome} after ${record.calls.length} call(s); rechecking the authority before signing`,
    );
    pauseAtTestPoint('collect:before-signing');
    checkReviewDescriptorAgainstAuthority(input.dataDir, descriptor, target.token);
    const requests = listJournalRequests(journal, record.review_id);
    if (requests.length !== record.calls.length)
      throw new AgentscmError(
        'INTERNAL',
        `the review journal holds ${requests.length} request(s) for ${record.calls.length} recorded call(s)`,
      );
    const records = [...requests, encodeCanonical(reviewRecordToJson(record))];
    envelope = encodeTransferEnvelope(
      reviewCollectionHeader(descriptor, record.review_id, records, input.agentscmVersion),
      records,
      privateKey,
    );
    retainEnvelope(state, id, envelope);
    progress(`retained the signed envelope (${envelope.byteLength} bytes)`);
  } finally {
    journal.close();
  }
  pauseAtTestPoint('collect:after-retention');
  return finishUpload(state, descriptor, target, envelope, true, progress);
}

export interface RetryUploadInput {
  readonly dataDir: string;
  readonly stateDir: string;
  readonly uploadRequestId: string;
  readonly tokenFile: string;
  readonly endpoint?: string | undefined;
  readonly onProgress?: (message: string) => void;
}

/** `agentscm agent-task retry-upload`: send the identical retained bytes again. */
export async function retryUpload(input: RetryUploadInput): Promise<CollectResult> {
  const token = readTokenFile(input.tokenFile);
  const state = openCollectState(input.stateDir, input.dataDir);
  const descriptorBytes = readReservedDescriptor(state, input.uploadRequestId);
  const envelope = descriptorBytes === null ? null : readRetainedEnvelope(state, input.uploadRequestId);
  if (descriptorBytes === null || envelope === null) {
    throw new AgentscmError(
      'COLLECT_NOT_RETAINED',
      `the state directory retains no signed envelope for upload request ${input.uploadRequestId}${descriptorBytes === null ? '' : ' (it was reserved, but its collection never signed)'}`,
      {
        hint: 'name the upload_request_id of a collection this state directory completed (agent-task collect prints it)',
        details: { upload_request_id: input.uploadRequestId },
      },
    );
  }
  const descriptor = decodeAnyCollectorDescriptor(descriptorBytes);
  return finishUpload(
    state,
    descriptor,
    { dataDir: input.dataDir, endpoint: input.endpoint, token },
    envelope,
    false,
    input.onProgress ?? ((): void => undefined),
  );
}

export interface UploadFileInput {
  readonly dataDir: string;
  readonly envelopeFile: string;
  readonly tokenFile: string;
  readonly endpoint?: string | undefined;
}

export interface UploadFileResult {
  readonly transfer_digest: string;
  readonly envelope_bytes: number;
  readonly upload: UploadResult;
}

/** `agentscm agent-task upload ENVELOPE`: upload an envelope file as it is (framing checked first). */
export async function uploadEnvelopeFile(input: UploadFileInput): Promise<UploadFileResult> {
  const envelope = readBoundedInput(input.envelopeFile, {
    limit: TRANSFER_LIMITS.maxEnvelopeBytes,
    what: 'the transfer envelope',
    tooLargeHint: 'an envelope is at most 16 MiB',
    stdin: true,
  });
  readTransferEnvelope(envelope);
  const token = readTokenFile(input.tokenFile);
  const upload = await uploadEnvelope({ dataDir: input.dataDir, endpoint: input.endpoint, token }, envelope);
  return { transfer_digest: transferDigest(envelope), envelope_bytes: envelope.byteLength, upload };
}
