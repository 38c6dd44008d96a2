/**
 * The objects of a claimed revision as a collector on another host fetches them from the hub
 * (docs/wire.md "Fetching a claimed revision"): the revision object, trees (`agentscm.tree.v1`) and
 * blobs (SHA-256), each answered as its exact bytes and checked by the caller against the digest it
 * asked for. Pure: the framing of a blob batch, its bounds, and the strict decoding of a tree or
 * revision object whose digest was just checked.
 *
 * A batch request body is N raw 32-byte SHA-256 digests (1 ≤ N ≤ maxBatchDigests). Its answer is
 *   [u32 big-endian frame count F] then F frames [32-byte SHA-256][u64 big-endian length][bytes],
 * the frames in request order, F ≤ N: the hub serves the longest prefix of the request whose bytes
 * fit maxBatchBytes (at least the first blob), and the caller asks again for the rest.
 */
import { domainDigest, DOMAINS } from '../digest.js';
import { AgentscmError } from '../errors.js';
import { ID_PATTERN } from '../ids.js';
import { workspaceNameProblem, workspacePathProblem } from '../paths.js';
import { compareTreeEntries, encodeRevision, encodeTree, TREE_ENTRY_KINDS, type TreeEntry } from '../tree.js';

export const REMOTE_LIMITS = {
  /** Digests in one batch request (the request body is 32 bytes each). */
  maxBatchDigests: 4096,
  /** Blob bytes in one batch answer; also the largest blob the hub serves. */
  maxBatchBytes: 64 * 1024 * 1024,
  /** Bytes of one tree object (a directory of many entries). */
  maxTreeBytes: 16 * 1024 * 1024,
  /** Bytes of the revision object. */
  maxRevisionBytes: 512,
} as const;

/** Bytes before each frame's content: the SHA-256 and the u64 length. */
export const FRAME_HEADER_BYTES = 40;
/** Bytes of the frame count that opens a batch answer. */
export const BATCH_COUNT_BYTES = 4;

const HEX64 = /^[0-9a-f]{64}$/;

function batchInvalid(why: string): AgentscmError {
  return new AgentscmError('REMOTE_BATCH_INVALID', `the blob batch request ${why}`, {
    hint:
      `send 1 to ${REMOTE_LIMITS.maxBatchDigests} raw 32-byte SHA-256 digests ` +
      '(docs/wire.md "Fetching a claimed revision")',
  });
}

/** The body of a batch request for `digests` (lowercase hex SHA-256). */
export function encodeBatchRequest(digests: readonly string[]): Buffer {
  if (digests.length === 0 || digests.length > REMOTE_LIMITS.maxBatchDigests)
    throw batchInvalid(`names ${digests.length} digests`);
  return Buffer.concat(
    digests.map((digest) => {
      if (!HEX64.test(digest)) throw batchInvalid('names a digest that is not 64 lowercase hex');
      return Buffer.from(digest, 'hex');
    }),
  );
}

/** The digests of a batch request body, in order (REMOTE_BATCH_INVALID when it is not one). */
export function decodeBatchRequest(body: Uint8Array): string[] {
  if (body.byteLength === 0) throw batchInvalid('is empty');
  if (body.byteLength % 32 !== 0) throw batchInvalid(`is ${body.byteLength} bytes, not a multiple of 32`);
  const count = body.byteLength / 32;
  if (count > REMOTE_LIMITS.maxBatchDigests)
    throw batchInvalid(`names ${count} digests; a batch names at most ${REMOTE_LIMITS.maxBatchDigests}`);
  const digests: string[] = [];
  for (let i = 0; i < count; i++) digests.push(Buffer.from(body.subarray(i * 32, i * 32 + 32)).toString('hex'));
  return digests;
}

/** The count that opens a batch answer. */
export function encodeBatchCount(count: number): Buffer {
  const out = Buffer.alloc(BATCH_COUNT_BYTES);
  out.writeUInt32BE(count);
  return out;
}

/** The header of one frame of a batch answer. */
export function encodeFrameHeader(digest: string, length: number): Buffer {
  const out = Buffer.alloc(FRAME_HEADER_BYTES);
  out.write(digest, 0, 32, 'hex');
  out.writeBigUInt64BE(BigInt(length), 32);
  return out;
}

