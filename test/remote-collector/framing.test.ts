/**
 * The framing of fetched objects (docs/wire.md "Fetching a claimed revision"), byte for byte:
 * the batch request's digest bound at and one past it, a batch answer's frames against what was
 * asked (a random byte changed anywhere is refused as REMOTE_OBJECT_MISMATCH or still decodes to
 * exactly the blobs asked, never anything else), a frame longer than a batch holds, tree and
 * revision objects that hash right but are not canonical, and the check answer.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import {
  BatchReader,
  decodeBatchRequest,
  decodeCheckAnswer,
  decodeRevisionObject,
  decodeTreeObject,
  encodeBatchCount,
  encodeBatchRequest,
  encodeCheckAnswer,
  encodeFrameHeader,
  REMOTE_LIMITS,
} from '../../src/contracts/collector/object-batch.js';
import { domainDigest, DOMAINS } from '../../src/contracts/digest.js';
import { encodeRevision, encodeTree, treeDigest, type TreeEntry } from '../../src/contracts/tree.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { codeOf } from '../helpers/errors.js';

const BLOBS = [Buffer.from('alpha'), Buffer.from(''), Buffer.from('gamma gamma')];
const ASKED = BLOBS.map((blob) => sha256Hex(blob));
const ANSWER = Buffer.concat([
  encodeBatchCount(BLOBS.length),
  ...BLOBS.flatMap((blob, i) => [encodeFrameHeader(ASKED[i] as string, blob.byteLength), blob]),
]);

/** The blobs a reader yields for `answer`, fed in chunks of `step` bytes; hashes checked as the client does. */
function read(answer: Buffer, asked: readonly string[] = ASKED, step = 3): string[] {
  const got: string[] = [];
  let parts: Buffer[] = [];
  const reader = new BatchReader(asked, {
    start: () => (parts = []),
    data: (chunk) => parts.push(Buffer.from(chunk)),
    end: (index) => {
      const digest = sha256Hex(Buffer.concat(parts));
      if (digest !== asked[index]) throw new Error('hash');
      got.push(digest);
    },
  });
  for (let at = 0; at < answer.byteLength; at += step) reader.push(answer.subarray(at, at + step));
  reader.finish();
  return got;
}

test('a batch request names 1 to maxBatchDigests digests, each 32 bytes', () => {
  const full = Array.from({ length: REMOTE_LIMITS.maxBatchDigests }, (_, i) => sha256Hex(Buffer.from(String(i))));
  const body = encodeBatchRequest(full);
  assert.equal(body.byteLength, REMOTE_LIMITS.maxBatchDigests * 32);
  assert.deepEqual(decodeBatchRequest(body), full);
  assert.equal(
    codeOf(() => encodeBatchRequest([...full, ASKED[0] as string])),
    'REMOTE_BATCH_INVALID',
  );
  assert.equal(
    codeOf(() => decodeBatchRequest(Buffer.concat([body, Buffer.alloc(32)]))),
    'REMOTE_BATCH_INVALID',
  );
  assert.equal(
    codeOf(() => decodeBatchRequest(Buffer.alloc(0))),
    'REMOTE_BATCH_INVALID',
  );
  assert.equal(
    codeOf(() => decodeBatchRequest(Buffer.alloc(31))),
    'REMOTE_BATCH_INVALID',
  );
  assert.equal(
    codeOf(() => encodeBatchRequest(['A'.repeat(64)])),
    'REMOTE_BATCH_INVALID',
  );
});

test('a batch answer yields exactly the blobs asked, in order, in any chunking', () => {
  for (const step of [1, 2, 7, 40, ANSWER.byteLength]) assert.deepEqual(read(ANSWER, ASKED, step), ASKED);
  // A prefix of the request is a whole answer.
  const prefix = Buffer.concat([encodeBatchCount(1), encodeFrameHeader(ASKED[0] as string, 5), BLOBS[0] as Buffer]);
  assert.deepEqual(read(prefix), ASKED.slice(0, 1));
});

