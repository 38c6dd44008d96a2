import assert from 'node:assert/strict';
import { appendFileSync, chmodSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { BLOB_CHUNK_BYTES } from '../../src/native/blobs.js';
import { readFileContent, scratchTarget, streamFileChunks } from '../../src/workspace/content.js';
import { scanWorkspace } from '../../src/workspace/scan.js';
import { tempDir } from '../helpers/tmp.js';

function only(root: string, path: string) {
  const file = scanWorkspace(root).files.find((f) => f.path === path);
  assert.ok(file, `${path} scanned`);
  return file;
}

test('contents hash to their plain SHA-256; a symlink hashes its target bytes', (t) => {
  const root = tempDir(t);
  writeFileSync(join(root, 'a.txt'), 'alpha\n');
  symlinkSync('a.txt', join(root, 'link'));
  assert.equal(readFileContent(only(root, 'a.txt'), scratchTarget).digest, sha256Hex('alpha\n'));
  const link = readFileContent(only(root, 'link'), scratchTarget);
  assert.equal(link.digest, sha256Hex('a.txt'));
  assert.equal(link.size, 5n);
});

test('a large file is hashed in chunks and streamed again chunk by chunk', (t) => {
  const root = tempDir(t);
  const big = Buffer.alloc(BLOB_CHUNK_BYTES + 10, 7);
  writeFileSync(join(root, 'big.bin'), big);
  const file = only(root, 'big.bin');
  const content = readFileContent(file, scratchTarget);
  assert.equal(content.bytes, null);
  assert.equal(content.digest, sha256Hex(big));
  assert.deepEqual(Buffer.concat([...streamFileChunks(file)].map((c) => Buffer.from(c))), big);
});

test('a file written after it was scanned is WORKSPACE_CHANGED, not a mixed blob', (t) => {
  const root = tempDir(t);
  writeFileSync(join(root, 'a.txt'), 'before');
  const file = only(root, 'a.txt');
  appendFileSync(join(root, 'a.txt'), ' and after');
  assert.throws(
    () => readFileContent(file, scratchTarget),
    (e: unknown) => e instanceof AgentscmError && e.code === 'WORKSPACE_CHANGED',
  );
  const again = only(root, 'a.txt');
  chmodSync(join(root, 'a.txt'), 0o755);
  assert.throws(
    () => readFileContent(again, scratchTarget),
    (e: unknown) => e instanceof AgentscmError && e.code === 'WORKSPACE_CHANGED',
  );
});
