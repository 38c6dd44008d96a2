import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';

import { digestCanonical, DOMAINS } from '../../src/contracts/digest.js';
import { encodeCanonicalText } from '../../src/contracts/json/canonical-json.js';
import { U64_MAX } from '../../src/contracts/json/json-value.js';
import { encodeRevision, encodeTree, revisionIdOf, treeDigest } from '../../src/contracts/tree.js';
import { putSmallBlob } from '../../src/native/blobs.js';
import { bumpPolicyEpoch } from '../../src/native/policy.js';
import { createRepository } from '../../src/native/repositories.js';
import {
  computeRevisionId,
  getRevision,
  listRevisionEntries,
  recordRevision,
  type RevisionEntry,
} from '../../src/native/revisions.js';
import { u64ToSql } from '../../src/native/sqlite.js';
import { createAuthority, writeTransaction } from '../../src/native/store.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';

const BLOB = 'ab'.repeat(32);

test('the direct tree and revision encoders write exactly the canonical encoding, for any UTF-8 names', () => {
  const entry = fc.record({
    name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
    kind: fc.constantFrom('file' as const, 'executable' as const, 'symlink' as const, 'directory' as const),
    digest: fc.constant(BLOB),
  });
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 8 }), fc.option(fc.constant('cd'.repeat(32))), (entries, parent) => {
      const value = { version: 1, entries: entries.map((e) => ({ name: e.name, kind: e.kind, digest: e.digest })) };
      assert.equal(encodeTree(entries), encodeCanonicalText(value));
      assert.equal(treeDigest(entries), digestCanonical(DOMAINS.tree, value));
      const tree = treeDigest(entries);
      assert.equal(encodeRevision(parent, tree), encodeCanonicalText({ version: 2, parent, tree }));
      assert.equal(revisionIdOf(parent, tree), digestCanonical(DOMAINS.revision, { version: 2, parent, tree }));
    }),
  );
  // The documented shape, byte for byte.
  assert.equal(
    encodeTree([{ name: 'a "q"\\.txt', kind: 'file', digest: BLOB }]),
    `{"version":1,"entries":[{"name":"a \\"q\\"\\\\.txt","kind":"file","digest":"${BLOB}"}]}`,
  );
});

test('the revision ID covers the parent and the path, mode and content of every entry', () => {
  const base: RevisionEntry[] = [{ path: 'a', mode: 'file', size: 1n, blob: BLOB }];
  const id = computeRevisionId(null, base);
  assert.match(id, /^[0-9a-f]{64}$/);
  assert.notEqual(computeRevisionId('cd'.repeat(32), base), id);
  assert.notEqual(computeRevisionId(null, [{ ...base[0]!, mode: 'executable' }]), id);
  assert.notEqual(computeRevisionId(null, [{ ...base[0]!, path: 'b' }]), id);
  assert.notEqual(computeRevisionId(null, [{ ...base[0]!, path: 'd/a' }]), id);
  assert.notEqual(computeRevisionId(null, [{ ...base[0]!, blob: 'ef'.repeat(32) }]), id);
  assert.equal(computeRevisionId(null, base), id);
});

test('recording refuses unsorted entries, missing blobs and foreign parents; revisions are per repository', (t) => {
  const auth = createAuthority(tempDir(t));
  t.after(() => auth.close());
  const one = createRepository(auth, 'one');
  const two = createRepository(auth, 'two');
  const { digest } = writeTransaction(auth, () => putSmallBlob(auth, Buffer.from('x')));
  const entries: RevisionEntry[] = [
    { path: 'a', mode: 'file', size: 1n, blob: digest },
    { path: 'b', mode: 'symlink', size: 1n, blob: digest },
  ];
  assert.equal(
    codeOf(() =>
      recordRevision(auth, one.id, null, [entries[0]!, { path: 'a/b', mode: 'file', size: 1n, blob: digest }]),
    ),
    'INTERNAL',
    'a path both a file and a directory',
  );
  assert.equal(
    codeOf(() => recordRevision(auth, one.id, null, [...entries].reverse())),
    'INTERNAL',
  );
  assert.equal(
    codeOf(() => recordRevision(auth, one.id, null, [{ path: 'a', mode: 'file', size: 1n, blob: BLOB }])),
    'INTERNAL',
  );
  const first = recordRevision(auth, one.id, null, entries);
  assert.equal(
    recordRevision(auth, one.id, null, entries).created,
    false,
    'recording the same revision again is a no-op',
  );
  assert.equal(
    codeOf(() => getRevision(auth, two.id, first.id)),
    'REVISION_NOT_FOUND',
  );
  assert.equal(
    codeOf(() => recordRevision(auth, two.id, first.id, entries)),
    'REVISION_NOT_FOUND',
  );
  // The same manifest recorded by a second repository shares the stored tree.
  assert.equal(recordRevision(auth, two.id, null, entries).id, first.id);
  assert.deepEqual(listRevisionEntries(auth, two.id, first.id), entries);
});

test('the policy epoch stops at the u64 maximum', (t) => {
  const auth = createAuthority(tempDir(t));
  t.after(() => auth.close());
  const repo = createRepository(auth, 'r');
  auth.db.prepare('UPDATE policy_epochs SET epoch = ? WHERE repository = ?').run(u64ToSql(U64_MAX - 1n), repo.id);
  assert.equal(bumpPolicyEpoch(auth, repo.id).policy_epoch, U64_MAX);
  assert.equal(
    codeOf(() => bumpPolicyEpoch(auth, repo.id)),
    'POLICY_EPOCH_EXHAUSTED',
  );
});
