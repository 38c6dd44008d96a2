/**
 * The source_paths action (spec: "source_paths reads exact files from the selected native
 * revision and compares their bytes with declared lowercase SHA-256 digests"). Every path is
 * looked up and the action's size bounds are checked before any content is read; a missing
 * path or a mismatch fails the step with that path named.
 */
import { WORKFLOW_LIMITS, type SourcePathExpectation } from '../contracts/workflow-definition.js';
import { streamBlob } from '../native/blobs.js';
import { statRevisionPath } from '../native/revisions.js';
import type { Authority } from '../native/store.js';

export type ExpectationOutcome = 'matched' | 'mismatch' | 'missing' | 'not_regular_file' | 'not_checked';

export interface SourcePathObservation {
  readonly path: string;
  readonly expected_sha256: string;
  /** SHA-256 of the bytes read, or null when nothing was read. */
  readonly actual_sha256: string | null;
  readonly size: number | null;
  readonly outcome: ExpectationOutcome;
}

export interface SourcePathsResult {
  readonly state: 'succeeded' | 'failed';
  /** null on success; otherwise one sentence naming the first failing path or the bound. */
  readonly reason: string | null;
  readonly observations: readonly SourcePathObservation[];
  readonly bytes_read: number;
}

interface Located {
  readonly expectation: SourcePathExpectation;
  readonly blob: string | null;
  readonly size: number | null;
  readonly outcome: 'present' | 'missing' | 'not_regular_file';
}

/** Check one source_paths action against a revision. Call inside one authority read snapshot. */
export function checkSourcePaths(
  auth: Authority,
  repository: string,
  revision: string,
  expectations: readonly SourcePathExpectation[],
): SourcePathsResult {
  const located: Located[] = expectations.map((expectation) => {
    const entry = statRevisionPath(auth, repository, revision, expectation.path);
    if (entry === null) return { expectation, blob: null, size: null, outcome: 'missing' };
    if (entry.mode === 'symlink')
      return { expectation, blob: null, size: Number(entry.size), outcome: 'not_regular_file' };
    return { expectation, blob: entry.blob, size: Number(entry.size), outcome: 'present' };
  });
  // Blobs are stored unencoded, so the stored object size equals the content size and the
  // 8 MiB content bound always binds before the 16 MiB encoded-read ceiling; both are checked.
  let content = 0;
  for (const item of located) if (item.outcome === 'present') content += item.size ?? 0;
  const overContent = content > WORKFLOW_LIMITS.maxAggregateContentBytes;
  const overEncoded = content > WORKFLOW_LIMITS.maxEncodedReadBytes;
  if (overContent || overEncoded) {
    const limit = overEncoded ? WORKFLOW_LIMITS.maxEncodedReadBytes : WORKFLOW_LIMITS.maxAggregateContentBytes;
    const ceiling = overEncoded ? 'encoded-object read ceiling' : 'aggregate file-content limit';
    return {
      state: 'failed',
      reason:
        `the files of this step hold ${content} bytes, more than the ${ceiling} of ${limit} bytes; ` +
        'nothing was read',
      observations: located.map((item) => ({
        path: item.expectation.path,
        expected_sha256: item.expectation.sha256,
        actual_sha256: null,
        size: item.size,
        outcome: 'not_checked',
      })),
      bytes_read: 0,
    };
  }
  let bytesRead = 0;
  let reason: string | null = null;
  const observations = located.map((item): SourcePathObservation => {
    const { path, sha256 } = item.expectation;
    if (item.outcome !== 'present' || item.blob === null) {
      reason ??=
        item.outcome === 'missing'
          ? `path "${path}" does not exist in revision ${revision}`
          : `path "${path}" is not a regular file in revision ${revision}`;
      return {
        path,
        expected_sha256: sha256,
        actual_sha256: null,
        size: item.size,
        outcome: item.outcome === 'present' ? 'missing' : item.outcome,
      };
    }
    // streamBlob hashes the exact stored bytes and throws unless they hash to the blob's
    // SHA-256, so the bytes read are proven to have digest item.blob.
    let size = 0;
    for (const chunk of streamBlob(auth, item.blob)) size += chunk.byteLength;
    bytesRead += size;
    const outcome = item.blob === sha256 ? 'matched' : 'mismatch';
    if (outcome === 'mismatch') reason ??= `path "${path}" has SHA-256 ${item.blob}, expected ${sha256}`;
    return { path, expected_sha256: sha256, actual_sha256: item.blob, size, outcome };
  });
  return { state: reason === null ? 'succeeded' : 'failed', reason, observations, bytes_read: bytesRead };
}
