/**
 * Where a collection's signed envelope goes, and the verdict it carries (docs/collect.md):
 * `finishUpload` ends every collection; `agent-task retry-upload` sends a retained envelope
 * again and `agent-task upload` sends an envelope file as it is. The local authority's import or
 * the hub's upload route with --endpoint receives the bytes.
 */
import { join } from 'node:path';

import { shownCollectionTail, type ShownOutputTail, type ShownStreamCuts } from '../contracts/collector/output-tail.js';
import { readTransferEnvelope, TRANSFER_LIMITS, transferDigest } from '../contracts/collector/transfer.js';
import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { decodeAnyCollectorDescriptor, type AnyCollectorDescriptor } from '../contracts/review/collector-descriptor.js';
import { readBoundedInput } from '../native/bounded-input.js';
import { readTokenFile } from '../native/grant-token-file.js';
import type { Store } from '../native/store-handle.js';
import { authorizeTaskToken } from '../tasks/grant-guard.js';
import {
  collectionDir,
  openCollectState,
  readReservedDescriptor,
  readRetainedEnvelope,
  recordUploadAnswer,
  type CollectState,
} from './collect-state.js';
import { importTransfer } from './review/import.js';
import { postEnvelope } from './upload-client.js';

/** Where an envelope goes: the local authority of the data directory, or a hub endpoint. */
export interface UploadTarget {
  /**
   * The Store of the data directory opened for writing: a local upload imports into it (untouched with an endpoint).
   */
  readonly store: Store;
  readonly endpoint?: string | undefined;
  /** The grant's bearer token. */
  readonly token: string;
}

export interface UploadResult {
  readonly target: 'local' | 'endpoint';
  readonly answer: JsonValue;
}

export interface CollectResult {
  readonly upload_request_id: string;
  /** False when a retained envelope was found: nothing ran, the same bytes were uploaded again. */
  readonly ran: boolean;
  readonly task_id: string;
  readonly attempt_id: string;
  readonly outcome: string;
  readonly exit_code: number | null;
  /**
   * The last lines of stdout and stderr (at most 40 lines, 4 KiB) when the command did not pass and
   * its transfer carries a command_output_tail; else null.
   */
  readonly output_tail: ShownOutputTail | null;
  /** Per stream, whether output_tail leaves earlier output of it out; null with output_tail. */
  readonly output_tail_cut: ShownStreamCuts | null;
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
  const authorization = authorizeTaskToken({ store: target.store, token: target.token });
  return { target: 'local', answer: await importTransfer(target.store, envelope, authorization) };
}

/** The verdict an envelope carries. */
export interface EnvelopeVerdict {
  readonly outcome: string;
  readonly exit_code: number | null;
  readonly task_id: string;
  readonly attempt_id: string;
  /** The shown output tail of a command that did not pass, or null. */
  readonly output_tail: ShownOutputTail | null;
  readonly output_tail_cut: ShownStreamCuts | null;
}

/**
 * The typed record an envelope carries (the ExecutionRecord, or a review's last record: its ReviewRecord), for the
 * verdict a command prints, with the output tail when the command did not pass.
 */
export function envelopeVerdict(envelope: Buffer): EnvelopeVerdict {
  const read = readTransferEnvelope(envelope);
  const record =
    read.records.find((entry) => entry.kind === 'execution_record') ?? read.records[read.records.length - 1];
  let outcome = 'unknown';
  let exitCode: number | null = null;
  if (record !== undefined) {
    const value = parseStrictJson(record.bytes, { maxBytes: TRANSFER_LIMITS.maxEnvelopeBytes });
    if (isJsonObject(value)) {
      if (typeof value.outcome === 'string') outcome = value.outcome;
      if (typeof value.exit_code === 'number') exitCode = value.exit_code;
    }
  }
  return {
    outcome,
    exit_code: exitCode,
    task_id: read.header.task_id,
    attempt_id: read.header.attempt_id,
    ...shownCollectionTail(read.records, outcome),
  };
}
/** Upload a collection's envelope, record the answer in the state directory and report the collection. */
export async function finishUpload(
  state: CollectState,
  descriptor: AnyCollectorDescriptor,
  target: UploadTarget,
  envelope: Buffer,
  ran: boolean,
  progress: (m: string) => void,
): Promise<CollectResult> {
  const digest = transferDigest(envelope);
  progress(
    `uploading transfer ${digest} (${envelope.byteLength} bytes) to ` +
      `${target.endpoint === undefined ? 'the local authority' : target.endpoint}`,
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
    output_tail: verdict.output_tail,
    output_tail_cut: verdict.output_tail_cut,
    transfer_digest: digest,
    envelope_bytes: envelope.byteLength,
    envelope_file: join(collectionDir(state, descriptor.upload_request_id), 'envelope.agscmtr'),
    upload,
  };
}
export interface RetryUploadInput {
  /** The Store of --data-dir opened for writing (a local upload imports into it). */
  readonly store: Store;
  readonly stateDir: string;
  readonly uploadRequestId: string;
  readonly tokenFile: string;
  readonly endpoint?: string | undefined;
  readonly onProgress?: (message: string) => void;
}

/** `agentscm agent-task retry-upload`: send the identical retained bytes again. */
export async function retryUpload(input: RetryUploadInput): Promise<CollectResult> {
  const token = readTokenFile(input.tokenFile);
  const state = openCollectState(input.stateDir, input.store);
  const descriptorBytes = readReservedDescriptor(state, input.uploadRequestId);
  const envelope = descriptorBytes === null ? null : readRetainedEnvelope(state, input.uploadRequestId);
  if (descriptorBytes === null || envelope === null) {
    throw new AgentscmError(
      'COLLECT_NOT_RETAINED',
      `the state directory retains no signed envelope for upload request ${input.uploadRequestId}` +
        (descriptorBytes === null ? '' : ' (it was reserved, but its collection never signed)'),
      {
        hint:
          'name the upload_request_id of a collection this state directory completed (agent-task collect ' +
          'prints it)',
        details: { upload_request_id: input.uploadRequestId },
      },
    );
  }
  const descriptor = decodeAnyCollectorDescriptor(descriptorBytes);
  return finishUpload(
    state,
    descriptor,
    { store: input.store, endpoint: input.endpoint, token },
    envelope,
    false,
    input.onProgress ?? ((): void => undefined),
  );
}

export interface UploadFileInput {
  /** The Store of --data-dir opened for writing (a local upload imports into it). */
  readonly store: Store;
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
    missingHint: 'pass the envelope file `agentscm agent-task collect` wrote, or - to read it from stdin',
    tooLargeHint: 'an envelope is at most 16 MiB',
    stdin: true,
  });
  readTransferEnvelope(envelope);
  const token = readTokenFile(input.tokenFile);
  const upload = await uploadEnvelope({ store: input.store, endpoint: input.endpoint, token }, envelope);
  return { transfer_digest: transferDigest(envelope), envelope_bytes: envelope.byteLength, upload };
}
