/**
 * A checkpoint compares the scan with the encoded stat cache in place (snapshotAgainstCache)
 * and builds its revision from the files of the changed directories only (revisionInput): the
 * changes, the new cache and the revision ID are those of the decoding path (snapshotTree) and
 * of a full rebuild, and the racy-timestamp rule still decides which files are hashed again.
 */
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { createRepository } from '../../src/native/repositories.js';
import {
  prepareRevision,
  prepareRevisionFromChanged,
  recordRevision,
  unchangedDirectories,
} from '../../src/native/revisions.js';
import { createAuthority, withBulkBlobWrites, type Authority } from '../../src/native/store.js';
import { scanWorkspace } from '../../src/workspace/scan.js';
import { cacheTrustworthy, revisionInput, snapshotAgainstCache, snapshotTree } from '../../src/workspace/snapshot.js';
import {
  decodeStatCache,
  EMPTY_STAT_CACHE,
  encodeStatCache,
  indexStatCache,
  type CachedEntry,
} from '../../src/workspace/stat-cache.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';

function write(root: string, path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

/**
 * Past the (50 ms) racy margin of every file written so far, so that the cache may trust them,
 * with room for a wall clock stepped back a little between the write and the read.
 */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 250));
}

/** A workspace root (not created yet) and a fresh store, closed when the test ends. */
function workspaceAndStore(t: TestContext): { root: string; auth: Authority } {
  const dir = tempDir(t);
  const auth = createAuthority(join(dir, 'data'));
  t.after(() => auth.close());
  return { root: join(dir, 'ws'), auth };
}

function snapshot(auth: Authority, root: string, cache: Buffer, full = false): ReturnType<typeof snapshotAgainstCache> {
  return withBulkBlobWrites(auth, () => snapshotAgainstCache(scanWorkspace(root), cache, { auth, full }));
}

