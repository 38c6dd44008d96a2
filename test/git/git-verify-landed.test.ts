/**
 * `git verify` of landed commits, `--push` to a local bare repository, and two concurrent `land` processes
 * (docs/git.md "Landing to git", "Verifying a commit") with a real git.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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
  makeGitRepo,
  makeLandable,
  ok,
} from './git-land-support.js';

test('git verify names the landing, Change, revision and receipt of a landed commit; --push updates a bare remote', async (t) => {
  const l = makeLandable(t, { 'b.txt': 'beta', 'run.sh': { bytes: '#!/bin/sh\n', mode: 'executable' } });
  const repo = makeGitRepo(join(l.ev.dir, 'repo'));
  const bare = join(l.ev.dir, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', bare]);
  gitIn(repo, ['remote', 'add', 'origin', bare]);
  ok(await linkMain(l.ev, repo, ['--remote', 'origin', '--push']), 'link');
  const landed = await approveAndLand(l.ev);
  const head = gitIn(repo, ['rev-parse', 'main']).trim();
  assert.equal(gitIn(bare, ['rev-parse', 'refs/heads/main']).trim(), head, 'pushed to the bare remote');

  const verified = jsonOf<Record<string, unknown>>(
    ok(await cli(l.ev, ['git', 'verify', 'main', '--git-repo', repo, '--json']), 'verify'),
  );
  assert.deepEqual(
    [verified.kind, verified.commit, verified.recorded_commit, verified.landing_id, verified.change_id],
    ['landing', head, head, landed.landing_id, CHANGE_ID],
  );
  assert.equal(verified.revision, l.revision);
  assert.equal(verified.receipt, `imported ${String(landed.receipt_digest)}`);
  assert.equal(verified.tree_matches, true);

  // The same trailers on another tree, and a landing that does not exist, are refused.
  const message = gitIn(repo, ['cat-file', 'commit', head]).split('\n\n').slice(1).join('\n\n');
  const otherTree = gitIn(repo, ['rev-parse', `${head}^^{tree}`]).trim();
  const forged = gitIn(repo, ['commit-tree', otherTree, '-F', '-'], message).trim();
  const refused = await cli(l.ev, ['git', 'verify', forged, '--git-repo', repo, '--json']);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(errorOf(refused).message, /is not revision/);
  const wrongLanding = gitIn(
    repo,
    ['commit-tree', `${head}^{tree}`, '-F', '-'],
    message.replace(/Agentscm-Landing: \d+/, 'Agentscm-Landing: 99'),
  ).trim();
  assert.equal(
    errorOf(await cli(l.ev, ['git', 'verify', wrongLanding, '--git-repo', repo, '--json'])).code,
    'GIT_COMMIT_UNPROVEN',
  );
  gitIn(repo, ['fsck', '--strict', '--no-progress']);
});

test('two concurrent lands: one lands, the git branch moves exactly once, as the native target', async (t) => {
  const l = makeLandable(t);
  const repo = makeGitRepo(join(l.ev.dir, 'repo'));
  const start = gitIn(repo, ['rev-parse', 'main']).trim();
  ok(await linkMain(l.ev, repo), 'link');
  ok(await cli(l.ev, ['approve', '--change', CHANGE_ID]), 'approve');
  const both = await Promise.all(
    [0, 1].map(() => cli(l.ev, ['land', '--change', CHANGE_ID, '--target', 'main', '--json'])),
  );
  const codes = both.map((r) => r.code).sort();
  assert.deepEqual(codes, [0, 3], both.map((r) => r.stderr).join('\n'));
  const head = gitIn(repo, ['rev-parse', 'main']).trim();
  assert.equal(gitIn(repo, ['rev-list', '--count', `${start}..${head}`]).trim(), '1');
  assert.match(gitIn(repo, ['cat-file', 'commit', head]), new RegExp(`^Agentscm-Revision: ${l.revision}$`, 'm'));
  const winner = both.find((r) => r.code === 0);
  assert.equal(jsonOf<{ git: { commit: string } }>(winner ?? both[0]!).git.commit, head);
});
