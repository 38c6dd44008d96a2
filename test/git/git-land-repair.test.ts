/**
 * The git mirror of landings under failure (docs/git.md "Repair after a crash"): a land SIGKILLed after the native
 * landing committed and before the git write is repaired by `doctor --fix` and by the next `land`, with the commit ID
 * the uninterrupted landing would have written; a branch moved behind agentscm's back is refused without writing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { nativePaths } from '../../src/native/store.js';
import { LAND_GIT_PAUSE_POINT } from '../../src/tasks/admission/land-git.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, TEST_XDG_DATA_HOME } from '../helpers/cli.js';
import type { Evidence } from '../support/evidence.js';
import {
  approveAndLand,
  CHANGE_ID,
  cli,
  gitIn,
  linkMain,
  makeGitRepo,
  makeLandable,
  nextVersion,
  ok,
} from './git-land-support.js';

/** A land process SIGKILLed once its native landing committed, before the git write. */
async function killedLand(ev: Evidence): Promise<void> {
  const child = spawn(
    process.execPath,
    [...cliEntryArgv(), '--data-dir', ev.store.dataDir, 'land', '--change', CHANGE_ID, '--target', 'main'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, AGENTSCM_TEST_PAUSE_AT: LAND_GIT_PAUSE_POINT, XDG_DATA_HOME: TEST_XDG_DATA_HOME },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`agentscm-test-paused:${LAND_GIT_PAUSE_POINT}`)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, sig) => resolve(sig));
  });
  assert.equal(signal, 'SIGKILL', 'the land process was killed at its pause point');
}

function landingsOf(ev: Evidence): { landing_id: number; revision: string; landed_at_ms: number }[] {
  const db = new Database(nativePaths(ev.store.dataDir).db, { readonly: true });
  try {
    return db.prepare('SELECT landing_id, revision, landed_at_ms FROM landings ORDER BY landing_id').all() as {
      landing_id: number;
      revision: string;
      landed_at_ms: number;
    }[];
  } finally {
    db.close();
  }
}

