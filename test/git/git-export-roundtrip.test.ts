/**
 * The round trip (docs/git.md "Exporting revisions and candidate versions", "Checkpointing a git commit"): a
 * revision exported as a git commit and checkpointed back with `checkpoint --from-git` is the same revision ID, and
 * the export's tree is the tree of the commit the revision was read from.
 */
import assert from 'node:assert/strict';
import { chmodSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { tempDir } from '../helpers/tmp.js';
import { commitAll, fromGit, git, initRepo, makeRepo, okJson } from './git-read-support.js';

test('checkpoint --from-git of an exported revision yields the same revision ID', async (t) => {
  const root = tempDir(t, 'agentscm-git-roundtrip-');
  const data = join(root, 'data');
  const ws = makeRepo(join(root, 'ws'));
  writeFileSync(join(ws, 'README'), 'start\n');
  commitAll(ws, 'start');
  await initRepo(data, ws);
  git(ws, ['checkout', '--quiet', '-b', 'agent']);
  writeFileSync(join(ws, 'tool.sh'), '#!/bin/sh\n');
  chmodSync(join(ws, 'tool.sh'), 0o755);
  symlinkSync('README', join(ws, 'link'));
  writeFileSync(join(ws, 'naïve – ü.txt'), 'utf-8\n');
  const agent = commitAll(ws, 'agent work');
  git(ws, ['checkout', '--quiet', 'main']);

  const first = await fromGit(data, ws, 'c1', 'agent');
  const exported = await okJson<{ commit: string; tree: string }>(data, [
    'revision',
    'export',
    first.revision,
    '--git-repo',
    ws,
    '--ref',
    'refs/heads/exported',
  ]);
  assert.equal(exported.tree, git(ws, ['rev-parse', `${agent}^{tree}`]).trim(), 'the same git tree');
  assert.notEqual(exported.commit, agent, 'another commit (no parent, fixed identity and time)');
  const back = await fromGit(data, ws, 'c2', 'exported');
  assert.equal(back.revision, first.revision, 'the same revision ID');
  const verified = await okJson<{ kind: string; revision: string }>(data, [
    'git',
    'verify',
    'exported',
    '--git-repo',
    ws,
  ]);
  assert.deepEqual([verified.kind, verified.revision], ['export', first.revision]);
});
