/** Revisions as content-addressed trees (docs/native-store.md "Revisions"): sharing, IDs across stores, readers. */
import assert from 'node:assert/strict';
import test from 'node:test';

import { buildTrees } from '../../src/contracts/tree.js';
import { putSmallBlob } from '../../src/native/blobs.js';
import { createRepository } from '../../src/native/repositories.js';
import {
  diffRevisions,
  iterateRevisionEntries,
  listRevisionEntries,
  readRevisionFile,
  recordRevision,
  revisionHasDirectory,
  statRevisionPath,
  type RevisionEntry,
} from '../../src/native/revisions.js';
import { createAuthority, readTransaction, writeTransaction, type Authority } from '../../src/native/store.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';

function blob(auth: Authority, text: string): string {
  return writeTransaction(auth, () => putSmallBlob(auth, Buffer.from(text)).digest);
}

/** A sorted listing of `dirs` directories of `per` files each, content = path. */
function listing(auth: Authority, dirs: number, per: number): RevisionEntry[] {
  const entries: RevisionEntry[] = [];
  for (let d = 0; d < dirs; d++) {
    for (let f = 0; f < per; f++) {
      const path = `d${String(d).padStart(2, '0')}/f${String(f).padStart(2, '0')}.txt`;
      entries.push({ path, mode: 'file', size: BigInt(path.length), blob: blob(auth, path) });
    }
  }
  return entries;
}