test('a land killed between the native landing and the git write: doctor reports it, doctor --fix writes the same commit', async (t) => {
  const l = makeLandable(t);
  const repo = makeGitRepo(join(l.ev.dir, 'repo'));
  const start = gitIn(repo, ['rev-parse', 'main']).trim();
  ok(await linkMain(l.ev, repo), 'link');
  ok(await cli(l.ev, ['approve', '--change', CHANGE_ID]), 'approve');
  await killedLand(l.ev);
  const [landing] = landingsOf(l.ev);
  assert.ok(landing !== undefined, 'the native landing committed');
  assert.equal(gitIn(repo, ['rev-parse', 'main']).trim(), start, 'git was not written');

  const checked = await cli(l.ev, ['doctor', '--json']);
  const pending = jsonOf<{ findings: { code: string; check: string }[] }>(checked).findings.filter(
    (f) => f.check === 'git',
  );
  assert.deepEqual(
    pending.map((f) => f.code),
    ['GIT_MIRROR_PENDING'],
  );

  const fixed = jsonOf<{ findings: { code: string; check: string; message: string }[] }>(
    await cli(l.ev, ['doctor', '--fix', '--json']),
  ).findings.filter((f) => f.check === 'git');
  assert.deepEqual(
    fixed.map((f) => f.code),
    ['OK', 'OK'],
    JSON.stringify(fixed),
  );
  assert.match(fixed[0]?.message ?? '', /wrote 1 pending landing/);
  const head = gitIn(repo, ['rev-parse', 'main']).trim();
  const tree = gitIn(repo, ['rev-parse', `${head}^{tree}`]).trim();
  const message = gitIn(repo, ['cat-file', 'commit', head]).split('\n\n').slice(1).join('\n\n');
  const env = {
    GIT_AUTHOR_NAME: 'Repo Owner',
    GIT_AUTHOR_EMAIL: 'owner@example.test',
    GIT_COMMITTER_NAME: 'Repo Owner',
    GIT_COMMITTER_EMAIL: 'owner@example.test',
    GIT_AUTHOR_DATE: `@${String(Math.floor(landing.landed_at_ms / 1000))} +0000`,
    GIT_COMMITTER_DATE: `@${String(Math.floor(landing.landed_at_ms / 1000))} +0000`,
  };
  const { execFileSync } = await import('node:child_process');
  const recomputed = execFileSync('git', ['commit-tree', tree, '-p', start, '-F', '-'], {
    cwd: repo,
    input: message,
    encoding: 'utf8',
    env: { ...process.env, ...env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
  assert.equal(head, recomputed, 'the repaired commit is the one its recorded fields determine');
  assert.match(message, new RegExp(`^Agentscm-Landing: ${String(landing.landing_id)}$`, 'm'));
  gitIn(repo, ['fsck', '--strict', '--no-progress']);
});

test('a land killed before its git write is written by the next land, under the next landing', async (t) => {
  const l = makeLandable(t);
  const repo = makeGitRepo(join(l.ev.dir, 'repo'));
  const start = gitIn(repo, ['rev-parse', 'main']).trim();
  ok(await linkMain(l.ev, repo, ['--author', 'Lander <lander@example.test>']), 'link');
  ok(await cli(l.ev, ['approve', '--change', CHANGE_ID]), 'approve');
  await killedLand(l.ev);
  nextVersion(l.ev, { 'b.txt': 'beta', 'c.txt': 'gamma' }, l.revision);
  const second = await approveAndLand(l.ev);
  const landings = landingsOf(l.ev);
  assert.equal(landings.length, 2);
  const head = gitIn(repo, ['rev-parse', 'main']).trim();
  assert.equal((second.git as { commit: string }).commit, head);
  const first = gitIn(repo, ['rev-parse', `${head}^`]).trim();
  assert.equal(gitIn(repo, ['rev-parse', `${first}^`]).trim(), start, 'the killed landing comes first, on the base');
  assert.match(gitIn(repo, ['cat-file', 'commit', first]), new RegExp(`^Agentscm-Revision: ${l.revision}$`, 'm'));
  assert.match(
    gitIn(repo, ['cat-file', 'commit', first]),
    new RegExp(
      `^author Lander <lander@example.test> ${String(Math.floor((landings[0]?.landed_at_ms ?? 0) / 1000))} `,
      'm',
    ),
  );
  assert.equal(gitIn(repo, ['rev-list', '--count', `${start}..${head}`]).trim(), '2');
});

test('a branch moved behind agentscm is refused without writing; the landing stands, pending', async (t) => {
  const l = makeLandable(t);
  const repo = makeGitRepo(join(l.ev.dir, 'repo'));
  ok(await linkMain(l.ev, repo), 'link');
  gitIn(repo, ['commit', '--quiet', '--allow-empty', '-m', 'behind the back']);
  const moved = gitIn(repo, ['rev-parse', 'main']).trim();
  const objects = gitIn(repo, ['count-objects', '-v']);
  ok(await cli(l.ev, ['approve', '--change', CHANGE_ID]), 'approve');
  const landed = await cli(l.ev, ['land', '--change', CHANGE_ID, '--target', 'main', '--json']);
  assert.equal(landed.code, 3, landed.stderr);
  assert.match(landed.stderr, /^error\[GIT_BRANCH_MOVED\]: .+; put the branch back .+doctor --fix/m);
  const body = jsonOf<{ revision: string; git: { state: string; error: { code: string } } }>(landed);
  assert.equal(body.revision, l.revision, 'the native landing stands');
  assert.deepEqual([body.git.state, body.git.error.code], ['pending', 'GIT_BRANCH_MOVED']);
  assert.equal(gitIn(repo, ['rev-parse', 'main']).trim(), moved, 'the branch is left where it was');
  assert.equal(gitIn(repo, ['count-objects', '-v']), objects, 'no object was written');
  assert.equal(landingsOf(l.ev).length, 1);

  // Relinking mirrors later landings on top of the branch as it is; the pending one is left out.
  ok(await linkMain(l.ev, repo), 'relink');
  const fixed = jsonOf<{ findings: { code: string; check: string }[] }>(
    await cli(l.ev, ['doctor', '--json']),
  ).findings.filter((f) => f.check === 'git');
  assert.deepEqual(
    fixed.map((f) => f.code),
    ['OK'],
  );
});