test('the in-place comparison gives the changes and stat cache of the decoding one, and the revision of a full rebuild', async (t) => {
  const { root, auth } = workspaceAndStore(t);
  const repo = createRepository(auth, 'r');
  for (const d of ['a/b/c', 'a/b/d', 'a/e', 'f', 'g/h'])
    for (let i = 0; i < 4; i++) write(root, `${d}/x${i}.txt`, `${d} ${i}`);
  write(root, 'top.txt', 'top');
  write(root, 'g.txt', 'g');
  write(root, 'a.b', 'sorts before a/');
  symlinkSync('top.txt', join(root, 'link'));

  const first = snapshot(auth, root, EMPTY_STAT_CACHE, true);
  assert.equal(first.hashedFiles, 24);
  assert.equal(first.changes.length, 24);
  const baseEntries = [...decodeStatCache(first.cache).values()];
  const base = recordRevision(auth, repo.id, null, baseEntries);
  await settle();
  // Nothing changed and nothing is racy any more: the first cache is trusted and kept byte for byte
  // (its entries were racily clean when hashed, so this pass hashes them once more first).
  const again = snapshot(auth, root, first.cache);
  assert.deepEqual(again.changes, []);
  const steady = snapshot(auth, root, again.cache);
  assert.equal(steady.hashedFiles, 0);
  assert.ok(steady.cache.equals(again.cache));
  assert.equal(
    steady.totalBytes,
    baseEntries.reduce((sum, e) => sum + e.size, 0n),
  );

  // Files modified only (no file added or removed): the cache is rewritten in place and equals
  // the one the decoding path builds.
  write(root, 'f/x2.txt', 'changed in place');
  const modifiedOnly = withBulkBlobWrites(auth, () =>
    snapshotTree(scanWorkspace(root), decodeStatCache(steady.cache), { auth, full: false }),
  );
  const loaded = Buffer.from(steady.cache);
  const inPlace = snapshot(auth, root, loaded);
  assert.deepEqual(inPlace.changes, [{ path: 'f/x2.txt', kind: 'modified' }]);
  assert.equal(inPlace.cache, loaded, 'no new buffer for an edit that keeps the layout');
  const stripValid = (entries: Iterable<CachedEntry>): unknown[] =>
    [...entries].map(({ cacheValid: _valid, ...rest }) => rest);
  assert.deepEqual(stripValid(decodeStatCache(inPlace.cache).values()), stripValid(modifiedOnly.entries));
  write(root, 'f/x2.txt', 'f 2');

  // Edits of every kind: modified, added in a new directory, a directory deleted, a mode change,
  // a symlink retargeted, a file replaced by a directory.
  write(root, 'a/b/c/x1.txt', 'modified');
  write(root, 'a/new/y.txt', 'new');
  rmSync(join(root, 'g'), { recursive: true });
  chmodSync(join(root, 'g.txt'), 0o755);
  rmSync(join(root, 'link'));
  symlinkSync('g.txt', join(root, 'link'));
  rmSync(join(root, 'top.txt'));
  write(root, 'top.txt/z', 'z');

  const decoded = withBulkBlobWrites(auth, () =>
    snapshotTree(scanWorkspace(root), decodeStatCache(steady.cache), { auth, full: false }),
  );
  const merged = snapshot(auth, root, steady.cache);
  assert.deepEqual(merged.changes, decoded.changes);
  assert.deepEqual(
    merged.changes.map((c) => `${c.kind} ${c.path}`),
    [
      'modified a/b/c/x1.txt',
      'added a/new/y.txt',
      'modified g.txt',
      'deleted g/h/x0.txt',
      'deleted g/h/x1.txt',
      'deleted g/h/x2.txt',
      'deleted g/h/x3.txt',
      'modified link',
      'deleted top.txt',
      'added top.txt/z',
    ],
  );
  assert.equal(merged.hashedFiles, decoded.hashedFiles);
  // The new cache is the one the decoding path would install (cache validity aside: it depends
  // on the moment each file was read).
  const strip = (entries: Iterable<CachedEntry>): unknown[] =>
    [...entries].map(({ cacheValid: _valid, ...rest }) => rest);
  assert.deepEqual(strip(decodeStatCache(merged.cache).values()), strip(decoded.entries));
  assert.equal(
    merged.totalBytes,
    decoded.entries.reduce((sum, e) => sum + e.size, 0n),
  );

  const scan = scanWorkspace(root);
  const known = unchangedDirectories(
    auth,
    repo.id,
    base.id,
    merged.changes.map((c) => c.path),
  );
  const input = revisionInput(scan.table.paths, merged.cache, known);
  const partial = prepareRevisionFromChanged(base.id, input, known, {
    entryCount: scan.files.length,
    totalBytes: merged.totalBytes,
  });
  const whole = prepareRevision(base.id, decoded.entries);
  assert.equal(partial.id, whole.id);
  assert.equal(partial.entryCount, whole.entryCount);
  assert.equal(partial.totalBytes, whole.totalBytes);
  // Only the files of the directories on a changed path, and one file per untouched directory.
  assert.ok(input.length < scan.files.length, `${input.length} of ${scan.files.length}`);
  assert.deepEqual(
    input
      .filter((e) => e.path.startsWith('a/b/d/') || e.path.startsWith('a/e/') || e.path.startsWith('f/'))
      .map((e) => e.path),
    ['a/b/d/x0.txt', 'a/e/x0.txt', 'f/x0.txt'],
  );
  // Without known directories every file is given and the tree is the same.
  assert.equal(
    prepareRevisionFromChanged(base.id, revisionInput(scan.table.paths, merged.cache, new Map()), new Map(), whole).id,
    whole.id,
  );
});

test('an entry hashed within the racy margin is hashed again even when its stat snapshot matches', async (t) => {
  const { root, auth } = workspaceAndStore(t);
  write(root, 'f.txt', 'after');
  await settle();
  const file = scanWorkspace(root).files[0];
  assert.ok(file !== undefined);
  // The cache claims other content for a file with exactly this stat snapshot, as after a write
  // within the timestamp granularity of the read that made the entry.
  const stale = (cacheValid: boolean): Buffer =>
    encodeStatCache([{ path: 'f.txt', mode: 'file', size: 5n, blob: '00'.repeat(32), stat: file.stat, cacheValid }]);
  const racy = snapshot(auth, root, stale(false));
  assert.equal(racy.hashedFiles, 1);
  assert.deepEqual(racy.changes, [{ path: 'f.txt', kind: 'modified' }]);
  // A valid entry with the same snapshot is trusted as it is: the flag is what decides.
  const trusted = snapshot(auth, root, stale(true));
  assert.equal(trusted.hashedFiles, 0);
  assert.deepEqual(trusted.changes, []);
  // --full hashes it whatever the cache says.
  assert.equal(snapshot(auth, root, stale(true), true).changes.length, 1);
});