test('a batch answer changed anywhere is refused or still exactly the blobs asked', () => {
  let seed = 7;
  const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < 2000; i++) {
    const changed = Buffer.from(ANSWER);
    const at = random() % changed.byteLength;
    changed[at] = random() % 256;
    let got: string[] | null = null;
    try {
      got = read(changed);
    } catch (error) {
      const code = (error as { code?: string }).code;
      assert.ok(code === 'REMOTE_OBJECT_MISMATCH' || (error as Error).message === 'hash', String(error));
    }
    if (got !== null) assert.deepEqual(got, ASKED);
  }
  // Cut anywhere: refused.
  for (let cut = 0; cut < ANSWER.byteLength; cut++)
    assert.equal(
      codeOf(() => read(ANSWER.subarray(0, cut))),
      'REMOTE_OBJECT_MISMATCH',
    );
});

test('a frame is at most what a batch holds; a count is at most what was asked', () => {
  const digest = ASKED[0] as string;
  const atBound = Buffer.concat([encodeBatchCount(1), encodeFrameHeader(digest, REMOTE_LIMITS.maxBatchBytes)]);
  const reader = new BatchReader([digest], { start: () => undefined, data: () => undefined, end: () => undefined });
  reader.push(atBound);
  const past = Buffer.concat([encodeBatchCount(1), encodeFrameHeader(digest, REMOTE_LIMITS.maxBatchBytes + 1)]);
  assert.equal(
    codeOf(() => read(past, [digest])),
    'REMOTE_OBJECT_MISMATCH',
  );
  assert.equal(
    codeOf(() => read(Buffer.concat([encodeBatchCount(4), ANSWER.subarray(4)]))),
    'REMOTE_OBJECT_MISMATCH',
  );
  assert.equal(
    codeOf(() => read(Buffer.concat([encodeBatchCount(0)]))),
    'REMOTE_OBJECT_MISMATCH',
  );
});

test('a tree or revision object must hash to the digest asked and be canonical', () => {
  const entries: TreeEntry[] = [
    { name: 'a.txt', kind: 'file', digest: ASKED[0] as string },
    { name: 'bin', kind: 'directory', digest: 'b'.repeat(64) },
  ];
  const bytes = Buffer.from(encodeTree(entries));
  const digest = treeDigest(entries);
  assert.deepEqual(decodeTreeObject(digest, bytes), entries);
  assert.equal(
    codeOf(() => decodeTreeObject('c'.repeat(64), bytes)),
    'REMOTE_OBJECT_MISMATCH',
  );
  // Hashes right, but not the canonical encoding, or names that are not path components.
  for (const text of [
    ' {"version":1,"entries":[]}',
    '{"version":1,"entries":[{"name":"../x","kind":"file","digest":"' + 'a'.repeat(64) + '"}]}',
    '{"version":1,"entries":[{"name":"b","kind":"file","digest":"' +
      'a'.repeat(64) +
      '"},{"name":"a","kind":"file","digest":"' +
      'a'.repeat(64) +
      '"}]}',
  ]) {
    const odd = Buffer.from(text);
    assert.equal(
      codeOf(() => decodeTreeObject(domainDigest(DOMAINS.tree, odd), odd)),
      'REMOTE_OBJECT_MISMATCH',
      text,
    );
  }
  const revision = Buffer.from(encodeRevision(null, digest));
  assert.deepEqual(decodeRevisionObject(domainDigest(DOMAINS.revision, revision), revision), {
    parent: null,
    tree: digest,
  });
  assert.equal(
    codeOf(() => decodeRevisionObject('d'.repeat(64), revision)),
    'REMOTE_OBJECT_MISMATCH',
  );
});

test('the check answer is three valid lines', () => {
  const binding = { stepId: 'lint', recipePath: 'skills/check/runner.json', recipeDigest: 'e'.repeat(64) };
  assert.deepEqual(decodeCheckAnswer(encodeCheckAnswer(binding)), binding);
  for (const text of ['lint\nskills/x\n', `lint\n../x\n${'e'.repeat(64)}\n`, `lint\nx\n${'e'.repeat(64)}\nmore\n`])
    assert.equal(
      codeOf(() => decodeCheckAnswer(Buffer.from(text))),
      'REMOTE_OBJECT_MISMATCH',
      text,
    );
});
