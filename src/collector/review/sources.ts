/**
 * The review's sources: bounded reads of the exact immutable revision, cut into excerpts on UTF-8
 * boundaries and packed into calls in coverage order (docs/review.md "How the controller works").
 * No model call is made here: the controller (controller.ts) makes them.
 */
import type { ReviewAction, ReviewPolicy } from '../../contracts/review/policy.js';
import type { CoverageState } from '../../contracts/review/record.js';
import { MAX_REQUEST_EXCERPTS, type ReviewExcerpt } from '../../contracts/review/request.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { readRevisionFile, statRevisionPath } from '../../native/revisions.js';
import type { Authority } from '../../native/store.js';

/** One coverage path as the revision holds it. */
export type ReviewSource =
  | { readonly state: 'file'; readonly bytes: Buffer }
  | { readonly state: 'missing' | 'not_regular_file' }
  | { readonly state: 'too_large'; readonly size: number };

/** Read access to the exact immutable revision under review. */
export interface ReviewSources {
  /** The file at `path`, refused unread (too_large) above `maxBytes`. */
  read(path: string, maxBytes: number): ReviewSource;
}

/** The sources of one immutable native revision (the authority's revision reader, bounded reads). */
export function revisionReviewSources(auth: Authority, repository: string, revision: string): ReviewSources {
  return {
    read(path: string, maxBytes: number): ReviewSource {
      const entry = statRevisionPath(auth, repository, revision, path);
      if (entry === null) return { state: 'missing' };
      if (entry.mode === 'symlink') return { state: 'not_regular_file' };
      if (entry.size > BigInt(maxBytes)) return { state: 'too_large', size: Number(entry.size) };
      return { state: 'file', bytes: readRevisionFile(auth, repository, revision, path, { maxBytes }) };
    },
  };
}

/** Excerpts are cut on a UTF-8 character boundary, so one holds at least one whole character. */
const MIN_EXCERPT_BYTES = 4;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface PlannedFile {
  readonly path: string;
  readonly state: CoverageState;
  readonly sha256: string | null;
  readonly size: number;
}

export interface PlannedExcerpt extends ReviewExcerpt {
  readonly fileIndex: number;
}

function excerptsOf(path: string, fileIndex: number, bytes: Buffer, sha256: string, size: number): PlannedExcerpt[] {
  const out: PlannedExcerpt[] = [];
  const text = (start: number, end: number): string => bytes.subarray(start, end).toString('utf8');
  if (bytes.length === 0)
    return [{ path, file_sha256: sha256, file_bytes: 0, offset: 0, length: 0, text: '', fileIndex }];
  let offset = 0;
  while (offset < bytes.length) {
    let end = Math.min(offset + size, bytes.length);
    // Never cut inside a character: back off over continuation bytes (10xxxxxx).
    while (end < bytes.length && end > offset && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    out.push({
      path,
      file_sha256: sha256,
      file_bytes: bytes.length,
      offset,
      length: end - offset,
      text: text(offset, end),
      fileIndex,
    });
    offset = end;
  }
  return out;
}

/** Read every coverage path (bounded by the input budget) and cut the excerpts, in coverage order. */
export function planSources(
  action: ReviewAction,
  policy: ReviewPolicy,
  sources: ReviewSources,
): { files: PlannedFile[]; excerpts: PlannedExcerpt[] } {
  const size = Math.max(MIN_EXCERPT_BYTES, Math.min(policy.max_excerpt_bytes, policy.max_call_excerpt_bytes));
  const files: PlannedFile[] = [];
  const excerpts: PlannedExcerpt[] = [];
  action.coverage.forEach((path, fileIndex) => {
    // A file larger than the whole input budget can never be covered: it is not read.
    const source = sources.read(path, action.budgets.input_bytes);
    if (source.state !== 'file' && source.state !== 'too_large') {
      files.push({ path, state: source.state, sha256: null, size: 0 });
      return;
    }
    if (source.state === 'too_large') {
      files.push({ path, state: 'not_covered', sha256: null, size: source.size });
      return;
    }
    const sha256 = sha256Hex(source.bytes);
    try {
      UTF8.decode(source.bytes);
    } catch {
      files.push({ path, state: 'not_utf8', sha256, size: source.bytes.length });
      return;
    }
    files.push({ path, state: 'not_covered', sha256, size: source.bytes.length });
    excerpts.push(...excerptsOf(path, fileIndex, source.bytes, sha256, size));
  });
  return { files, excerpts };
}

/** Pack excerpts greedily, in order, into calls of at most max_call_excerpt_bytes. */
export function packCalls(excerpts: readonly PlannedExcerpt[], policy: ReviewPolicy): PlannedExcerpt[][] {
  const calls: PlannedExcerpt[][] = [];
  let current: PlannedExcerpt[] = [];
  let bytes = 0;
  for (const excerpt of excerpts) {
    if (
      current.length > 0 &&
      (bytes + excerpt.length > policy.max_call_excerpt_bytes || current.length === MAX_REQUEST_EXCERPTS)
    ) {
      calls.push(current);
      current = [];
      bytes = 0;
    }
    current.push(excerpt);
    bytes += excerpt.length;
  }
  if (current.length > 0) calls.push(current);
  return calls;
}
