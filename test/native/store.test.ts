import assert from 'node:assert/strict';
import { existsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { AgentscmError } from '../../src/contracts/errors.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import {
  BLOB_CHUNK_BYTES,
  hasBlob,
  putChunkedBlob,
  putSmallBlob,
  readBlob,
  streamBlob,
} from '../../src/native/blobs.js';
import { appendChangeVersion, findChange, getChange } from '../../src/native/changes.js';
import { bumpPolicyEpoch, currentPolicyEpoch } from '../../src/native/policy.js';
import {
  createRepository,
  findRepositoryByName,
  getRepository,
  listRepositories,
  resolveRepository,
} from '../../src/native/repositories.js';
import {
  computeRevisionId,
  getRevision,
  listRevisionEntries,
  readRevisionFile,
  recordRevision,
  statRevisionPath,
  type RevisionEntry,
} from '../../src/native/revisions.js';
import {
  createAuthority,
  nativePaths,
  openAuthority,
  writeTransaction,
  type Authority,
} from '../../src/native/store.js';
import { getTarget, setTarget } from '../../src/native/targets.js';
import { tempDir } from '../helpers/tmp.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentscmError) return error.code;
    throw error;
  }
  throw new Error('expected an AgentscmError');
}

function storeFile(auth: Authority, path: string, text: string, mode: RevisionEntry['mode'] = 'file'): RevisionEntry {
  const bytes = Buffer.from(text);
  const { digest } = writeTransaction(auth, () => putSmallBlob(auth, bytes));
  return { path, mode, size: BigInt(bytes.byteLength), blob: digest };
}

test('a reader of a missing store gets STORE_NOT_INITIALIZED and nothing is created', (t) => {
  const root = tempDir(t);
  const dir = join(root, 'absent', 'data');
  assert.equal(
    codeOf(() => openAuthority(dir, { mode: 'read' })),
    'STORE_NOT_INITIALIZED',
  );
  assert.equal(
    codeOf(() => openAuthority(dir, { mode: 'write' })),
    'STORE_NOT_INITIALIZED',
  );
  assert.equal(existsSync(join(root, 'absent')), false);
  assert.equal(existsSync(dir), false);
});

test('a store without its lock file is not initialized, even when the database exists', (t) => {
  const dir = tempDir(t);
  createAuthority(dir).close();
  const paths = nativePaths(dir);
  new Database(paths.db).close();
  assert.ok(existsSync(paths.lock));
  // a store whose lock was never written counts as unfinished
  unlinkSync(paths.lock);
  assert.equal(
    codeOf(() => openAuthority(dir, { mode: 'read' })),
    'STORE_NOT_INITIALIZED',
  );
});

