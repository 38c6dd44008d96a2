/**
 * `revision export`, `change export` and `change link --git-repo` (docs/git.md "Exporting revisions and candidate
 * versions") with a real git: modes, symlinks, UTF-8 names and a 10,000-file tree; the same revision gives the same
 * commit in any repository; `git fsck --strict` is clean; `git verify` recomputes the tree.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf } from '../helpers/cli.js';
import { makeEvidence } from '../support/evidence.js';
import { addModedRevision, cli, errorOf, gitIn, lsTree, makeGitRepo, ok, type FileSpec } from './git-land-support.js';

const FILES: Record<string, FileSpec> = {
  'run.sh': { bytes: '#!/bin/sh\n', mode: 'executable' },
  ln: { bytes: 'target/of link', mode: 'symlink' },
  'ünï/cödé – name.txt': 'utf-8',
  'a b/c\td.txt': 'tab and space',
  'x.bin': Buffer.from([0, 1, 2, 255, 254, 0]),
};

test('revision export: modes and names exactly, the same commit in two repositories, fsck --strict clean, git verify recomputes the tree', async (t) => {
  const ev = makeEvidence(t);
  const revision = addModedRevision(ev, FILES, ev.store.revision);
  const one = makeGitRepo(join(ev.dir, 'one'));
  const two = makeGitRepo(join(ev.dir, 'two'));
  const first = jsonOf<{ commit: string; tree: string; written: number }>(
    ok(
      await cli(ev, [
        'revision',
        'export',
        revision.slice(0, 12),
        '--git-repo',
        one,
        '--ref',
        'refs/heads/x',
        '--json',
      ]),
      'export',
    ),
  );
  assert.equal(gitIn(one, ['rev-parse', 'refs/heads/x']).trim(), first.commit);
  const tree = lsTree(one, first.commit);
  assert.deepEqual(
    [...tree.entries()].map(([path, [mode]]) => [path, mode]),
    [
      ['a b/c\td.txt', '100644'],
      ['ln', '120000'],
      ['run.sh', '100755'],
      ['x.bin', '100644'],
      ['ünï/cödé – name.txt', '100644'],
    ],
  );
  assert.equal(gitIn(one, ['cat-file', 'blob', 'x:ln']), 'target/of link');
  const again = jsonOf<{ commit: string; written: number }>(
    ok(await cli(ev, ['revision', 'export', revision, '--git-repo', one, '--ref', 'refs/heads/y', '--json']), 'again'),
  );
  assert.deepEqual([again.commit, again.written], [first.commit, 0], 'nothing written twice');
  const other = jsonOf<{ commit: string; written: number }>(
    ok(await cli(ev, ['revision', 'export', revision, '--git-repo', two, '--ref', 'refs/heads/x', '--json']), 'two'),
  );
  assert.equal(other.commit, first.commit, 'the same commit in another repository');
  assert.ok(other.written > 0, 'the objects the other repository lacked were written');
  gitIn(one, ['fsck', '--strict', '--no-progress']);
  gitIn(two, ['fsck', '--strict', '--no-progress']);

  const verified = jsonOf<Record<string, unknown>>(
    ok(await cli(ev, ['git', 'verify', 'refs/heads/x', '--git-repo', one, '--json']), 'verify'),
  );
  assert.deepEqual([verified.kind, verified.revision, verified.tree_matches], ['export', revision, true]);

  // A commit claiming the revision with another tree is refused.
  const forged = gitIn(one, [
    'commit-tree',
    `${first.tree}^{tree}`,
    '-m',
    `x\n\nAgentscm-Revision: ${ev.store.revision}`,
  ]).trim();
  const refused = await cli(ev, ['git', 'verify', forged, '--git-repo', one, '--json']);
  assert.equal(refused.code, 1, refused.stderr);
  assert.equal(errorOf(refused).code, 'GIT_COMMIT_UNPROVEN');
  const plain = await cli(ev, ['git', 'verify', 'main', '--git-repo', one, '--json']);
  assert.equal(errorOf(plain).code, 'GIT_COMMIT_UNPROVEN', 'a commit without trailers');
  const unknown = await cli(ev, ['git', 'verify', 'no-such-ref', '--git-repo', one, '--json']);
  assert.equal(errorOf(unknown).code, 'GIT_REVISION_UNKNOWN');
  const badRef = await cli(ev, ['revision', 'export', revision, '--git-repo', one, '--ref', 'heads/x', '--json']);
  assert.equal(errorOf(badRef).code, 'USAGE');
});

test('a 10,000-file revision exports once, fsck --strict clean; change export and change link default --sha', async (t) => {
  const ev = makeEvidence(t);
  const files: Record<string, FileSpec> = {};
  for (let i = 0; i < 10_000; i++) files[`d${String(i % 100)}/f${String(i)}.txt`] = `file ${String(i)}\n`;
  const revision = addModedRevision(ev, files, ev.store.revision);
  const repo = makeGitRepo(join(ev.dir, 'big'));
  const started = performance.now();
  const big = jsonOf<{ commit: string; written: number }>(
    ok(await cli(ev, ['revision', 'export', revision, '--git-repo', repo, '--ref', 'refs/heads/big', '--json']), 'big'),
  );
  const ms = performance.now() - started;
  t.diagnostic(`10,000-file export (CLI process included): ${ms.toFixed(0)} ms`);
  assert.equal(big.written, 10_000 + 100 + 1, 'every blob and tree written once');
  assert.equal(gitIn(repo, ['ls-tree', '-r', '--name-only', 'big']).split('\n').filter(Boolean).length, 10_000);
  gitIn(repo, ['fsck', '--strict', '--no-progress']);

  const exported = jsonOf<{ ref: string; commit: string }>(
    ok(await cli(ev, ['change', 'export', '--change', 'change-1', '--git-repo', repo, '--json']), 'change export'),
  );
  assert.equal(exported.ref, 'refs/agentscm/changes/change-1/v1');
  assert.equal(gitIn(repo, ['rev-parse', exported.ref]).trim(), exported.commit);
  const linked = jsonOf<{ sha: string }>(
    ok(
      await cli(ev, [
        'change',
        'link',
        '--change',
        'change-1',
        '--forge',
        'github',
        '--project',
        'acme/app',
        '--git-repo',
        repo,
        '--json',
      ]),
      'change link',
    ),
  );
  assert.equal(linked.sha, exported.commit, '--sha defaults to the exported candidate');
  const noVersion = await cli(ev, [
    'change',
    'export',
    '--change',
    'change-1',
    '--version',
    '2',
    '--git-repo',
    repo,
    '--json',
  ]);
  assert.notEqual(noVersion.code, 0);
});