export function objectMismatch(why: string): AgentscmError {
  return new AgentscmError('REMOTE_OBJECT_MISMATCH', why, {
    hint:
      'nothing was cached or run; the hub or the network between changed what it serves: check both, then ' +
      'collect again',
  });
}

/** What a batch reader reports as the answer streams in. */
export interface BatchEvents {
  /** A frame starts: its position, digest and length (already checked against the request and the bounds). */
  start(index: number, digest: string, length: number): void;
  data(chunk: Uint8Array): void;
  /** The frame's bytes are all in. */
  end(index: number): void;
}

/**
 * Parse a batch answer incrementally against the digests asked for: frame i must name asked[i],
 * its length fit what is left of maxBatchBytes, and the answer hold exactly the count it declares
 * (a frame count over the request, a reordered frame or a byte past the last frame is
 * REMOTE_OBJECT_MISMATCH). The caller hashes each frame's bytes (BatchEvents).
 */
export class BatchReader {
  private head = Buffer.alloc(0);
  private count: number | null = null;
  private index = 0;
  private left = 0;
  private inFrame = false;
  private budget: number = REMOTE_LIMITS.maxBatchBytes;

  constructor(
    private readonly asked: readonly string[],
    private readonly events: BatchEvents,
  ) {}

  /** Frames wholly read so far. */
  get framesRead(): number {
    return this.index;
  }

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.byteLength) {
      if (this.inFrame) {
        const take = Math.min(this.left, chunk.byteLength - at);
        this.events.data(chunk.subarray(at, at + take));
        at += take;
        this.left -= take;
        if (this.left === 0) this.finishFrame();
        continue;
      }
      const need = (this.count === null ? BATCH_COUNT_BYTES : FRAME_HEADER_BYTES) - this.head.byteLength;
      if (this.count !== null && this.index >= this.count)
        throw objectMismatch(`the batch answer has bytes past its ${this.count} frames`);
      const take = Math.min(need, chunk.byteLength - at);
      this.head = Buffer.concat([this.head, chunk.subarray(at, at + take)]);
      at += take;
      if (take === need) this.headerDone();
    }
  }

  /** The answer ended: it must have held every frame it declared. */
  finish(): void {
    if (this.count === null || this.inFrame || this.head.byteLength > 0 || this.index < this.count)
      throw objectMismatch(`the batch answer ended after ${this.index} of ${this.count ?? '?'} frames (truncated)`);
  }

  private headerDone(): void {
    const head = this.head;
    this.head = Buffer.alloc(0);
    if (this.count === null) {
      const count = head.readUInt32BE(0);
      if (count === 0 || count > this.asked.length)
        throw objectMismatch(`the batch answer declares ${count} frames for ${this.asked.length} digests asked`);
      this.count = count;
      return;
    }
    const digest = head.subarray(0, 32).toString('hex');
    const length = head.readBigUInt64BE(32);
    if (digest !== this.asked[this.index])
      throw objectMismatch(
        `frame ${this.index} of the batch answer carries blob ${digest}, not ${this.asked[this.index] ?? '?'} ` +
          '(reordered or unasked)',
      );
    if (length > BigInt(this.budget))
      throw objectMismatch(`frame ${this.index} declares ${length} bytes, past what a batch holds`);
    this.left = Number(length);
    this.budget -= this.left;
    this.inFrame = true;
    this.events.start(this.index, digest, this.left);
    if (this.left === 0) this.finishFrame();
  }

  private finishFrame(): void {
    this.inFrame = false;
    this.events.end(this.index);
    this.index += 1;
  }
}

function treeInvalid(digest: string, why: string): AgentscmError {
  return objectMismatch(`tree ${digest} ${why}`);
}

/**
 * The entries of a tree object whose bytes were answered for `digest`: the bytes must hash to it
 * (domain agentscm.tree.v1) and be the canonical encoding of valid entries in tree order.
 */
