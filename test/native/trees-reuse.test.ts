/**
 * A checkpoint rebuilds only the trees on a changed path: unchangedDirectories gives the
 * stored digests of every other directory and prepareRevision neither rebuilds nor hashes
 * them, yet the revision ID and the recorded files are those of a full rebuild.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { putSmallBlob } from '../../src/native/blobs.js';
import { createRepository } from '../../src/native/repositories.js';
import {
  comparePaths,
  listRevisionEntries,
  prepareRevision,
  recordRevision,
  unchangedDirectories,
  type RevisionEntry,
} from '../../src/native/revisions.js';
import { createAuthority, writeTransaction, type Authority } from '../../src/native/store.js';
import { tempDir } from '../helpers/tmp.js';

function entry(auth: Authority, path: string, text = path): RevisionEntry {
  const digest = writeTransaction(auth, () => putSmallBlob(auth, Buffer.from(text)).digest);
  return { path, mode: 'file', size: BigInt(Buffer.byteLength(text)), blob: digest };
}

/** Paths of the files on both sides that differ (added, deleted, other content or mode). */
function changedPaths(before: readonly RevisionEntry[], after: readonly RevisionEntry[]): string[] {
  const old = new Map(before.map((e) => [e.path, e]));
  const now = new Map(after.map((e) => [e.path, e]));
  const changed = new Set<string>();
  for (const [path, e] of now) if (old.get(path)?.blob !== e.blob || old.get(path)?.mode !== e.mode) changed.add(path);
  for (const path of old.keys()) if (!now.has(path)) changed.add(path);
  return [...changed];
}

test('only the trees on a changed path are rebuilt, and the revision is that of a full rebuild', (t) => {
  const auth = createAuthority(tempDir(t));
  t.after(() => auth.close());
  const repo = createRepository(auth, 'r');
  const base: RevisionEntry[] = [];
  for (const dir of ['a/b/c', 'a/b/d', 'a/e', 'f', 'g/h'])
    for (let i = 0; i < 3; i++) base.push(entry(auth, `${dir}/x${i}.txt`));
  base.push(entry(auth, 'top.txt'), entry(auth, 'g.txt'));
  base.sort((x, y) => comparePaths(x.path, y.path));
  const first = recordRevision(auth, repo.id, null, base);

  const cases: { name: string; edit: (entries: RevisionEntry[]) => RevisionEntry[]; rebuilt: string[] }[] = [
    {
      name: 'one deep file modified',
      edit: (es) => es.map((e) => (e.path === 'a/b/c/x1.txt' ? entry(auth, e.path, 'new') : e)),
      rebuilt: ['a/b/c', 'a/b', 'a', ''],
    },
    {
      name: 'a file added in a new directory',
      edit: (es) => [...es, entry(auth, 'a/new/y.txt')],
      rebuilt: ['a/new', 'a', ''],
    },
    { name: 'a whole directory deleted', edit: (es) => es.filter((e) => !e.path.startsWith('g/')), rebuilt: [''] },
    {
      name: 'a directory replaced by a file',
      edit: (es) => [...es.filter((e) => !e.path.startsWith('f/')), entry(auth, 'f')],
      rebuilt: [''],
    },
    {
      name: 'a file replaced by a directory',
      edit: (es) => [...es.filter((e) => e.path !== 'top.txt'), entry(auth, 'top.txt/z')],
      rebuilt: ['top.txt', ''],
    },
    {
      name: 'a mode change at the root',
      edit: (es) => es.map((e) => (e.path === 'g.txt' ? { ...e, mode: 'executable' as const } : e)),
      rebuilt: [''],
    },
  ];
  for (const { name, edit, rebuilt } of cases) {
    const after = edit([...base]).sort((x, y) => comparePaths(x.path, y.path));
    const known = unchangedDirectories(auth, repo.id, first.id, changedPaths(base, after));
    const partial = prepareRevision(first.id, after, known);
    const whole = prepareRevision(first.id, after);
    assert.equal(partial.id, whole.id, name);
    assert.equal(partial.tree, whole.tree, name);
    assert.deepEqual(
      partial.trees.map((tree) => tree.path),
      rebuilt,
      name,
    );
    // Every tree it did not rebuild is one the full rebuild finds already stored.
    const rebuiltDigests = new Set(partial.trees.map((tree) => tree.digest));
    for (const tree of whole.trees) {
      if (rebuiltDigests.has(tree.digest)) continue;
      assert.notEqual(
        auth.db.prepare('SELECT 1 FROM trees WHERE digest = ?').get(tree.digest),
        undefined,
        `${name}: ${tree.path}`,
      );
    }
  }

  // Recorded from the partial build, the revision holds exactly the new listing.
  const after = cases[0]?.edit([...base]).sort((x, y) => comparePaths(x.path, y.path)) ?? [];
  const second = recordRevision(
    auth,
    repo.id,
    first.id,
    after,
    prepareRevision(first.id, after, unchangedDirectories(auth, repo.id, first.id, changedPaths(base, after))),
  );
  assert.equal(second.id, prepareRevision(first.id, after).id);
  assert.deepEqual(listRevisionEntries(auth, repo.id, second.id), after);
});