test('repositories, revisions, Changes, policy and targets survive a reopen', (t) => {
  const dir = tempDir(t);
  const auth = createAuthority(dir);
  const repo = createRepository(auth, 'demo');
  assert.match(repo.id, /^[0-9a-f]{32}$/);
  assert.equal(
    codeOf(() => createRepository(auth, 'demo')),
    'REPOSITORY_EXISTS',
  );
  const a = storeFile(auth, 'a.txt', 'alpha\n');
  const b = storeFile(auth, 'bin/run', '#!/bin/sh\n', 'executable');
  const entries = [a, b];
  const first = writeTransaction(auth, () => recordRevision(auth, repo.id, null, entries));
  assert.equal(first.created, true);
  assert.equal(first.id, computeRevisionId(null, entries));
  setTarget(auth, repo.id, 'main', first.id);
  const v1 = appendChangeVersion(auth, repo.id, 'c1', {
    expectedCurrent: null,
    revision: first.id,
    baseRevision: null,
  });
  assert.equal(v1.version, 1n);
  const c = storeFile(auth, 'c.txt', 'gamma');
  const second = recordRevision(auth, repo.id, first.id, [a, b, c]);
  const v2 = appendChangeVersion(auth, repo.id, 'c1', { expectedCurrent: 1n, revision: second.id, baseRevision: null });
  assert.equal(v2.version, 2n);
  assert.equal(v2.previous_revision, first.id);
  assert.equal(
    codeOf(() =>
      appendChangeVersion(auth, repo.id, 'c1', { expectedCurrent: 1n, revision: second.id, baseRevision: null }),
    ),
    'CHANGE_CONFLICT',
  );
  assert.equal(bumpPolicyEpoch(auth, repo.id).policy_epoch, 1n);
  auth.close();

  const reader = openAuthority(dir, { mode: 'read' });
  t.after(() => reader.close());
  assert.deepEqual(getRepository(reader, repo.id), repo);
  assert.deepEqual(findRepositoryByName(reader, 'demo'), repo);
  assert.deepEqual(listRepositories(reader), [repo]);
  assert.deepEqual(resolveRepository(reader, undefined), repo);
  assert.equal(currentPolicyEpoch(reader, repo.id), 1n);
  assert.deepEqual(getTarget(reader, repo.id, 'main'), { name: 'main', revision: first.id });
  const rev = getRevision(reader, repo.id, second.id);
  assert.equal(rev.parent, first.id);
  assert.equal(rev.entry_count, 3);
  assert.equal(rev.total_bytes, 6n + 10n + 5n);
  assert.deepEqual(
    listRevisionEntries(reader, repo.id, second.id).map((e) => e.path),
    ['a.txt', 'bin/run', 'c.txt'],
  );
  assert.equal(statRevisionPath(reader, repo.id, second.id, 'bin/run')?.mode, 'executable');
  assert.equal(statRevisionPath(reader, repo.id, second.id, 'nope'), null);
  assert.equal(readRevisionFile(reader, repo.id, second.id, 'c.txt', { maxBytes: 5 }).toString(), 'gamma');
  assert.equal(
    codeOf(() => readRevisionFile(reader, repo.id, second.id, 'c.txt', { maxBytes: 4 })),
    'INPUT_TOO_LARGE',
  );
  assert.equal(
    codeOf(() => readRevisionFile(reader, repo.id, second.id, 'zzz', { maxBytes: 4 })),
    'PATH_NOT_FOUND',
  );
  const change = getChange(reader, repo.id, 'c1');
  assert.equal(change.current_version, 2n);
  assert.deepEqual(
    change.versions.map((v) => [v.version, v.revision, v.previous_revision]),
    [
      [1n, first.id, null],
      [2n, second.id, first.id],
    ],
  );
  assert.equal(findChange(reader, repo.id, 'other'), null);
  assert.equal(
    codeOf(() => getChange(reader, repo.id, 'other')),
    'CHANGE_NOT_FOUND',
  );
  assert.equal(
    codeOf(() => getTarget(reader, repo.id, 'release')),
    'TARGET_NOT_FOUND',
  );
  assert.equal(
    codeOf(() => getRevision(reader, repo.id, 'f'.repeat(64))),
    'REVISION_NOT_FOUND',
  );
  assert.equal(
    codeOf(() => getRevision(reader, repo.id, 'F'.repeat(64))),
    'ID_INVALID',
  );
  assert.equal(
    codeOf(() => getRepository(reader, '0'.repeat(32))),
    'REPOSITORY_NOT_FOUND',
  );
  assert.equal(
    codeOf(() => bumpPolicyEpoch(reader, repo.id)),
    'INTERNAL',
  );
});

test('a blob larger than one chunk is stored in chunks and read back exactly', (t) => {
  const dir = tempDir(t);
  const auth = createAuthority(dir);
  t.after(() => auth.close());
  const big = Buffer.alloc(BLOB_CHUNK_BYTES * 2 + 17);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251;
  const digest = sha256Hex(big);
  const chunks = [
    big.subarray(0, BLOB_CHUNK_BYTES),
    big.subarray(BLOB_CHUNK_BYTES, 2 * BLOB_CHUNK_BYTES),
    big.subarray(2 * BLOB_CHUNK_BYTES),
  ];
  writeTransaction(auth, () => putChunkedBlob(auth, digest, BigInt(big.length), chunks));
  assert.ok(hasBlob(auth, digest));
  assert.deepEqual(readBlob(auth, digest, big.length), big);
  assert.equal(
    codeOf(() => readBlob(auth, digest, big.length - 1)),
    'INPUT_TOO_LARGE',
  );
  assert.equal([...streamBlob(auth, digest)].length, 3);
  const wrong = sha256Hex(Buffer.from('x'));
  assert.equal(
    codeOf(() => writeTransaction(auth, () => putChunkedBlob(auth, wrong, 1n, [Buffer.from('y')]))),
    'WORKSPACE_CHANGED',
  );
  assert.equal(hasBlob(auth, wrong), false);
});
