/**
 * `checkpoint --from-git` remembers what it read (docs/git.md "Checkpointing a git commit"): every blob read has
 * its git ID recomputed from its bytes and is remembered in `git_objects` (native SHA-256 → git ID); a later
 * checkpoint takes a remembered blob from there without reading it from git.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { openAuthority } from '../../src/native/store.js';
import { tempDir } from '../helpers/tmp.js';
import { commitAll, fromGit, git, initRepo, makeRepo, revisionFiles } from './git-read-support.js';

function rows(data: string): Map<string, string> {
  const auth = openAuthority(data, { mode: 'read' });
  try {
    const all = auth.db.prepare('SELECT native, git FROM git_objects').all() as { native: string; git: string }[];
    return new Map(all.map((r) => [r.native, r.git]));
  } finally {
    auth.close();
  }
}

test('blobs read from git are remembered by their verified IDs and not read again', async (t) => {
  const root = tempDir(t, 'agentscm-git-known-');
  const ws = makeRepo(join(root, 'ws'));
  const data = join(root, 'data');
  writeFileSync(join(ws, 'README'), 'start\n');
  await initRepo(data, ws);
  const bodies = ['one\n', 'two\n', 'three\n'];
  bodies.forEach((body, i) => writeFileSync(join(ws, `f${i}.txt`), body));
  const first = commitAll(ws, 'three files');
  await fromGit(data, ws, 'c1', first);
  const remembered = rows(data);
  for (const [path, body] of [
    ['f0.txt', 'one\n'],
    ['f1.txt', 'two\n'],
    ['f2.txt', 'three\n'],
    ['README', 'start\n'],
  ]) {
    const sha256 = createHash('sha256')
      .update(body as string)
      .digest('hex');
    assert.equal(remembered.get(sha256), git(ws, ['rev-parse', `${first}:${path as string}`]).trim(), path);
  }
  assert.equal(remembered.size, 4);

  // A remembered blob is taken from the table, not from git: point f0's git ID at README's content, and the next
  // checkpoint of a commit holding f0 records that content (something only the table could have said).
  const f0 = createHash('sha256').update('one\n').digest('hex');
  const readme = createHash('sha256').update('start\n').digest('hex');
  const auth = openAuthority(data, { mode: 'write' });
  try {
    auth.db.prepare('DELETE FROM git_objects WHERE native = ?').run(f0);
    auth.db.prepare('UPDATE git_objects SET git = ? WHERE native = ?').run(remembered.get(f0), readme);
  } finally {
    auth.close();
  }
  writeFileSync(join(ws, 'f3.txt'), 'four\n');
  const second = commitAll(ws, 'a fourth file');
  const cp = await fromGit(data, ws, 'c2', second);
  const files = new Map(revisionFiles(data, cp.revision).map((f) => [f.path, f.bytes.toString('utf8')]));
  assert.equal(files.get('f0.txt'), 'start\n');
  assert.equal(files.get('f3.txt'), 'four\n');
  assert.equal(
    rows(data).get(createHash('sha256').update('four\n').digest('hex')),
    git(ws, ['rev-parse', 'HEAD:f3.txt']).trim(),
  );
});
