/**
 * The ExecutionRequest and ExecutionRecord of a collector transfer, as both sides compute them
 * (docs/collector-transfer.md "Records"). Pure: the collector (`agent-task collect`, layer
 * collector/) builds its request and isolation statement with these functions, and the
 * authority import regenerates the request with the same function from what it holds — the
 * installed profile's recipe, the task's exact revision and context — so neither side can
 * drift from the other. The record is checked field by field; success flags alone never
 * qualify.
 */
import type { CommandRecipe } from '../../contracts/collector/command-recipe.js';
import { recipeToJson, type CollectorDescriptor } from '../../contracts/collector/descriptor.js';
import { AgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import { parseStrictJson } from '../../contracts/json/strict-json.js';
import { sha256Hex } from '../../crypto/sha256.js';

/** The user every collector container runs as (not root). */
export const TRANSFER_CONTAINER_USER = '65534:65534';

/**
 * The inputs of a transfer's ExecutionRequest beyond the descriptor (read from the installed profile and the task's
 * plan step).
 */
export interface TransferRequestInput {
  readonly descriptor: CollectorDescriptor;
  /** The step the profile binds. */
  readonly step_id: string;
  /** Native path of the recipe file in the requirement's skill package. */
  readonly recipe_path: string;
  /** SHA-256 of the recipe file's exact bytes (the profile's recipe_digest). */
  readonly recipe_digest: string;
  /** The observed runtime identity; its canonical SHA-256 must be the profile's runtime_identity_digest. */
  readonly runtime_identity: JsonObject;
}

/** SHA-256 of a runtime identity's canonical bytes (the digest a profile pins). */
export function transferRuntimeIdentityDigest(identity: JsonObject): string {
  return sha256Hex(encodeCanonical(identity));
}

/**
 * The ExecutionRequest (kind command/v1) of a collector attempt: the collector's own request
 * shape, with run_id = the task id and generation = the attempt's fence.
 */
export function transferExecutionRequest(input: TransferRequestInput): JsonObject {
  const { descriptor } = input;
  return {
    version: 1,
    kind: 'command/v1',
    attempt_id: descriptor.attempt.attempt_id,
    generation: descriptor.attempt.fence,
    run_id: descriptor.task.task_id,
    step_id: input.step_id,
    repository: descriptor.repository_id,
    revision: descriptor.subject.revision,
    policy_epoch: descriptor.subject.policy_epoch,
    change: { repository: descriptor.repository_id, id: descriptor.subject.change_id },
    change_version: descriptor.subject.change_version,
    context_digest: descriptor.subject.context_digest,
    recipe_path: input.recipe_path,
    recipe_digest: input.recipe_digest,
    recipe: recipeToJson(descriptor.recipe),
    runtime_identity: input.runtime_identity,
    runtime_identity_digest: transferRuntimeIdentityDigest(input.runtime_identity),
  };
}

/** The canonical bytes of a request (the `execution_request` record). */
export function encodeTransferRequest(request: JsonObject): Buffer {
  return encodeCanonical(request);
}

/**
 * The isolation statement an ExecutionRecord of a transfer carries as `isolation`: exactly what
 * the OCI collector sets on every container (network none, the source mounted read-only, a
 * non-root user, every capability dropped, no-new-privileges, the recipe's limits).
 */
export function transferIsolation(recipe: CommandRecipe): JsonObject {
  return {
    network: 'none',
    source_read_only: true,
    user: TRANSFER_CONTAINER_USER,
    capabilities: [],
    no_new_privileges: true,
    limits: {
      memory_bytes: recipe.limits.memory_bytes,
      pids: recipe.limits.pids,
      cpu_millis: recipe.limits.cpu_millis,
      scratch_bytes: recipe.limits.scratch_bytes,
    },
  };
}

/** The outcome a receipt row names for an imported record. */
export type ImportedOutcome = 'passed' | 'failed' | 'unavailable' | 'uncertain';

const OUTCOMES: Record<string, ImportedOutcome> = {
  passed: 'passed',
  failed: 'failed',
  timed_out: 'failed',
  oom_killed: 'failed',
  output_limit: 'failed',
  cancelled: 'unavailable',
  runtime_error: 'unavailable',
  interrupted: 'unavailable',
  uncertain: 'uncertain',
};

/** A JSON value for a message: strings as they are, anything else as compact JSON. */
export function shown(value: JsonValue | undefined): string {
  if (value === undefined) return 'nothing';
  return typeof value === 'string' ? value : typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
}

function invalid(message: string, field: string): never {
  throw new AgentscmError('IMPORT_RECORD_INVALID', message, {
    hint: 'the collector must send the ExecutionRecord it built, unchanged',
    details: { field },
  });
}

/**
 * The most bytes an execution_request or execution_record record may hold. The collector's records
 * hold sizes and digests of the output, never the output itself, so a few KiB is their size; the
 * bound is checked before a record is parsed.
 */
export const MAX_TRANSFER_RECORD_BYTES = 64 * 1024;

/** Parse a record's bytes strictly; they must be exactly their canonical encoding. */
export function parseCanonicalRecord(
  bytes: Uint8Array,
  code: 'IMPORT_RECORD_INVALID' | 'IMPORT_REQUEST_MISMATCH',
  what: string,
): JsonObject {
  if (bytes.byteLength > MAX_TRANSFER_RECORD_BYTES) {
    throw new AgentscmError(
      code,
      `the ${what} record holds ${bytes.byteLength} bytes, more than the ${MAX_TRANSFER_RECORD_BYTES} a collector ` +
        `record may hold; it was not parsed`,
      { details: { field: what, limit: MAX_TRANSFER_RECORD_BYTES } },
    );
  }
  let value: JsonValue;
  try {
    value = parseStrictJson(bytes, { maxBytes: bytes.byteLength });
  } catch (error) {
    throw new AgentscmError(code, `the ${what} record is not strict JSON`, { cause: error, details: { field: what } });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new AgentscmError(code, `the ${what} record is not a JSON object`, { details: { field: what } });
  if (!encodeCanonical(value).equals(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
    throw new AgentscmError(code, `the ${what} record is not its canonical encoding`, { details: { field: what } });
  }
  return value;
}

function obj(value: JsonValue | undefined, field: string): JsonObject {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value))
    invalid(`record field ${field} is not an object`, field);
  return value;
}

/** The members of the collector's ExecutionRecord as a transfer carries it (with its isolation statement). */
const RECORD_FIELDS = [
  'version',
  'kind',
  'attempt_id',
  'generation',
  'request_digest',
  'outcome',
  'exit_code',
  'oom_killed',
  'timed_out',
  'cancelled',
  'output_limited',
  'output_limit_bytes',
  'stdout',
  'stderr',
  'container_name',
  'container_id',
  'image_id',
  'started_at',
  'finished_at',
  'duration_ms',
  'cleanup',
  'recovered',
  'previous_record_digest',
  'error',
  'isolation',
] as const;
const STREAM_FIELDS = ['retained_bytes', 'observed_bytes', 'truncated', 'sha256'] as const;
const CLEANUP_FIELDS = ['container', 'snapshot', 'confirmed'] as const;

/** A record object holds exactly its declared members: an unknown member is refused, as everywhere on the wire. */
function closedObject(object: JsonObject, fields: readonly string[], at: string): void {
  for (const key of Object.keys(object))
    if (!fields.includes(key))
      invalid(`record member ${JSON.stringify(at + key)} is not a member of the collector's ExecutionRecord`, at + key);
  for (const key of fields)
    if (!Object.hasOwn(object, key)) invalid(`record member ${JSON.stringify(at + key)} is missing`, at + key);
}

function int(value: JsonValue | undefined, field: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return invalid(`record field ${field} is not an unsigned integer`, field);
}

/**
 * Check an ExecutionRecord against the request the authority regenerated: same attempt,
 * generation and request digest; a known outcome consistent with its flags and exit status;
 * output within the recipe's bound; the exact isolation statement; confirmed cleanup; the
 * image the runtime identity pins. Returns the outcome a receipt names.
 */
export function checkTransferRecord(
  record: JsonObject,
  request: JsonObject,
  requestDigest: string,
  recipe: CommandRecipe,
): ImportedOutcome {
  closedObject(record, RECORD_FIELDS, '');
  for (const name of ['stdout', 'stderr']) closedObject(obj(record[name], name), STREAM_FIELDS, `${name}.`);
  closedObject(obj(record.cleanup, 'cleanup'), CLEANUP_FIELDS, 'cleanup.');
  if (record.version !== 1 && record.version !== 1n) invalid('the record version is not 1', 'version');
  if (record.kind !== 'command/v1') invalid('the record kind is not command/v1', 'kind');
  if (record.attempt_id !== request.attempt_id)
    invalid(`the record names attempt ${shown(record.attempt_id)}, not ${shown(request.attempt_id)}`, 'attempt_id');
  if (int(record.generation, 'generation') !== request.generation)
    invalid('the record names another generation (fence) than the attempt', 'generation');
  if (record.request_digest !== requestDigest)
    invalid('the record names another request digest than its execution_request record', 'request_digest');
  const outcome = typeof record.outcome === 'string' ? OUTCOMES[record.outcome] : undefined;
  if (outcome === undefined)
    invalid(`the record outcome ${JSON.stringify(record.outcome)} is not a collector outcome`, 'outcome');
  const flags = {
    timed_out: record.timed_out,
    oom_killed: record.oom_killed,
    output_limited: record.output_limited,
    cancelled: record.cancelled,
  };
  for (const [field, value] of Object.entries(flags))
    if (typeof value !== 'boolean') invalid(`record field ${field} is not a boolean`, field);
  if (
    record.outcome === 'passed' &&
    ((record.exit_code !== 0 && record.exit_code !== 0n) ||
      flags.timed_out === true ||
      flags.oom_killed === true ||
      flags.output_limited === true ||
      flags.cancelled === true)
  ) {
    invalid('the record says passed but its exit status or flags say otherwise', 'outcome');
  }
  const limit = BigInt(recipe.limits.output_bytes);
  if (int(record.output_limit_bytes, 'output_limit_bytes') !== limit)
    invalid(`the record's output limit is not the recipe's ${limit} bytes`, 'output_limit_bytes');
  // The collector keeps at most output_bytes of stdout and stderr together.
  let retainedTotal = 0n;
  for (const name of ['stdout', 'stderr']) {
    const stream = obj(record[name], name);
    const retained = int(stream.retained_bytes, `${name}.retained_bytes`);
    const observed = int(stream.observed_bytes, `${name}.observed_bytes`);
    if (retained > observed)
      invalid(`${name} retains ${retained} bytes but observed only ${observed}`, `${name}.retained_bytes`);
    retainedTotal += retained;
  }
  if (retainedTotal > limit)
    invalid(
      `stdout and stderr retain ${retainedTotal} bytes together, beyond the recipe's ${limit}-byte bound`,
      'stdout.retained_bytes',
    );
  const isolation = record.isolation;
  if (isolation === undefined || !encodeCanonical(isolation).equals(encodeCanonical(transferIsolation(recipe)))) {
    throw new AgentscmError(
      'IMPORT_ISOLATION_VIOLATED',
      'the record does not state the pinned isolation (network none, read-only source, non-root, no capabilities, ' +
        'the recipe limits)',
      {
        hint: 'only the OCI collector with its fixed container configuration produces importable records',
        details: { expected: transferIsolation(recipe), got: isolation ?? null },
      },
    );
  }
  const cleanup = obj(record.cleanup, 'cleanup');
  const containerGone = cleanup.container === 'removed' || cleanup.container === 'not_created';
  const snapshotGone = cleanup.snapshot === 'removed' || cleanup.snapshot === 'not_created';
  if (cleanup.confirmed !== true || !containerGone || !snapshotGone) {
    throw new AgentscmError(
      'IMPORT_CLEANUP_UNCONFIRMED',
      `the record does not confirm cleanup (container ${shown(cleanup.container)}, snapshot ` +
        `${shown(cleanup.snapshot)}, confirmed ${shown(cleanup.confirmed)})`,
      {
        hint: 'remove the container and snapshot, then let the collector record confirmed cleanup',
      },
    );
  }
  const identity = obj(request.runtime_identity, 'runtime_identity');
  const image = obj(identity.image, 'runtime_identity.image');
  if (record.image_id !== image.id) {
    throw new AgentscmError(
      'IMPORT_RUNTIME_MISMATCH',
      `the record ran image ${shown(record.image_id)}, not the pinned ${shown(image.id)}`,
      { details: { field: 'image_id' } },
    );
  }
  return outcome;
}
