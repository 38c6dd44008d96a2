/**
 * The docker executable's hash cache (docs/command-collector.md "The executable hash cache"):
 * kept under the state directory keyed by device, inode, size, mtime and ctime; any change
 * — including a rewrite in place with the same size and mtime, which only moves the ctime —
 * hashes the file again; a file changed within the racy window is never kept.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { cachedExecutableHash, EXECUTABLE_HASH_CACHE } from '../../src/collector/executable-hash-cache.js';
import { tempDir } from '../helpers/tmp.js';

const sha256 = (bytes: string): string => createHash('sha256').update(bytes).digest('hex');
const LATER = (): number => Date.now() + 60_000;

function executable(dir: string, name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  chmodSync(path, 0o755);
  return path;
}

test('a settled executable is hashed once; the cache answers while its key is unchanged', (t) => {
  const dir = tempDir(t, 'agentscm-hash-cache-');
  const docker = executable(dir, 'docker', '#!/bin/sh\necho one\n');
  assert.equal(cachedExecutableHash(docker, dir, LATER()), sha256('#!/bin/sh\necho one\n'));
  const file = join(dir, EXECUTABLE_HASH_CACHE);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  // Prove the second answer comes from the cache: a planted digest under the same key is returned.
  const entry = JSON.parse(readFileSync(file, 'utf8')) as { sha256: string };
  writeFileSync(file, JSON.stringify({ ...entry, sha256: 'a'.repeat(64) }));
  assert.equal(cachedExecutableHash(docker, dir, LATER()), 'a'.repeat(64));
  // Another path never reads that entry.
  const other = executable(dir, 'docker2', '#!/bin/sh\necho one\n');
  assert.equal(cachedExecutableHash(other, dir, LATER()), sha256('#!/bin/sh\necho one\n'));
});

test('rewritten in place with the same size and mtime, only the ctime moves: hashed again', async (t) => {
  const dir = tempDir(t, 'agentscm-hash-cache-');
  const docker = executable(dir, 'docker', '#!/bin/sh\necho one\n');
  const old = new Date(Date.now() - 3_600_000);
  utimesSync(docker, old, old);
  assert.equal(cachedExecutableHash(docker, dir, LATER()), sha256('#!/bin/sh\necho one\n'));
  const before = statSync(docker, { bigint: true });
  await sleep(20); // a later ctime tick
  writeFileSync(docker, '#!/bin/sh\necho two\n'); // same size
  utimesSync(docker, old, old); // same mtime
  const after = statSync(docker, { bigint: true });
  assert.equal(after.size, before.size);
  assert.equal(after.mtimeNs, before.mtimeNs);
  assert.equal(after.ino, before.ino);
  assert.notEqual(after.ctimeNs, before.ctimeNs);
  assert.equal(cachedExecutableHash(docker, dir, LATER()), sha256('#!/bin/sh\necho two\n'));
});

test('a file changed within the racy window is hashed but not kept', (t) => {
  const dir = tempDir(t, 'agentscm-hash-cache-');
  const docker = executable(dir, 'docker', '#!/bin/sh\necho one\n');
  assert.equal(cachedExecutableHash(docker, dir, Date.now()), sha256('#!/bin/sh\necho one\n'));
  assert.equal(existsSync(join(dir, EXECUTABLE_HASH_CACHE)), false);
});

test('a damaged cache file costs only the hash; a missing executable is still refused', (t) => {
  const dir = tempDir(t, 'agentscm-hash-cache-');
  const docker = executable(dir, 'docker', '#!/bin/sh\n');
  writeFileSync(join(dir, EXECUTABLE_HASH_CACHE), '{"version":1,');
  assert.equal(cachedExecutableHash(docker, dir, LATER()), sha256('#!/bin/sh\n'));
  writeFileSync(join(dir, EXECUTABLE_HASH_CACHE), 'x'.repeat(5000));
  assert.equal(cachedExecutableHash(docker, dir, LATER()), sha256('#!/bin/sh\n'));
  assert.throws(
    () => cachedExecutableHash(join(dir, 'missing'), dir, LATER()),
    (error: unknown) => (error as { code?: string }).code === 'RUNTIME_FLAGS_INVALID',
  );
});
