/**
 * `agent-task collect` of a review descriptor (docs/review.md "Collecting a review"); see
 * collectReview.
 */
import { join } from 'node:path';

import { encodeTransferEnvelope } from '../contracts/collector/transfer.js';
import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { ReviewCollectorDescriptor } from '../contracts/review/collector-descriptor.js';
import { reviewRecordToJson } from '../contracts/review/record.js';
import { pauseAtTestPoint } from '../native/test-pause.js';
import { checkReviewDescriptorAgainstAuthority } from './collect-check.js';
import { reviewCollectionHeader } from './collect-request.js';
import { openCollection, type CollectInput } from './collect-start.js';
import { readReservedDescriptor, reserveCollection, retainEnvelope } from './collect-state.js';
import { finishUpload, type CollectResult } from './collect-upload.js';
import { createClaudeCodeTransport, pickEnvironment } from './review/claude-code-transport.js';
import { runReview } from './review/controller.js';
import { listJournalRequests, openReviewJournal } from './review/journal.js';
import { revisionReviewSources } from './review/sources.js';

/**
 * A review descriptor's collection (docs/review.md "Collecting a review"): the same order as a
 * command's — check, reserve, run, recheck, sign, retain, upload — with the finite review
 * controller over the Claude Code transport in place of the container. The executable is the
 * operator's choice, but its digest, the model and the provider scope are the profile's; the
 * review journal in the state directory reserves every call before it is made, so a collection
 * reopened after a crash reuses every answered call and never makes a reserved one again (the
 * record is then uncertain).
 */
export async function collectReview(
  input: CollectInput,
  descriptor: ReviewCollectorDescriptor,
): Promise<CollectResult> {
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
        hint:
          'pass --review-executable with the absolute path of the Claude Code executable whose SHA-256 the ' +
          'profile pins (and --review-env for each variable it needs)',
        details: { task_id: descriptor.task.task_id },
      },
    );
  }
  progress(
    `checking the descriptor against the authority (task ${descriptor.task.task_id}, attempt ` +
      `${descriptor.attempt.attempt_id})`,
  );
  const binding = checkReviewDescriptorAgainstAuthority(input.store, descriptor, target.token);
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
      `the review executable ${input.reviewExecutable} has SHA-256 ` +
        `${String(transport.identity.executable_sha256)}; the finite-review profile pins ` +
        `${descriptor.transport.executable_sha256}`,
      {
        hint:
          'run the exact executable the profile pins (readlink -f "$(command -v claude)"), or install a ' +
          'profile pinning this one',
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
    const auth = input.store.authority();
    progress(
      `reviewing ${descriptor.review.action.coverage.length} path(s) of revision ${descriptor.subject.revision} ` +
        `with ${descriptor.transport.model}`,
    );
    const record = await runReview(
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
    progress(
      `the review finished: ${record.outcome} after ${record.calls.length} call(s); rechecking the authority ` +
        'before signing',
    );
    pauseAtTestPoint('collect:before-signing');
    checkReviewDescriptorAgainstAuthority(input.store, descriptor, target.token);
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
