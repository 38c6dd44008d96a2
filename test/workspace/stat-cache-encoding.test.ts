/**
 * The stat cache's one-row encoding (docs/workspace.md "Stat cache"): its byte layout, and a
 * round trip of every field across the size boundaries the encoder handles separately (u32,
 * 2^53, u64) and paths of multi-byte UTF-8.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { decodeStatCache, encodeStatCache, type CachedEntry } from '../../src/workspace/stat-cache.js';
import { codeOf } from '../helpers/errors.js';

const DIGEST = 'ab'.repeat(32);

test('the stat cache encoding: byte layout and round trip of every field', () => {
  const entries: CachedEntry[] = [
    {
      path: 'a',
      mode: 'file',
      size: 0n,
      blob: DIGEST,
      stat: { size: 0, mtimeMs: 1.5, ctimeMs: 2.25, ino: 7 },
      cacheValid: true,
    },
    {
      path: 'b/é€😀.txt',
      mode: 'executable',
      size: 2n ** 32n + 5n,
      blob: '00'.repeat(32),
      stat: { size: 2 ** 32 + 5, mtimeMs: 1e12, ctimeMs: 1e12 + 0.5, ino: 2 ** 40 },
      cacheValid: false,
    },
    { path: 'c', mode: 'symlink', size: 2n ** 53n + 1n, blob: 'ff'.repeat(32), stat: null, cacheValid: false },
    { path: 'd', mode: 'file', size: 2n ** 64n - 1n, blob: DIGEST, stat: null, cacheValid: false },
  ];
  const data = encodeStatCache(entries);
  // Header: format 1, four entries; then "a": u16 length 1, the byte, flags file|stat|valid.
  assert.deepEqual([...data.subarray(0, 9)], [1, 0, 0, 0, 4, 0, 1, 0x61, 0 | 4 | 8]);
  assert.equal(data.readBigUInt64BE(9), 0n);
  const second = 9 + 8 + 32 + 32;
  const name = Buffer.from('b/é€😀.txt', 'utf8');
  assert.equal(data.readUInt16BE(second), name.length);
  assert.ok(data.subarray(second + 2, second + 2 + name.length).equals(name));
  assert.equal(data[second + 2 + name.length], 1 | 4);
  assert.equal(data.readBigUInt64BE(second + 3 + name.length), 2n ** 32n + 5n);
  const total = 5 + (2 + 1 + 41 + 32) + (2 + name.length + 41 + 32) + (2 + 1 + 41) + (2 + 1 + 41);
  assert.equal(data.length, total);

  const decoded = decodeStatCache(data);
  assert.deepEqual([...decoded.values()], entries);
  assert.deepEqual(
    [...decoded.keys()],
    entries.map((e) => e.path),
  );

  // One byte more or less is damage, never a silently different cache.
  assert.equal(
    codeOf(() => decodeStatCache(Buffer.concat([data, Buffer.from([0])]))),
    'STORE_CORRUPT',
  );
  assert.equal(
    codeOf(() => decodeStatCache(data.subarray(0, data.length - 1))),
    'STORE_CORRUPT',
  );
});
