/**
 * Checkpoint benchmark (issue 2 §7): a generated tree of 10,000 files / about 100 MB, the full
 * checkpoint and then the incremental checkpoint after changing one file, each against
 * `git init && git add -A && git commit -q` / `git add -A && git commit -q` on an identical
 * copy of the tree in the same run. Prints wall-clock times, ratios and the peak RSS of the
 * agentscm process. Targets: full ≤ 0.75× git, incremental ≤ 1.5× git, peak RSS ≤ 200 MB.
 * Also prints the floors under the incremental case, each against the same git commit: a bare
 * Node start-up, a Node process that does nothing but walk the tree and lstat() every file,
 * and `agentscm --version` (docs/workspace.md "Performance").
 *
 * Revision trees (docs/native-store.md "Revisions"): the store growth over GROWTH_RUNS
 * checkpoints that each change one file, per checkpoint beyond the changed blob (target ≤ 32 KiB),
 * the incremental checkpoint against the floor "both" (target ≤ 1.3×), and the time to load the
 * workspace stat cache (one row) in this process. Ends with one JSON summary line.
 *
 * Uses the built CLI (bin/run.js; `npm run bench` builds first). AGENTSCM_BENCH_BIN points at
 * another entry script (bin/dev.js runs the sources through tsx); AGENTSCM_BENCH_FILES /
 * AGENTSCM_BENCH_FILE_BYTES / AGENTSCM_BENCH_RUNS / AGENTSCM_BENCH_GROWTH_RUNS shrink the run for
 * a quick check. With AGENTSCM_TIMING=1 each incremental checkpoint's phase times go to stderr.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';

import { loadBaseEntries, openWorkspaceReadOnly } from '../src/workspace/state.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = resolve(process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js'));
const FILES = Number(process.env.AGENTSCM_BENCH_FILES ?? 10_000);
const FILE_BYTES = Number(process.env.AGENTSCM_BENCH_FILE_BYTES ?? 10_000);
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 9);
const GROWTH_RUNS = Number(process.env.AGENTSCM_BENCH_GROWTH_RUNS ?? 100);
// bin/dev.js runs the TypeScript sources: it needs the tsx loader.
const LOADER = BIN.endsWith('dev.js')
  ? ['--import', pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href]
  : [];
const PER_DIR = 100;

// Reports the CLI process's own peak RSS when it exits (getrusage ru_maxrss of that process).
const RSS_PROBE =
  'data:text/javascript,' +
  encodeURIComponent(
    "import { writeFileSync } from 'node:fs'; process.on('exit', () => { writeFileSync(process.env.AGENTSCM_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)); });",
  );

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};

interface Timed {
  readonly seconds: number;
  readonly rssMb: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function timed(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, rssFile?: string): Timed {
  const start = performance.now();
  const result = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  const seconds = (performance.now() - start) / 1000;
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}${result.stdout.toString()}`,
    );
  }
  const rssMb = rssFile === undefined ? null : Number(readFileSync(rssFile, 'utf8')) / 1024;
  return { seconds, rssMb, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

function agentscm(args: readonly string[], cwd: string, rssFile: string): Timed {
  return timed(
    process.execPath,
    [...LOADER, '--import', RSS_PROBE, BIN, ...args],
    cwd,
    { ...process.env, AGENTSCM_BENCH_RSS_FILE: rssFile },
    rssFile,
  );
}

function git(script: string, cwd: string): Timed {
  return timed('sh', ['-c', script], cwd, GIT_ENV);
}

/** Printable text (compressible the way source is, unlike raw random bytes). */
function textContent(bytes: number): Buffer {
  const alphabet = Buffer.from('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n{}();=');
  const raw = randomBytes(bytes);
  for (let i = 0; i < raw.length; i++) raw[i] = alphabet[(raw[i] ?? 0) % alphabet.length] ?? 0x61;
  return raw;
}

// Walks the tree given as argv[1] and lstat()s every file, skipping .agentscm and .git — the
// stat pass of a scan with nothing else (no ignore rules, no stat cache, no hashing, no store).
const STAT_PASS = `
import { readdirSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
let files = 0;
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === '.agentscm' || entry.name === '.git') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else { lstatSync(path); files += 1; }
  }
};
walk(process.argv[1]);
if (files === 0) process.exit(1);
`;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Bytes the authority database holds once its write-ahead log is folded in. */
function storeBytes(dataDir: string): number {
  const db = new Database(join(dataDir, 'native', 'authority.sqlite'));
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pages =
      (db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number);
    return pages * (db.pragma('page_size', { simple: true }) as number);
  } finally {
    db.close();
  }
}

