/**
 * The install line of the README, as a user without the repository's node_modules gets it: the
 * package is built (in a copy of the sources, so the shared dist/ is never touched) and packed
 * with `npm pack`, the tarball is installed with its production dependencies only, `npm install
 * -g --prefix P` puts `agentscm` on PATH, `agentscm --version` answers from outside the
 * repository, and the quickstart runs against that installed binary (with no container runtime:
 * it says that it skips the container step, and why).
 *
 * Kept offline and under two minutes: dependencies come from npm's cache (resolved by the
 * committed package-lock.json, as `npm ci` does), and better-sqlite3's native addon is the one
 * `npm ci` already built for this machine and Node version (same package version, checked)
 * instead of a second compilation of SQLite.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'node:test';

import { REPO_ROOT } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  timeout = 120_000,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(what: string, result: Promise<Run>): Promise<Run> {
  const done = await result;
  assert.equal(
    done.code,
    0,
    `${what} failed (exit ${String(done.code)})\n${done.stdout.slice(-3000)}\n${done.stderr.slice(-3000)}`,
  );
  return done;
}

function versionOf(packageDir: string): string {
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
}

const NPM_QUIET = ['--no-audit', '--no-fund', '--offline'];

test(
  'npm pack → install into a prefix → agentscm --version → the quickstart against the installed binary',
  { timeout: 240_000 },
  async (t) => {
    const root = tempDir(t, 'agentscm-install-');
    const env: NodeJS.ProcessEnv = { ...process.env, AGENTSCM_DATA_DIR: undefined };
    delete env.AGENTSCM_DATA_DIR;

    // 1. Build in a copy of the sources: what `npm run build` makes, without touching dist/.
    const source = join(root, 'source');
    mkdirSync(source);
    for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'README.md', '.npmrc', 'bin', 'src']) {
      cpSync(join(REPO_ROOT, entry), join(source, entry), { recursive: true });
    }
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(source, 'node_modules'));
    const build = await ok('npm run build', run('npm', ['run', 'build', '--silent'], source, env));
    assert.doesNotMatch(build.stderr, /update available/i);

    // 2. Pack it.
    const packDir = join(root, 'pack');
    mkdirSync(packDir);
    const packed = await ok('npm pack', run('npm', ['pack', '--pack-destination', packDir, '--silent'], source, env));
    const tarball = join(packDir, packed.stdout.trim().split('\n').pop() ?? '');
    assert.ok(existsSync(tarball), `npm pack printed ${packed.stdout}`);

    // 3. Unpack it and install its production dependencies, as `npm install -g TARBALL` does.
    const unpacked = join(root, 'unpacked');
    mkdirSync(unpacked);
    await ok('tar', run('tar', ['-xzf', tarball, '-C', unpacked], root, env));
    const pkg = join(unpacked, 'package');
    assert.deepEqual(
      readdirSync(pkg)
        .filter((name) => !['README.md', 'package.json'].includes(name))
        .sort(),
      ['bin', 'dist', 'oclif.manifest.json'],
    );
    copyFileSync(join(REPO_ROOT, 'package-lock.json'), join(pkg, 'package-lock.json'));
    await ok('npm ci --omit=dev', run('npm', ['ci', '--omit=dev', '--ignore-scripts', ...NPM_QUIET], pkg, env));
    assert.ok(!existsSync(join(pkg, 'node_modules', 'tsx')), 'no development dependency is installed');
    const sqlite = join(pkg, 'node_modules', 'better-sqlite3');
    assert.equal(versionOf(sqlite), versionOf(join(REPO_ROOT, 'node_modules', 'better-sqlite3')));
    const addon = join('build', 'Release', 'better_sqlite3.node');
    mkdirSync(dirname(join(sqlite, addon)), { recursive: true });
    copyFileSync(join(REPO_ROOT, 'node_modules', 'better-sqlite3', addon), join(sqlite, addon));

    // 4. Put agentscm on PATH: npm install -g into a prefix of our own.
    const prefix = join(root, 'prefix');
    await ok('npm install -g', run('npm', ['install', '-g', '--prefix', prefix, ...NPM_QUIET, pkg], root, env));
    const bin = join(prefix, 'bin');
    assert.ok(existsSync(join(bin, 'agentscm')));
    const onPath: NodeJS.ProcessEnv = { ...env, PATH: `${bin}:${env.PATH ?? ''}` };

    // 5. It runs from anywhere, with no repository in sight.
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    const version = await ok('agentscm --version', run('agentscm', ['--version'], elsewhere, onPath));
    assert.match(version.stdout, new RegExp(`^agentscm/${versionOf(REPO_ROOT).replace(/\./g, '\\.')} `));
    assert.equal(version.stderr, '');

    // 6. The quickstart against the installed binary; no container runtime here, so it says so.
    const quickstart = await ok(
      'the quickstart',
      run('bash', [join(REPO_ROOT, 'examples', 'quickstart', 'run.sh')], REPO_ROOT, {
        ...onPath,
        AGENTSCM_BIN: 'agentscm',
        QUICKSTART_DIR: join(root, 'quickstart'),
        QUICKSTART_DOCKER_SOCKET: join(root, 'no-engine.sock'),
      }),
    );
    assert.match(quickstart.stdout, /Change quickstart-1 version 1/);
    assert.match(
      quickstart.stdout,
      new RegExp(
        `skipping the container step: no Docker Engine socket at ${join(root, 'no-engine.sock').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
      ),
    );
    assert.doesNotMatch(quickstart.stdout, /context create/);
    assert.match(quickstart.stdout, /quickstart finished/);
    assert.match(
      quickstart.stdout,
      /Next, on your own repository[^\n]*\n[^\n]*\n\n {2}agentscm init-repo PATH\/TO\/PROJECT --name NAME\n {2}agentscm check add tests /,
    );
  },
);

test('the README keeps its two set-up commands and gives the install line this test exercises', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([^`]*)```/g)].map((match) => (match[1] ?? '').trim());
  assert.deepEqual(
    blocks.filter((block) => block.startsWith('npm ci')),
    ['npm ci && npm run quickstart', 'npm ci && npm test'],
  );
  assert.ok(blocks.includes('npm run build && npm install -g .'), 'the install line is in the README');
  assert.match(readme, /`npm pack`, then `npm install -g \.\/agentscm-[\d.]+\.tgz`/);
  assert.match(
    readme,
    new RegExp(`agentscm-${versionOf(REPO_ROOT).replace(/\./g, '\\.')}\\.tgz`),
    'the tarball name matches the package version',
  );
});
