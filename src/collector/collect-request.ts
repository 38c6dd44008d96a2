/**
 * The ExecutionRequest of a collection and the transfer header that carries it (docs/wire.md
 * "Collector transfer envelope v1"; docs/collect.md "What is signed"). The request is the
 * command collector's own command/v1 ExecutionRequest, filled from the descriptor, the step and
 * recipe file the authority binds, and the runtime identity observed now, by the same function
 * the authority rebuilds it with before it compares the bytes. Pure.
 */
import type { CommandRecipe } from '../contracts/collector/command-recipe.js';
import type { CollectorDescriptor } from '../contracts/collector/descriptor.js';
import { buildOutputTail, encodeOutputTail } from '../contracts/collector/output-tail.js';
import { transferRecordEntry, type TransferHeader } from '../contracts/collector/transfer.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import type { AnyCollectorDescriptor, ReviewCollectorDescriptor } from '../contracts/review/collector-descriptor.js';
import { reviewTransportDigest } from '../contracts/review/request.js';
import { transferExecutionRequest, transferIsolation } from '../tasks/collector/execution.js';
import { requestDigest, type ExecutionRecord, type ExecutionRequest } from './execution-record.js';
import type { ContainerRunObservation } from './oci-command-collector.js';
import { tailSourceOf } from './output-capture.js';
import type { RuntimeIdentity } from './runtime-identity.js';

/** What the authority binds beyond the descriptor (collect-check.ts). */
export interface RequestBinding {
  readonly stepId: string;
  readonly recipePath: string;
  readonly recipeDigest: string;
}

/**
 * The ExecutionRequest of a collection, built by the one function the authority's import also
 * rebuilds it with (src/tasks/collector/execution.ts): attempt_id the claimed attempt,
 * generation its fence, run_id the task id, step_id the profile's step, recipe_path and
 * recipe_digest the step's recipe file, recipe the descriptor's (the profile's) recipe, the
 * descriptor's subject, and the runtime identity observed now.
 */
export function collectionRequest(
  descriptor: CollectorDescriptor,
  binding: RequestBinding,
  identity: RuntimeIdentity,
): ExecutionRequest {
  return transferExecutionRequest({
    descriptor,
    step_id: binding.stepId,
    recipe_path: binding.recipePath,
    recipe_digest: binding.recipeDigest,
    runtime_identity: identity,
  }) as ExecutionRequest;
}

/**
 * The isolation statement the ExecutionRecord of a transfer carries as `isolation`, as the
 * import expects it: what containerSpec (oci-command-collector.ts) gives every container —
 * network none, the source read-only, the non-root user, no capabilities, no-new-privileges,
 * the recipe's limits.
 */
export function collectionIsolation(recipe: CommandRecipe): JsonObject {
  return transferIsolation(recipe);
}

/**
 * The canonical bytes of the records, in transfer order: the ExecutionRequest, the ExecutionRecord
 * and the command_output_tail of the observed streams (its counts are the record's observed_bytes).
 */
export function collectionRecords(
  request: ExecutionRequest,
  record: ExecutionRecord & { isolation: JsonObject },
  observation: Pick<ContainerRunObservation, 'stdout' | 'stderr'>,
): [Buffer, Buffer, Buffer] {
  const tail = buildOutputTail(
    { last: tailSourceOf(observation.stdout), total: record.stdout.observed_bytes },
    { last: tailSourceOf(observation.stderr), total: record.stderr.observed_bytes },
  );
  return [encodeCanonical(request), encodeCanonical(record), encodeOutputTail(tail)];
}

/** The bindings of a transfer header that every kind of descriptor gives, in header order. */
function headerBindings(
  descriptor: AnyCollectorDescriptor,
): Omit<TransferHeader, 'version' | 'request_digest' | 'collector' | 'upload_request_id' | 'records'> {
  return {
    audience: descriptor.authority_id,
    repository_id: descriptor.repository_id,
    collector_profile_id: descriptor.collector_profile_id,
    task_id: descriptor.task.task_id,
    task_digest: descriptor.task.task_digest,
    attempt_id: descriptor.attempt.attempt_id,
    attempt_digest: descriptor.attempt.attempt_digest,
    execution_operation_id: descriptor.attempt.execution_operation_id,
    fence: descriptor.attempt.fence,
    origin: descriptor.origin,
    executor: descriptor.executor,
  };
}

/** The transfer header of a collection (every binding copied from the descriptor). */
export function collectionHeader(
  descriptor: CollectorDescriptor,
  request: ExecutionRequest,
  records: readonly [Buffer, Buffer] | readonly [Buffer, Buffer, Buffer],
  agentscmVersion: string,
): TransferHeader {
  return {
    version: 1,
    ...headerBindings(descriptor),
    request_digest: requestDigest(request),
    collector: { agentscm_version: agentscmVersion, runtime_identity_digest: descriptor.runtime_identity_digest },
    upload_request_id: descriptor.upload_request_id,
    records: [
      transferRecordEntry('execution_request', records[0]),
      transferRecordEntry('execution_record', records[1]),
      ...(records[2] === undefined ? [] : [transferRecordEntry('command_output_tail', records[2])]),
    ],
  };
}

/**
 * The transfer header of a review collection: every binding copied from the descriptor, the
 * review id of the installed review as `request_digest`, and the SHA-256 of the pinned transport
 * identity (basis, executable digest, provider scope, model) as the collector's identity.
 */
export function reviewCollectionHeader(
  descriptor: ReviewCollectorDescriptor,
  reviewId: string,
  records: readonly Buffer[],
  agentscmVersion: string,
): TransferHeader {
  const last = records.length - 1;
  return {
    version: 1,
    ...headerBindings(descriptor),
    request_digest: reviewId,
    collector: {
      agentscm_version: agentscmVersion,
      runtime_identity_digest: reviewTransportDigest(descriptor.transport),
    },
    upload_request_id: descriptor.upload_request_id,
    records: records.map((bytes, index) =>
      transferRecordEntry(index === last ? 'review_record' : 'review_request', bytes),
    ),
  };
}