function verdict(ok: boolean): string {
  return ok ? 'meets target' : 'MISSES target';
}

export async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'agentscm-bench-'));
  try {
    const ours = join(work, 'ours');
    const theirs = join(work, 'git');
    const dataDir = join(work, 'data');
    const rssFile = join(work, 'rss');
    for (const dir of [ours, theirs]) {
      mkdirSync(dir);
      writeFileSync(join(dir, 'README.md'), '# bench\n');
    }
    agentscm(['--data-dir', dataDir, 'init-repo', ours, '--name', 'bench'], work, rssFile);

    process.stdout.write(
      `generating ${FILES} files of ${FILE_BYTES} bytes (${((FILES * FILE_BYTES) / 1e6).toFixed(0)} MB) twice under ${work}\n`,
    );
    const paths: string[] = [];
    for (let i = 0; i < FILES; i++) {
      const rel = join(
        `dir${String(Math.floor(i / PER_DIR)).padStart(3, '0')}`,
        `file${String(i % PER_DIR).padStart(3, '0')}.txt`,
      );
      if (i % PER_DIR === 0) for (const dir of [ours, theirs]) mkdirSync(join(dir, dirname(rel)), { recursive: true });
      const content = textContent(FILE_BYTES);
      for (const dir of [ours, theirs]) writeFileSync(join(dir, rel), content);
      paths.push(rel);
    }

    const fullOurs = agentscm(
      ['--data-dir', dataDir, 'checkpoint', '--change', 'bench', '--workspace', ours],
      work,
      rssFile,
    );
    const fullGit = git('git init -q && git add -A && git commit -q -m full', theirs);

    // Let the kernel write back the generated trees and both full checkpoints first: a commit's
    // fsync behind 200 MB of dirty pages measures the disk, not the checkpoint.
    spawnSync('sync');

    // The incremental runs and the floors under them alternate in one loop, so that a change of
    // load during the run weighs on both sides of the ratio alike. The floors: a bare Node
    // start-up, a Node process that only walks the tree and lstat()s every file (the least a
    // checkpoint without a resident file watcher must do to notice a one-file change), and Node
    // start-up plus loading the CLI framework (`agentscm --version`).
    const incOurs: number[] = [];
    const incHashed: number[] = [];
    const incGit: number[] = [];
    const bare: number[] = [];
    const statPass: number[] = [];
    const startup: number[] = [];
    let peakRss = fullOurs.rssMb ?? 0;
    for (let run = 0; run < RUNS; run++) {
      const rel = paths[(run * 7919) % paths.length] ?? 'README.md';
      const line = `edit ${run}\n`;
      appendFileSync(join(ours, rel), line);
      appendFileSync(join(theirs, rel), line);
      // Each timed commit starts with nothing waiting to be written back: otherwise the
      // checkpoint's fsync also flushes what the git commit before it left dirty (the index,
      // about 1 MB), and git's what the checkpoint left.
      spawnSync('sync');
      const a = agentscm(
        ['--data-dir', dataDir, 'checkpoint', '--change', 'bench', '--workspace', ours, '--json'],
        work,
        rssFile,
      );
      incHashed.push((JSON.parse(a.stdout) as { hashed_files: number }).hashed_files);
      // With AGENTSCM_TIMING=1 the checkpoint prints its phases (docs/workspace.md): pass them on.
      if (process.env.AGENTSCM_TIMING === '1') process.stderr.write(a.stderr);
      spawnSync('sync');
      const b = git(`git add -A && git commit -q -m edit${run}`, theirs);
      incOurs.push(a.seconds);
      incGit.push(b.seconds);
      peakRss = Math.max(peakRss, a.rssMb ?? 0);
      bare.push(timed(process.execPath, ['-e', '0'], work, process.env).seconds);
      statPass.push(timed(process.execPath, ['--input-type=module', '-e', STAT_PASS, ours], work, process.env).seconds);
      startup.push(agentscm(['--version'], work, rssFile).seconds);
    }

    const fullRatio = fullOurs.seconds / fullGit.seconds;
    const incRatio = median(incOurs) / median(incGit);
    const rows = [
      ['full checkpoint', fullOurs.seconds, fullGit.seconds, fullRatio, 0.75],
      [`incremental (median of ${RUNS})`, median(incOurs), median(incGit), incRatio, 1.5],
    ] as const;
    process.stdout.write(
      `${'case'.padEnd(28)} ${'agentscm s'.padStart(10)} ${'git s'.padStart(8)} ${'ratio'.padStart(7)}  target\n`,
    );
    for (const [name, a, b, ratio, target] of rows) {
      process.stdout.write(
        `${name.padEnd(28)} ${a.toFixed(3).padStart(10)} ${b.toFixed(3).padStart(8)} ${ratio.toFixed(2).padStart(7)}  ≤ ${target} (${verdict(ratio <= target)})\n`,
      );
    }
    process.stdout.write(
      `peak RSS of agentscm: ${peakRss.toFixed(0)} MB (full checkpoint ${(fullOurs.rssMb ?? 0).toFixed(0)} MB)  ≤ 200 MB (${verdict(peakRss <= 200)})\n`,
    );
    const floor = (name: string, values: readonly number[]): void => {
      process.stdout.write(
        `${name.padEnd(58)} ${median(values).toFixed(3)} s = ${(median(values) / median(incGit)).toFixed(2)}× the incremental git commit\n`,
      );
    };
    floor('floor: bare Node start-up (node -e 0)', bare);
    floor(`floor: Node process that only walks + lstat()s ${FILES + 1} files`, statPass);
    floor('floor: Node start-up + CLI framework (agentscm --version)', startup);
    // Both together, as one checkpoint process must do them: the stat pass plus what loading the
    // CLI framework adds to a bare start-up.
    floor('floor: both (stat pass + CLI framework over bare start-up)', [
      median(statPass) + median(startup) - median(bare),
    ]);
    process.stdout.write(
      `incremental runs agentscm: ${incOurs.map((s) => s.toFixed(3)).join(' ')} (files hashed: ${incHashed.join(' ')})\n`,
    );
    process.stdout.write(`incremental runs git:      ${incGit.map((s) => s.toFixed(3)).join(' ')}\n`);

    const both = median(statPass) + median(startup) - median(bare);
    const floorRatio = median(incOurs) / both;
    process.stdout.write(
      `incremental checkpoint over the floor "both": ${floorRatio.toFixed(2)}×  ≤ 1.3 (${verdict(floorRatio <= 1.3)})\n`,
    );

    // The workspace stat cache, loaded as a checkpoint loads it (one row, decoded in this process).
    const loads: number[] = [];
    let cached = 0;
    for (let run = 0; run < RUNS; run++) {
      const ws = openWorkspaceReadOnly(ours);
      try {
        const start = performance.now();
        cached = loadBaseEntries(ws).size;
        loads.push(performance.now() - start);
      } finally {
        ws.close();
      }
    }
    process.stdout.write(
      `stat cache load: ${cached} entries from one row in ${median(loads).toFixed(1)} ms (median of ${RUNS})\n`,
    );

    // Store growth: GROWTH_RUNS checkpoints that each change one file by one line.
    const growthStart = storeBytes(dataDir);
    let blobBytes = 0;
    const growthTimes: number[] = [];
    for (let run = 0; run < GROWTH_RUNS; run++) {
      const rel = paths[(run * 104_729 + 13) % paths.length] ?? 'README.md';
      const line = `growth ${run}\n`;
      appendFileSync(join(ours, rel), line);
      blobBytes += statSync(join(ours, rel)).size;
      growthTimes.push(
        agentscm(
          ['--data-dir', dataDir, 'checkpoint', '--change', 'bench', '--workspace', ours, '--json'],
          work,
          rssFile,
        ).seconds,
      );
      peakRss = Math.max(peakRss, Number(readFileSync(rssFile, 'utf8')) / 1024);
    }
    const growth = storeBytes(dataDir) - growthStart;
    const perCheckpoint = (growth - blobBytes) / GROWTH_RUNS;
    process.stdout.write(
      `store growth over ${GROWTH_RUNS} one-file checkpoints: ${(growth / 1024).toFixed(0)} KiB, ${(perCheckpoint / 1024).toFixed(1)} KiB per checkpoint beyond the changed blob  ≤ 32 KiB (${verdict(perCheckpoint <= 32 * 1024)})\n`,
    );
    process.stdout.write(
      `${JSON.stringify({
        files: FILES,
        file_bytes: FILE_BYTES,
        full_s: fullOurs.seconds,
        full_git_s: fullGit.seconds,
        full_ratio: fullRatio,
        incremental_s: median(incOurs),
        incremental_git_s: median(incGit),
        incremental_over_floor: floorRatio,
        floor_both_s: both,
        peak_rss_mb: peakRss,
        stat_cache_load_ms: median(loads),
        growth_checkpoints: GROWTH_RUNS,
        growth_per_checkpoint_bytes: Math.round(perCheckpoint),
        growth_checkpoint_median_s: median(growthTimes),
      })}\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return Promise.resolve();
}
