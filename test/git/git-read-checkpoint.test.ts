/**
 * `checkpoint --from-git REV` against real git (docs/git.md "Checkpointing a git commit"): modes, odd names, the
 * same tree giving the same revision, the work tree and workspace left alone, and every refusal recording nothing.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { tempDir } from '../helpers/tmp.js';
import {
  changeVersion,
  commitAll,
  fromGit,
  git,
  initRepo,
  makeRepo,
  okJson,
  refused,
  revisionEntries,
  revisionFiles,
} from './git-read-support.js';

/** A bound git work tree `ws` (one commit: README) and a second repository `other` with every kind of entry. */
async function setUp(t: TestContext): Promise<{ data: string; ws: string; other: string }> {
  const root = tempDir(t, 'agentscm-git-read-');
  const data = join(root, 'data');
  const ws = makeRepo(join(root, 'ws'));
  writeFileSync(join(ws, 'README'), 'start\n');
  commitAll(ws, 'start');
  const init = await initRepo(data, ws);
  assert.equal(init.git_work_tree, ws);
  const other = makeRepo(join(root, 'other'));
  return { data, ws, other };
}

test('every mode and odd name of a commit is recorded byte-exact, and nothing of the work tree changes', async (t) => {
  const { data, ws } = await setUp(t);
  git(ws, ['checkout', '--quiet', '-b', 'agent']);
  mkdirSync(join(ws, 'dir with space', 'é'), { recursive: true });
  writeFileSync(join(ws, 'dir with space', 'é', 'naïve – ünïcode.txt'), 'utf-8 name\n');
  writeFileSync(join(ws, '-leading-dash'), 'dash\n');
  writeFileSync(join(ws, 'tool.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(ws, 'tool.sh'), 0o755);
  symlinkSync('dir with space/é', join(ws, 'link'));
  writeFileSync(join(ws, 'crlf.bin'), Buffer.from([0x61, 0x0d, 0x0a, 0x00, 0xff]));
  const commit = commitAll(ws, 'agent work');
  git(ws, ['checkout', '--quiet', 'main']);
  const before = {
    status: git(ws, ['status', '--porcelain', '--ignored']),
    mtime: statSync(join(ws, 'README')).mtimeMs,
  };
  const stateBefore = readFileSync(join(ws, '.agentscm', 'workspace.sqlite'));

  const cp = await fromGit(data, ws, 'c1', 'agent');
  assert.equal(cp.created, true);
  assert.equal(cp.version, 1);
  assert.equal(cp.git.commit, commit);
  assert.equal(cp.files, 6);
  const files = revisionFiles(data, cp.revision);
  assert.deepEqual(
    files.map((f) => [f.path, f.mode]),
    [
      ['-leading-dash', 'file'],
      ['README', 'file'],
      ['crlf.bin', 'file'],
      ['dir with space/é/naïve – ünïcode.txt', 'file'],
      ['link', 'symlink'],
      ['tool.sh', 'executable'],
    ],
  );
  const byPath = new Map(files.map((f) => [f.path, f.bytes]));
  assert.deepEqual(byPath.get('crlf.bin'), Buffer.from([0x61, 0x0d, 0x0a, 0x00, 0xff]));
  assert.equal(byPath.get('link')?.toString('utf8'), 'dir with space/é');
  assert.equal(byPath.get('tool.sh')?.toString('utf8'), '#!/bin/sh\necho hi\n');

  // The work tree (on main) and the workspace's own state are exactly as they were.
  assert.equal(git(ws, ['status', '--porcelain', '--ignored']), before.status);
  assert.equal(statSync(join(ws, 'README')).mtimeMs, before.mtime);
  assert.equal(git(ws, ['rev-parse', '--abbrev-ref', 'HEAD']).trim(), 'main');
  assert.deepEqual(readFileSync(join(ws, '.agentscm', 'workspace.sqlite')), stateBefore);
});

test('the same git tree gives the same revision ID; a Change already at it gets no new version', async (t) => {
  const { data, ws } = await setUp(t);
  git(ws, ['checkout', '--quiet', '-b', 'a']);
  writeFileSync(join(ws, 'x.txt'), 'x\n');
  const first = commitAll(ws, 'x');
  // A second commit with the very same tree (another message, another parent).
  git(ws, ['checkout', '--quiet', 'main']);
  git(ws, ['checkout', '--quiet', '-b', 'b']);
  writeFileSync(join(ws, 'x.txt'), 'x\n');
  const second = commitAll(ws, 'x again');
  assert.notEqual(first, second);
  assert.equal(git(ws, ['rev-parse', `${first}^{tree}`]), git(ws, ['rev-parse', `${second}^{tree}`]));
  git(ws, ['checkout', '--quiet', 'main']);

  const one = await fromGit(data, ws, 'c1', first);
  const two = await fromGit(data, ws, 'c2', second);
  assert.equal(two.revision, one.revision);
  const again = await fromGit(data, ws, 'c1', second);
  assert.equal(again.created, false);
  assert.equal(again.revision, one.revision);
  assert.equal(changeVersion(data, 'c1'), 1n);
  // The commit the workspace was bound from has the base revision's tree: it is the base revision itself.
  const base = await fromGit(data, ws, 'c3', 'main');
  assert.equal(base.revision, base.previous_revision);
});

test('an unknown revision, a gitlink, an unrecordable name and a missing repository record nothing', async (t) => {
  const { data, ws, other } = await setUp(t);
  await refused(
    data,
    ['checkpoint', '--workspace', ws, '--change', 'c1', '--from-git', 'no-such-branch'],
    'GIT_REVISION_UNKNOWN',
  );
  await refused(
    data,
    ['checkpoint', '--workspace', ws, '--change', 'c1', '--from-git', '--output=x'],
    'GIT_REVISION_UNKNOWN',
  );

  // A submodule: a gitlink entry in the commit's tree.
  writeFileSync(join(other, 'a.txt'), 'a\n');
  commitAll(other, 'a');
  const target = git(other, ['rev-parse', 'HEAD']).trim();
  git(other, ['update-index', '--add', '--cacheinfo', `160000,${target},vendor/lib`]);
  git(other, ['commit', '--quiet', '-m', 'gitlink']);
  await refused(
    data,
    ['checkpoint', '--workspace', ws, '--change', 'c1', '--from-git', 'HEAD', '--git-repo', other],
    'GIT_SUBMODULE_UNSUPPORTED',
  );

  // A name with a newline: git takes it, the native store does not.
  git(other, ['rm', '--quiet', '--cached', 'vendor/lib']);
  writeFileSync(join(other, 'new\nline'), 'n\n');
  commitAll(other, 'newline');
  await refused(
    data,
    ['checkpoint', '--workspace', ws, '--change', 'c1', '--from-git', 'HEAD', '--git-repo', other],
    'GIT_TREE_UNRECORDABLE',
  );
  await refused(
    data,
    ['checkpoint', '--workspace', ws, '--change', 'c1', '--from-git', 'HEAD', '--git-repo', join(other, 'nope')],
    'GIT_NOT_A_WORK_TREE',
  );
  assert.equal(changeVersion(data, 'c1'), null);
});

test('the file-count bound holds at the bound and refuses one past it', async (t) => {
  const { data, ws, other } = await setUp(t);
  for (let i = 0; i < 3; i++) writeFileSync(join(other, `f${i}`), `${i}\n`);
  commitAll(other, 'three files');
  const args = ['checkpoint', '--workspace', ws, '--change', 'c1', '--from-git', 'HEAD', '--git-repo', other];
  await refused(data, args, 'GIT_TREE_UNRECORDABLE', { AGENTSCM_SCAN_MAX_FILES: '2' });
  assert.equal(changeVersion(data, 'c1'), null);
  const cp = await fromGit(data, ws, 'c1', 'HEAD', ['--git-repo', other]);
  assert.equal(cp.files, 3);
  // At the bound exactly (a fresh Change, the same tree: same revision).
  const at = await okJson<{ revision: string }>(data, [...args.slice(0, 4), 'c2', ...args.slice(5)], {
    AGENTSCM_SCAN_MAX_FILES: '3',
  });
  assert.equal(at.revision, cp.revision);
});

test('a 10,000-file commit is checkpointed whole', async (t) => {
  const { data, ws, other } = await setUp(t);
  for (let d = 0; d < 100; d++) {
    const dir = join(other, `d${String(d).padStart(3, '0')}`);
    mkdirSync(dir);
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `f${f}.txt`), `file ${d}/${f}\n`);
  }
  commitAll(other, 'ten thousand');
  const started = Date.now();
  const cp = await fromGit(data, ws, 'big', 'HEAD', ['--git-repo', other]);
  t.diagnostic(`checkpoint --from-git of 10,000 files: ${Date.now() - started} ms`);
  assert.equal(cp.files, 10_000);
  const entries = revisionEntries(data, cp.revision);
  assert.equal(entries.length, 10_000);
  assert.equal(entries[0]?.path, 'd000/f0.txt');
  const last = entries.find((e) => e.path === 'd099/f99.txt');
  assert.equal(last?.blob, createHash('sha256').update('file 99/99\n').digest('hex'));
});
