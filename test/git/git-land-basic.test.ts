/**
 * `target link` and `land` to git (docs/git.md "Landing to git") with a real git: the commit's tree is byte for byte
 * the landed revision (exec bits, symlinks, UTF-8 names), its parent the branch as linked, its trailers name the
 * Change, revision, receipt and landing; `git fsck --strict` is clean; the identity and date are the recorded ones.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf } from '../helpers/cli.js';
import {
  approveAndLand,
  CHANGE_ID,
  cli,
  errorOf,
  gitIn,
  linkMain,
  lsTree,
  makeGitRepo,
  makeLandable,
  ok,
} from './git-land-support.js';

const FILES = {
  'b.txt': 'beta',
  'bin/run.sh': { bytes: '#!/bin/sh\necho hi\n', mode: 'executable' as const },
  'link-to-b': { bytes: 'b.txt', mode: 'symlink' as const },
  'dir/naïve – ünïcode.txt': 'utf-8 name',
  'dir/sub/deep.txt': 'deep',
};

test('land on a linked target writes one git commit whose tree is the landed revision, fsck --strict clean', async (t) => {
  const l = makeLandable(t, FILES);
  const repo = makeGitRepo(join(l.ev.dir, 'repo'));
  const start = gitIn(repo, ['rev-parse', 'main']).trim();
  const link = jsonOf<Record<string, unknown>>(ok(await linkMain(l.ev, repo), 'link'));
  assert.equal(link.base_commit, start);
  assert.equal(link.author, 'Repo Owner <owner@example.test>', "git's own identity, read at link time");

  const landed = await approveAndLand(l.ev);
  const mirror = landed.git as { state: string; commit: string; branch: string };
  assert.equal(mirror.state, 'written');
  const head = gitIn(repo, ['rev-parse', 'main']).trim();
  assert.equal(mirror.commit, head);
  assert.equal(gitIn(repo, ['rev-parse', `${head}^`]).trim(), start, 'parented on the branch as linked');

  const tree = lsTree(repo, head);
  assert.equal(tree.get('bin/run.sh')?.[0], '100755');
  assert.equal(tree.get('link-to-b')?.[0], '120000');
  assert.equal(tree.get('b.txt')?.[0], '100644');
  assert.equal(tree.get('dir/naïve – ünïcode.txt')?.[0], '100644');
  assert.equal(gitIn(repo, ['cat-file', 'blob', 'HEAD:link-to-b']), 'b.txt');
  assert.equal(gitIn(repo, ['cat-file', 'blob', 'HEAD:bin/run.sh']), '#!/bin/sh\necho hi\n');
  const shown = jsonOf<{ entries: { path: string }[] }>(
    ok(await cli(l.ev, ['revision', 'show', l.revision, '--json']), 'revision show'),
  );
  assert.deepEqual([...tree.keys()].sort(), shown.entries.map((e) => e.path).sort(), 'the same paths as the revision');

  const body = gitIn(repo, ['cat-file', 'commit', head]);
  assert.match(
    body,
    new RegExp(
      `^author Repo Owner <owner@example.test> ${String(Math.floor(Number(landed.landed_at_ms) / 1000))} \\+0000$`,
      'm',
    ),
  );
  assert.match(body, /^committer Repo Owner <owner@example.test> \d+ \+0000$/m);
  assert.match(body, new RegExp(`^Agentscm-Change: ${CHANGE_ID}$`, 'm'));
  assert.match(body, new RegExp(`^Agentscm-Revision: ${l.revision}$`, 'm'));
  assert.match(body, new RegExp(`^Agentscm-Receipt: imported ${String(landed.receipt_digest)}$`, 'm'));
  assert.match(body, new RegExp(`^Agentscm-Landing: ${String(landed.landing_id)}$`, 'm'));
  gitIn(repo, ['fsck', '--strict', '--no-progress']);
});

test('target link refuses a bad branch name, a bad --author, --push without --remote, an unknown target', async (t) => {
  const l = makeLandable(t);
  const repo = makeGitRepo(join(l.ev.dir, 'repo'));
  for (const [args, code] of [
    [['--branch', 'bad..name'], 'USAGE'],
    [['--author', 'no email'], 'USAGE'],
    [['--push'], 'USAGE'],
    [['--remote', 'nowhere'], 'USAGE'],
  ] as const) {
    const r = await cli(l.ev, ['target', 'link', 'main', '--git-repo', repo, '--branch', 'main', '--json', ...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(errorOf(r).code, code);
  }
  const unknown = await cli(l.ev, ['target', 'link', 'nope', '--git-repo', repo, '--branch', 'main', '--json']);
  assert.equal(errorOf(unknown).code, 'TARGET_NOT_FOUND');
  const notGit = await cli(l.ev, ['target', 'link', 'main', '--git-repo', l.ev.dir, '--branch', 'main', '--json']);
  assert.equal(errorOf(notGit).code, 'GIT_DIR_UNTRUSTED');
});
