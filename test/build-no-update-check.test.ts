/**
 * The build never checks for updates and never prints a network warning. The `oclif` tool that
 * writes the manifest carries a plugin that, unless told not to, prints "oclif update available"
 * from its cache and forks a process that asks the npm registry for a newer version. This test runs
 * the manifest step exactly as `npm run build` does, in a copy of the package, with a cache that
 * announces a newer oclif and a stale version file, and a local HTTP server as the registry.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { REPO_ROOT } from './helpers/cli.js';

/** The `oclif manifest` part of the build script, with whatever environment it sets. */
function manifestStep(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const step = pkg.scripts.build
    ?.split('&&')
    .map((part) => part.trim())
    .find((part) => part.includes('oclif manifest'));
  assert.ok(step, 'the build script has an `oclif manifest` step');
  return step;
}

function runShell(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the manifest step of the build prints no update warning and asks no registry for a version', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'agentscm-manifest-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const pkgDir = join(root, 'pkg');
  mkdirSync(join(pkgDir, 'dist', 'commands'), { recursive: true });
  copyFileSync(join(REPO_ROOT, 'package.json'), join(pkgDir, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(pkgDir, 'node_modules'));

  // A cached answer that announces a newer oclif, old enough that a refresh is due.
  const cache = join(root, 'cache');
  mkdirSync(join(cache, 'oclif'), { recursive: true });
  const versionFile = join(cache, 'oclif', 'version');
  writeFileSync(versionFile, JSON.stringify({ latest: '999.0.0' }));
  const longAgo = new Date('2000-01-01T00:00:00Z');
  utimesSync(versionFile, longAgo, longAgo);

  const requests: string[] = [];
  const registry = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ latest: '999.0.0' }));
  });
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  t.after(() => registry.close());
  const port = (registry.address() as AddressInfo).port;

  const env: NodeJS.ProcessEnv = {
    PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    HOME: root,
    XDG_CACHE_HOME: cache,
    XDG_CONFIG_HOME: join(root, 'config'),
    XDG_DATA_HOME: join(root, 'data'),
    OCLIF_NPM_REGISTRY: `http://127.0.0.1:${port}/`,
  };
  const result = await runShell(manifestStep(), pkgDir, env);
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /update available/i);
  assert.doesNotMatch(result.stderr, /warning/i);
  // The refresh runs in a detached child: give it time to reach the registry if it was spawned.
  await sleep(3000);
  assert.deepEqual(requests, [], 'no request reached the registry');
});

test('npm run in this repository checks for no npm update and prints no funding notice, whatever the user config says', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'agentscm-npmrc-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  // Empty user and global configs: only the repository's own .npmrc decides.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: root };
  const isolated = `--userconfig=${join(root, 'npmrc')} --globalconfig=${join(root, 'global-npmrc')}`;
  const notifier = await runShell(`npm config get update-notifier ${isolated}`, REPO_ROOT, env);
  assert.equal(notifier.code, 0, notifier.stderr);
  assert.equal(notifier.stdout.trim(), 'false');
  const fund = await runShell(`npm config get fund ${isolated}`, REPO_ROOT, env);
  assert.equal(fund.stdout.trim(), 'false');
});
