/**
 * Dependency image benchmark (issue "Checks that need dependencies", "Benchmark"),
 * `npm run bench -- deps`:
 *
 * (a) `agentscm deps build` of a lockfile of about 70 packages (express 4) on local/node:20,
 *     image absent, against `npm ci --ignore-scripts` of the same lockfile into a directory,
 *     alternating in the same run (target ≤ 1.5×: the image creation on top of the install);
 * (b) `agentscm deps build` of the same lockfile again, which reuses the image without starting
 *     npm, against `node -e 0` (target ≤ 1.2×).
 *
 * npm's downloads are cached under a bench-owned directory (primed before timing), so both sides
 * install from the same cache. The CLI is the built one (bin/run.js, made by `npm run bench`);
 * AGENTSCM_BENCH_RUNS (default 3) sets the rounds of (a), 9 rounds for (b). The last line is
 * one JSON summary. Needs the Docker Engine and local/node:20 (bin/build-node-image.sh).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

import { floorMs, nodeFloorSync } from './_floor.js';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const BIN = process.env.AGENTSCM_BENCH_BIN ?? join(ROOT, 'bin', 'run.js');
const RUNS = Number(process.env.AGENTSCM_BENCH_RUNS ?? 3);
const SOCKET = process.env.AGENTSCM_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
const BASE = 'local/node:20';
const NPM_ENV = {
  ...process.env,
  npm_config_cache: join(tmpdir(), 'agentscm-bench-npm-cache'),
  npm_config_update_notifier: 'false',
};
const NPM_CI = ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function timed(command: string, args: readonly string[], cwd: string): { ms: number; stdout: string } {
  const start = performance.now();
  const result = spawnSync(command, args, { cwd, env: NPM_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - start;
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return { ms, stdout: result.stdout.toString() };
}

async function removeImage(reference: string): Promise<void> {
  const pool = new Pool('http://localhost', { socketPath: SOCKET });
  try {
    const answer = await pool.request({ path: `/images/${reference}?force=1`, method: 'DELETE' });
    await answer.body.text();
  } finally {
    await pool.close();
  }
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-bench-deps-'));
  try {
    const project = join(dir, 'project');
    mkdirSync(project);
    const name = `bench-deps-${process.pid}`;
    const pkg = { name, version: '1.0.0', private: true, dependencies: { express: '4.21.2' } };
    writeFileSync(join(project, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: project, env: NPM_ENV });
    const lock = JSON.parse(execFileSync('cat', [join(project, 'package-lock.json')]).toString()) as {
      packages: Record<string, unknown>;
    };
    const packages = Object.keys(lock.packages).length - 1;
    // Prime npm's cache so neither side pays the registry.
    const prime = join(dir, 'prime');
    cpSync(project, prime, { recursive: true });
    timed('npm', NPM_CI, prime);

    const npmMs: number[] = [];
    const buildMs: number[] = [];
    let image = '';
    for (let round = 0; round < RUNS; round += 1) {
      const target = join(dir, `ci-${round}`);
      mkdirSync(target);
      cpSync(join(project, 'package.json'), join(target, 'package.json'));
      cpSync(join(project, 'package-lock.json'), join(target, 'package-lock.json'));
      npmMs.push(timed('npm', NPM_CI, target).ms);
      rmSync(target, { recursive: true, force: true });
      if (image !== '') await removeImage(image);
      const built = timed(process.execPath, [BIN, 'deps', 'build', '--image', BASE, '--json'], project);
      const answer = JSON.parse(built.stdout) as { image: string; reused: boolean };
      if (answer.reused) throw new Error('the timed first build reused an image');
      image = answer.image;
      buildMs.push(built.ms);
    }
    const reuseMs: number[] = [];
    const floor: number[] = [];
    for (let round = 0; round < 9; round += 1) {
      const again = timed(process.execPath, [BIN, 'deps', 'build', '--image', BASE, '--json'], project);
      if (!(JSON.parse(again.stdout) as { reused: boolean }).reused) throw new Error('the second build did not reuse');
      reuseMs.push(again.ms);
      floor.push(nodeFloorSync());
    }
    await removeImage(image);
    await removeImage(`agentscm-deps/${name}:npm`);
    const build = median(buildMs);
    const npm = median(npmMs);
    const reuse = median(reuseMs);
    const f = median(floor);
    process.stdout.write(
      `lockfile: ${packages} packages (express 4.21.2)\n` +
        `npm ci --ignore-scripts: median ${npm.toFixed(0)} ms of ${RUNS}\n` +
        `deps build (image absent): median ${build.toFixed(0)} ms of ${RUNS}; ${(build / npm).toFixed(2)}× npm ci ` +
        '(target ≤ 1.5×)\n' +
        `deps build again (reused): median ${reuse.toFixed(0)} ms of 9; ${(reuse / f).toFixed(2)}× node -e 0 ` +
        '(target ≤ 1.2×)\n' +
        `node -e 0: median ${f.toFixed(1)} ms of 9\n`,
    );
    process.stdout.write(
      `${JSON.stringify({
        bench: 'deps',
        packages,
        npm_ci_ms: Math.round(npm),
        build_ms: Math.round(build),
        build_ratio: Number((build / npm).toFixed(2)),
        reuse_ms: Math.round(reuse),
        reuse_ratio: Number((reuse / f).toFixed(2)),
        floor_ms: floorMs(floor),
      })}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
