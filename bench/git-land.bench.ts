/**
 * Landing to git (issue 29, "Benchmark"), `npm run bench -- git`: the git write of a landing of a one-file change
 * on a 10,000-file repository whose previous landing is already mirrored — the revision's tree (the objects git
 * lacks: one blob, two trees), `commit-tree` and `update-ref`, as src/git/land-mirror.ts does it after `land`
 * commits natively — against `git commit -q -m … FILE` of the same one-file change in a 10,000-file work tree, in
 * the same run, alternating, medians. Target: ≤ 1.5×. `node -e 0` is printed as the floor.
 * AGENTSCM_BENCH_RUNS (default 9) sets the rounds.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { git } from '../src/git/run.js';
import { commitTree, writeRevisionTree } from '../src/git/write-revision.js';
import { putSmallBlob } from '../src/native/blobs.js';
import { createRepository } from '../src/native/repositories.js';
import { comparePaths, recordRevision, type RevisionEntry } from '../src/native/revisions.js';
import { createAuthority, writeTransaction, type Authority } from '../src/native/store.js';
import { floorLine, nodeFloorSync } from './_floor.js';

const FILES = 10_000;
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 9);
const TARGET = 1.5;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function pathOf(i: number): string {
  return `d${String(i % 100)}/f${String(i)}.txt`;
}

/** The revision of the 10,000 files with file 0's content `head`, on `parent`. */
function revisionOf(auth: Authority, repository: string, parent: string | null, head: string): string {
  const entries: RevisionEntry[] = writeTransaction(auth, () =>
    Array.from({ length: FILES }, (_, i) => {
      const bytes = Buffer.from(i === 0 ? head : `file ${String(i)}\n`);
      const digest = createHash('sha256').update(bytes).digest('hex');
      putSmallBlob(auth, bytes, digest);
      return { path: pathOf(i), mode: 'file' as const, size: BigInt(bytes.byteLength), blob: digest };
    }),
  );
  entries.sort((a, b) => comparePaths(a.path, b.path));
  return recordRevision(auth, repository, parent, entries).id;
}

function gitIn(cwd: string, args: readonly string[]): void {
  const result = spawnSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@x',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@x',
    },
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} exited ${String(result.status)}`);
}

export function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-bench-git-'));
  try {
    process.stderr.write(
      `building a ${String(FILES)}-file revision, its mirror and a ${String(FILES)}-file work tree…\n`,
    );
    const auth = createAuthority(join(dir, 'data'));
    const repository = writeTransaction(auth, () => createRepository(auth, 'bench')).id;
    const mirror = join(dir, 'mirror');
    mkdirSync(mirror);
    execFileSync('git', ['init', '-q', '-b', 'main', mirror]);
    let revision = revisionOf(auth, repository, null, 'v0\n');
    let tree = writeRevisionTree(auth, repository, revision, mirror).tree;
    let parent = commitTree(mirror, {
      tree,
      parent: null,
      message: 'm0\n',
      identity: 'b <b@x>',
      timeMs: 0,
      sign: false,
    });
    git(mirror, ['update-ref', 'refs/heads/main', parent]);
    const revisions = Array.from({ length: RUNS }, (_, k) => {
      revision = revisionOf(auth, repository, revision, `v${String(k + 1)}\n`);
      return revision;
    });

    const work = join(dir, 'work');
    mkdirSync(work);
    gitIn(work, ['init', '-q', '-b', 'main']);
    for (let i = 0; i < FILES; i++) {
      mkdirSync(join(work, `d${String(i % 100)}`), { recursive: true });
      writeFileSync(join(work, pathOf(i)), i === 0 ? 'v0\n' : `file ${String(i)}\n`);
    }
    gitIn(work, ['add', '-A']);
    gitIn(work, ['commit', '-q', '-m', 'c0']);

    const ours: number[] = [];
    const theirs: number[] = [];
    const floors: number[] = [];
    for (let k = 0; k < RUNS; k++) {
      const next = revisions[k] as string;
      let start = performance.now();
      tree = writeRevisionTree(auth, repository, next, mirror).tree;
      const commit = commitTree(mirror, {
        tree,
        parent,
        message: `Land v${String(k + 1)}\n`,
        identity: 'b <b@x>',
        timeMs: (k + 1) * 1000,
        sign: false,
      });
      git(mirror, ['update-ref', 'refs/heads/main', commit, parent]);
      ours.push(performance.now() - start);
      parent = commit;

      writeFileSync(join(work, pathOf(0)), `v${String(k + 1)}\n`);
      start = performance.now();
      gitIn(work, ['commit', '-q', '-m', `c${String(k + 1)}`, pathOf(0)]);
      theirs.push(performance.now() - start);
      floors.push(nodeFloorSync());
    }
    const mine = median(ours);
    const base = median(theirs);
    const ratio = mine / base;
    process.stdout.write(`git write of a 1-file landing on ${String(FILES)} files: ${mine.toFixed(1)} ms\n`);
    process.stdout.write(`git commit of the same change:                  ${base.toFixed(1)} ms\n`);
    process.stdout.write(
      `ratio ${ratio.toFixed(2)}× (target ≤ ${String(TARGET)}×) ${ratio <= TARGET ? 'ok' : 'OVER'}\n`,
    );
    process.stdout.write(`${floorLine(floors, { name: 'git write', ms: mine })}\n`);
    process.stdout.write(
      `${JSON.stringify({ bench: 'git-land', files: FILES, runs: RUNS, mirror_ms: mine, git_commit_ms: base, ratio })}\n`,
    );
    auth.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return Promise.resolve();
}