test('the racy margin is 50 ms, and 2 s only when both mtime and ctime are whole milliseconds', () => {
  const at = 1_800_000_000_000;
  const stat = (mtimeMs: number, ctimeMs: number) => ({ size: 1, mtimeMs, ctimeMs, ino: 1 });
  // Fine timestamps: trusted just past 50 ms before the read, not at it.
  assert.equal(cacheTrustworthy(stat(at - 50.001, at - 50.001), at), true);
  assert.equal(cacheTrustworthy(stat(at - 50, at - 60.5), at), false);
  assert.equal(cacheTrustworthy(stat(at - 60.5, at - 49.999), at), false);
  // One whole-millisecond time is chance (or an archive's mtime): the fine margin still holds.
  assert.equal(cacheTrustworthy(stat(at - 51, at - 50.5), at), true);
  assert.equal(cacheTrustworthy(stat(at - 3000.5, at - 51), at), true);
  assert.equal(cacheTrustworthy(stat(1_000_000_000_000, at - 50.25), at), true);
  // Both whole milliseconds: a coarse filesystem, trusted only past 2 s.
  assert.equal(cacheTrustworthy(stat(at - 2000, at - 2001), at), false);
  assert.equal(cacheTrustworthy(stat(at - 2001, at - 2000), at), false);
  assert.equal(cacheTrustworthy(stat(at - 2001, at - 2001), at), true);
  assert.equal(cacheTrustworthy(stat(at - 51, at - 51), at), false);
});

test('a file whose mtime is a whole second (as an archive sets it) is trusted after the fine margin', async (t) => {
  const { root, auth } = workspaceAndStore(t);
  write(root, 'unpacked.txt', 'from an archive');
  // The mtime of an archive entry: whole seconds. The ctime is the moment of this call, which a
  // fine-timestamp filesystem stamps with a fraction of a millisecond (set again in the rare case
  // it lands on a whole millisecond).
  const path = join(root, 'unpacked.txt');
  for (let i = 0; i < 10; i++) {
    utimesSync(path, 1_600_000_000, 1_600_000_000);
    if (!Number.isInteger(lstatSync(path).ctimeMs)) break;
  }
  assert.equal(lstatSync(path).mtimeMs, 1_600_000_000_000);
  assert.ok(!Number.isInteger(lstatSync(path).ctimeMs), 'this filesystem stamps fine ctimes');
  const first = snapshot(auth, root, EMPTY_STAT_CACHE);
  assert.equal(first.hashedFiles, 1);
  await settle();
  const again = snapshot(auth, root, first.cache);
  const steady = snapshot(auth, root, again.cache);
  // Hashed at most once more (if the first read fell within 50 ms of the ctime), then trusted:
  // 250 ms is past the fine margin, well inside the 2 s coarse one.
  assert.equal(steady.hashedFiles, 0);
  assert.deepEqual(steady.changes, []);
});

test('a damaged stat cache is refused when indexed, as when decoded', () => {
  const data = encodeStatCache([
    {
      path: 'a',
      mode: 'file',
      size: 1n,
      blob: '00'.repeat(32),
      stat: { size: 1, mtimeMs: 1, ctimeMs: 1, ino: 1 },
      cacheValid: true,
    },
  ]);
  assert.equal(indexStatCache(data).count, 1);
  assert.equal(
    codeOf(() => indexStatCache(Buffer.concat([data, Buffer.from([0])]))),
    'STORE_CORRUPT',
  );
  assert.equal(
    codeOf(() => indexStatCache(data.subarray(0, data.length - 1))),
    'STORE_CORRUPT',
  );
  const badMode = Buffer.from(data);
  badMode[5 + 2 + 1] = 3;
  assert.equal(
    codeOf(() => indexStatCache(badMode)),
    'STORE_CORRUPT',
  );
});
