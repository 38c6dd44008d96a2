/**
 * The pieces of docs/deps.md that need no engine: the in-process tar writer (read back by the
 * system tar), the lockfile decoder and its install-script refusal, the --env bounds of the
 * recipe, and the refusal of a step whose revision lockfile is not the image's.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { depsProjectName } from '../../src/collector/deps-image.js';
import {
  DEPS_LABELS,
  MAX_LOCKFILE_BYTES,
  parseLockfile,
  readLockfile,
  refuseInstallScripts,
  refuseStaleDeps,
} from '../../src/collector/deps-lockfile.js';
import { treeEntries, writeTar } from '../../src/collector/deps-tar.js';
import { RECIPE_LIMITS } from '../../src/contracts/collector/command-recipe.js';
import { isAgentscmError } from '../../src/contracts/errors.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { buildEnv, buildRecipe } from '../../src/workflows/checks/recipe-flags.js';
import { tempDir } from '../helpers/tmp.js';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isAgentscmError(error)) return error.code;
    throw error;
  }
  return 'none';
}

function lockfile(packages: Record<string, unknown>, version = 3): Buffer {
  return Buffer.from(JSON.stringify({ name: 'p', version: '1.0.0', lockfileVersion: version, packages }, null, 2));
}

test('the tar writer keeps files, modes, links and names longer than ustar holds', (t) => {
  const root = tempDir(t);
  const tree = join(root, 'node_modules');
  const deep = join(tree, 'a'.repeat(60), 'b'.repeat(60), 'c'.repeat(60));
  mkdirSync(deep, { recursive: true });
  mkdirSync(join(tree, '.bin'));
  writeFileSync(join(deep, 'index.js'), 'module.exports = 1;\n');
  writeFileSync(join(tree, 'run.js'), '#!/usr/bin/env node\n', { mode: 0o755 });
  symlinkSync('../run.js', join(tree, '.bin', 'run'));
  symlinkSync(`../${'a'.repeat(60)}/${'b'.repeat(60)}/${'c'.repeat(60)}/index.js`, join(tree, '.bin', 'long'));
  const bytes = writeTar([
    { name: 'Dockerfile', kind: 'file', mode: 0o644, data: Buffer.from('FROM x\n') },
    ...treeEntries(tree, 'node_modules'),
  ]);
  assert.equal(bytes.byteLength % 512, 0);
  const file = join(root, 'out.tar');
  writeFileSync(file, bytes);
  const listing = execFileSync('tar', ['-tvf', file], { encoding: 'utf8' });
  assert.match(listing, /^-rw-r--r-- .* Dockerfile$/m);
  assert.match(listing, /^-rwxr-xr-x .* node_modules\/run\.js$/m);
  assert.match(listing, /node_modules\/\.bin\/run -> \.\.\/run\.js$/m);
  assert.match(listing, new RegExp(`node_modules/\\.bin/long -> \\.\\./a{60}/b{60}/c{60}/index\\.js$`, 'm'));
  assert.match(listing, new RegExp(`node_modules/a{60}/b{60}/c{60}/index\\.js$`, 'm'));
  const out = join(root, 'x');
  mkdirSync(out);
  execFileSync('tar', ['-xf', file, '-C', out]);
  const content = execFileSync('cat', [join(out, 'node_modules', '.bin', 'long')], { encoding: 'utf8' });
  assert.equal(content, 'module.exports = 1;\n');
});

test('a lockfile: version 2 and 3 decode, others are refused; install scripts are listed', (t) => {
  const bytes = lockfile({ '': { name: 'p' }, 'node_modules/a': { version: '1.0.0' } });
  const decoded = parseLockfile('package-lock.json', bytes);
  assert.equal(decoded.sha256, sha256Hex(bytes));
  assert.deepEqual(decoded.installScripts, []);
  assert.equal(parseLockfile('l', lockfile({}, 2)).installScripts.length, 0);
  assert.equal(
    code(() => parseLockfile('l', lockfile({}, 1))),
    'DEPS_LOCKFILE_INVALID',
  );
  assert.equal(
    code(() => parseLockfile('l', Buffer.from('{"lockfileVersion":3}'))),
    'DEPS_LOCKFILE_INVALID',
  );
  assert.equal(
    code(() => parseLockfile('l', Buffer.from('not json'))),
    'DEPS_LOCKFILE_INVALID',
  );
  assert.equal(
    code(() => readLockfile(join(tempDir(t), 'missing.json'))),
    'DEPS_LOCKFILE_INVALID',
  );
  const scripts = parseLockfile(
    'l',
    lockfile({ '': { hasInstallScript: true }, 'node_modules/b': { hasInstallScript: true }, 'node_modules/a': {} }),
  );
  assert.deepEqual(scripts.installScripts, ['node_modules/b'], 'the root project is not a package installed');
  assert.equal(
    code(() => refuseInstallScripts(scripts, false)),
    'DEPS_INSTALL_SCRIPTS',
  );
  assert.equal(
    code(() => refuseInstallScripts(scripts, true)),
    'none',
  );
  assert.equal(
    code(() => refuseInstallScripts(decoded, false)),
    'none',
  );
});

test('a lockfile at the size bound is read; one byte more is refused', (t) => {
  const dir = tempDir(t);
  const head = '{"lockfileVersion":3,"packages":{},"pad":"';
  const tail = '"}';
  const at = Buffer.alloc(MAX_LOCKFILE_BYTES, 0x61);
  at.write(head, 0);
  at.write(tail, MAX_LOCKFILE_BYTES - tail.length);
  writeFileSync(join(dir, 'at.json'), at);
  assert.equal(readLockfile(join(dir, 'at.json')).installScripts.length, 0);
  writeFileSync(join(dir, 'over.json'), Buffer.concat([at.subarray(0, MAX_LOCKFILE_BYTES - 2), Buffer.from('a"}')]));
  assert.equal(
    code(() => readLockfile(join(dir, 'over.json'))),
    'DEPS_LOCKFILE_INVALID',
  );
});

test('--env: NAME=VALUE within the recipe bounds, at the bound and one past it', () => {
  assert.deepEqual(buildEnv(['TZ=UTC', 'EMPTY=', 'EQ=a=b'], undefined), { TZ: 'UTC', EMPTY: '', EQ: 'a=b' });
  const max = Array.from({ length: RECIPE_LIMITS.maxEnv }, (_, i) => `V${i}=x`);
  assert.equal(Object.keys(buildEnv(max, undefined)).length, RECIPE_LIMITS.maxEnv);
  assert.equal(
    code(() => buildEnv([...max, 'ONE_MORE=x'], undefined)),
    'CHECK_INVALID',
  );
  assert.equal(
    code(() => buildEnv(max, { lockfile: 'package-lock.json' })),
    'CHECK_INVALID',
    '--deps takes 2',
  );
  const value = 'v'.repeat(RECIPE_LIMITS.maxEnvValueBytes);
  assert.equal(buildEnv([`LONG=${value}`], undefined).LONG, value);
  assert.equal(
    code(() => buildEnv([`LONG=${value}v`], undefined)),
    'CHECK_INVALID',
  );
  for (const bad of ['NOEQUALS', '1X=a', '=a', 'A-B=c', 'A=\0'])
    assert.equal(
      code(() => buildEnv([bad], undefined)),
      'CHECK_INVALID',
      bad,
    );
  assert.equal(
    code(() => buildEnv(['A=1', 'A=2'], undefined)),
    'CHECK_INVALID',
  );
  assert.equal(
    code(() => buildEnv(['NODE_PATH=/x'], { lockfile: 'package-lock.json' })),
    'CHECK_INVALID',
  );
  const { recipe } = buildRecipe({
    image: 'agentscm-deps/p:npm',
    argv: ['tape', 'test/*.js'],
    env: ['TZ=UTC'],
    deps: { lockfile: 'package-lock.json' },
  });
  assert.deepEqual(recipe.env, { NODE_PATH: '/node_modules', AGENTSCM_DEPS_LOCKFILE: 'package-lock.json', TZ: 'UTC' });
});

test('a step runs only on the lockfile its image was built from', () => {
  const bytes = lockfile({});
  const labels = { [DEPS_LABELS.lockfile]: sha256Hex(bytes) };
  const recipe = { image: 'agentscm-deps/p:npm', env: { AGENTSCM_DEPS_LOCKFILE: 'package-lock.json' } };
  const read = (b: Buffer | null) => (path: string) => (path === 'package-lock.json' ? b : null);
  assert.equal(
    code(() => refuseStaleDeps('tests', recipe, labels, read(bytes))),
    'none',
  );
  assert.equal(
    code(() => refuseStaleDeps('tests', recipe, labels, read(lockfile({}, 2)))),
    'DEPS_LOCKFILE_CHANGED',
  );
  assert.equal(
    code(() => refuseStaleDeps('tests', recipe, labels, read(null))),
    'DEPS_LOCKFILE_CHANGED',
  );
  assert.equal(
    code(() => refuseStaleDeps('tests', recipe, {}, read(bytes))),
    'DEPS_LOCKFILE_CHANGED',
  );
  assert.equal(
    code(() => refuseStaleDeps('tests', { image: 'x', env: {} }, {}, read(null))),
    'none',
    'no --deps',
  );
});

test('a package name becomes one image repository component', () => {
  assert.equal(depsProjectName('duration-kit'), 'duration-kit');
  assert.equal(depsProjectName('@Scope/My_Pkg'), 'scope-my_pkg');
  assert.equal(depsProjectName('...'), 'project');
  assert.equal(depsProjectName('a'.repeat(80)).length, 64);
});