function count(auth: Authority, table: 'trees' | 'tree_entries' | 'revisions'): number {
  return (auth.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

test('a one-file change stores only the trees on its path; unchanged directories are shared (row counts)', (t) => {
  const auth = createAuthority(tempDir(t));
  t.after(() => auth.close());
  const repo = createRepository(auth, 'r');
  const first = listing(auth, 10, 10);
  const one = recordRevision(auth, repo.id, null, first);
  // 10 directory trees + the root; 100 file rows + 10 directory rows.
  assert.deepEqual(
    { trees: count(auth, 'trees'), entries: count(auth, 'tree_entries'), created: one.trees_created },
    { trees: 11, entries: 110, created: 11 },
  );

  const changed = first.map((e) =>
    e.path === 'd03/f07.txt' ? { ...e, blob: blob(auth, 'new content'), size: 11n } : e,
  );
  const two = recordRevision(auth, repo.id, one.id, changed);
  // Only d03 and the root are new: 10 + 10 rows.
  assert.deepEqual(
    { trees: count(auth, 'trees'), entries: count(auth, 'tree_entries'), created: two.trees_created },
    { trees: 13, entries: 130, created: 2 },
  );

  // Going back to the first tree under another parent shares every tree: no tree row at all.
  const three = recordRevision(auth, repo.id, two.id, first);
  assert.notEqual(three.id, one.id, 'the parent is part of the ID');
  assert.deepEqual(
    { trees: count(auth, 'trees'), entries: count(auth, 'tree_entries'), created: three.trees_created },
    { trees: 13, entries: 130, created: 0 },
  );
  assert.deepEqual(listRevisionEntries(auth, repo.id, three.id), first);
  assert.deepEqual(listRevisionEntries(auth, repo.id, two.id), changed);
});

test('the same tree and parent give the same revision ID in two stores, whatever was recorded before', (t) => {
  const a = createAuthority(tempDir(t));
  const b = createAuthority(tempDir(t));
  t.after(() => {
    a.close();
    b.close();
  });
  const ra = createRepository(a, 'x');
  const rb = createRepository(b, 'y');
  // Store b has history first: other trees stored, other rowids.
  recordRevision(b, rb.id, null, listing(b, 3, 4));
  const inA = recordRevision(a, ra.id, null, listing(a, 5, 5));
  const inB = recordRevision(b, rb.id, null, listing(b, 5, 5));
  assert.equal(inA.id, inB.id);
  const root = (auth: Authority, id: string): string =>
    (
      auth.db.prepare('SELECT t.digest FROM revisions r JOIN trees t ON t.rowid = r.tree WHERE r.id = ?').get(id) as {
        digest: string;
      }
    ).digest;
  assert.equal(root(a, inA.id), root(b, inB.id));
});

test('a rename, a mode change, a retargeted symlink each give a new revision; diff names exactly that path', (t) => {
  const auth = createAuthority(tempDir(t));
  t.after(() => auth.close());
  const repo = createRepository(auth, 'r');
  const x = blob(auth, 'x');
  const target1 = blob(auth, 'a.txt');
  const target2 = blob(auth, 'b.txt');
  const base: RevisionEntry[] = [
    { path: 'a.txt', mode: 'file', size: 1n, blob: x },
    { path: 'bin/run', mode: 'file', size: 1n, blob: x },
    { path: 'link', mode: 'symlink', size: 5n, blob: target1 },
  ];
  const r0 = recordRevision(auth, repo.id, null, base).id;
  const renamed = [{ ...base[0]!, path: 'b.txt' }, base[1]!, base[2]!];
  const moded = [base[0]!, { ...base[1]!, mode: 'executable' as const }, base[2]!];
  const retargeted = [base[0]!, base[1]!, { ...base[2]!, blob: target2 }];
  const r1 = recordRevision(auth, repo.id, r0, renamed).id;
  const r2 = recordRevision(auth, repo.id, r0, moded).id;
  const r3 = recordRevision(auth, repo.id, r0, retargeted).id;
  assert.equal(new Set([r0, r1, r2, r3]).size, 4);
  assert.deepEqual(diffRevisions(auth, repo.id, r0, r1), [
    { path: 'a.txt', change: 'deleted', before: 'file', after: null },
    { path: 'b.txt', change: 'added', before: null, after: 'file' },
  ]);
  assert.deepEqual(diffRevisions(auth, repo.id, r0, r2), [
    { path: 'bin/run', change: 'modified', before: 'file', after: 'executable' },
  ]);
  assert.deepEqual(diffRevisions(auth, repo.id, r0, r3), [
    { path: 'link', change: 'modified', before: 'symlink', after: 'symlink' },
  ]);
  assert.deepEqual(diffRevisions(auth, repo.id, r0, r0), []);
  assert.equal(statRevisionPath(auth, repo.id, r3, 'link')?.blob, target2);
  assert.equal(readRevisionFile(auth, repo.id, r3, 'link', { maxBytes: 10 }).toString(), 'b.txt');
});

test('a file that becomes a directory and back: diff keeps path order; empty trees and directories', (t) => {
  const auth = createAuthority(tempDir(t));
  t.after(() => auth.close());
  const repo = createRepository(auth, 'r');
  const x = blob(auth, 'x');
  const file = (path: string): RevisionEntry => ({ path, mode: 'file', size: 1n, blob: x });
  // "a-b" sorts between the file "a" and the directory "a/" (git's rule).
  const r0 = recordRevision(auth, repo.id, null, [file('a'), file('a-b')]).id;
  const r1 = recordRevision(auth, repo.id, r0, [file('a-b'), file('a/inner')]).id;
  assert.deepEqual(
    diffRevisions(auth, repo.id, r0, r1).map((c) => `${c.change} ${c.path}`),
    ['deleted a', 'added a/inner'],
  );
  assert.deepEqual(
    [...readTransaction(auth, () => [...iterateRevisionEntries(auth, repo.id, r1)])].map((e) => e.path),
    ['a-b', 'a/inner'],
  );
  assert.equal(revisionHasDirectory(auth, repo.id, r1, 'a'), true);
  assert.equal(revisionHasDirectory(auth, repo.id, r1, 'a-b'), false);
  assert.equal(revisionHasDirectory(auth, repo.id, r0, 'a'), false);
  assert.equal(statRevisionPath(auth, repo.id, r1, 'a'), null, 'a directory is not a file');
  assert.equal(statRevisionPath(auth, repo.id, r1, 'a-b/x'), null, 'no path through a file');
  // An empty listing is the empty root tree; an empty directory has no tree and cannot be listed.
  const empty = buildTrees([]);
  assert.equal(empty.trees.length, 1);
  const r2 = recordRevision(auth, repo.id, r1, []).id;
  assert.deepEqual(
    diffRevisions(auth, repo.id, r1, r2).map((c) => `${c.change} ${c.path}`),
    ['deleted a-b', 'deleted a/inner'],
  );
  assert.equal(
    codeOf(() => recordRevision(auth, repo.id, null, [file('a'), file('a')])),
    'INTERNAL',
  );
});