export function decodeTreeObject(digest: string, bytes: Uint8Array): TreeEntry[] {
  if (bytes.byteLength > REMOTE_LIMITS.maxTreeBytes) throw treeInvalid(digest, 'is larger than a tree may be');
  const actual = domainDigest(DOMAINS.tree, bytes);
  if (actual !== digest) throw treeInvalid(digest, `was answered with bytes whose digest is ${actual}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw treeInvalid(digest, 'is not JSON');
  }
  const raw = (parsed as { entries?: unknown }).entries;
  if (!Array.isArray(raw)) throw treeInvalid(digest, 'has no entries');
  const entries: TreeEntry[] = [];
  for (const item of raw as unknown[]) {
    const { name, kind, digest: child } = (item ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || workspaceNameProblem(name) !== undefined)
      throw treeInvalid(digest, 'has an entry whose name is not a path component');
    if (typeof kind !== 'string' || !(TREE_ENTRY_KINDS as readonly string[]).includes(kind))
      throw treeInvalid(digest, `has an entry ${JSON.stringify(name)} of no known kind`);
    if (typeof child !== 'string' || !HEX64.test(child))
      throw treeInvalid(digest, `has an entry ${JSON.stringify(name)} whose digest is not 64 hex`);
    const entry = { name, kind, digest: child } as TreeEntry;
    const last = entries.at(-1);
    if (last !== undefined && compareTreeEntries(last, entry) >= 0)
      throw treeInvalid(digest, 'has entries out of tree order or twice');
    entries.push(entry);
  }
  // Canonical bytes only: any other spelling of the same entries is not this tree's encoding.
  if (encodeTree(entries) !== Buffer.from(bytes).toString('utf8')) throw treeInvalid(digest, 'is not canonical');
  return entries;
}

/** The root tree of a revision object answered for `revision` (its parent and tree, canonical). */
export function decodeRevisionObject(revision: string, bytes: Uint8Array): { parent: string | null; tree: string } {
  const actual = domainDigest(DOMAINS.revision, bytes);
  if (actual !== revision)
    throw objectMismatch(`revision ${revision} was answered with bytes whose digest is ${actual}`);
  let parsed: { parent?: unknown; tree?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8')) as { parent?: unknown; tree?: unknown };
  } catch {
    throw objectMismatch(`revision ${revision} is not JSON`);
  }
  const { parent, tree } = parsed;
  if (typeof tree !== 'string' || !HEX64.test(tree) || (parent !== null && typeof parent !== 'string'))
    throw objectMismatch(`revision ${revision} names no root tree`);
  if (encodeRevision(parent, tree) !== Buffer.from(bytes).toString('utf8'))
    throw objectMismatch(`revision ${revision} is not canonical`);
  return { parent, tree };
}

/** What the hub's check of a command descriptor binds beyond it (the collector's RequestBinding). */
export interface CheckedBinding {
  readonly stepId: string;
  readonly recipePath: string;
  readonly recipeDigest: string;
}

/** Bytes of the check answer: three lines, the step id, the recipe path and the recipe's SHA-256. */
export const MAX_CHECK_ANSWER_BYTES = 1024;

export function encodeCheckAnswer(binding: CheckedBinding): Buffer {
  return Buffer.from(`${binding.stepId}\n${binding.recipePath}\n${binding.recipeDigest}\n`, 'utf8');
}

/** The binding of a check answer (REMOTE_OBJECT_MISMATCH when it is not three valid lines). */
export function decodeCheckAnswer(bytes: Uint8Array): CheckedBinding {
  const bad = (): AgentscmError => objectMismatch('the hub answered the descriptor check with no valid binding');
  if (bytes.byteLength > MAX_CHECK_ANSWER_BYTES) throw bad();
  const lines = Buffer.from(bytes).toString('utf8').split('\n');
  if (lines.length !== 4 || lines[3] !== '') throw bad();
  const [stepId, recipePath, recipeDigest] = lines as [string, string, string];
  if (!new RegExp(ID_PATTERN).test(stepId) || workspacePathProblem(recipePath) !== undefined) throw bad();
  if (!HEX64.test(recipeDigest)) throw bad();
  return { stepId, recipePath, recipeDigest };
}
