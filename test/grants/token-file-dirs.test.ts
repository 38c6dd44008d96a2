/**
 * Missing directories of a new token file (docs/grants.md "Missing directories"): `grant create`
 * and `grant rotate`, run as a user runs them, create each missing level 0700 after the nearest
 * existing directory passed the path rule; an unsafe existing parent (group- or world-writable,
 * or owned by another user) is refused before anything is created — no directory, no file, no
 * grant row, no new generation.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { readTokenFile } from '../../src/native/grant-token-file.js';
import { listGrants } from '../../src/native/grants.js';
import { createRepository } from '../../src/native/repositories.js';
import { createAuthority, openAuthority, writeTransaction } from '../../src/native/store.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const isRoot = typeof process.geteuid === 'function' && process.geteuid() === 0;

interface World {
  readonly dir: string;
  readonly dataDir: string;
}

function world(t: test.TestContext): World {
  const dir = tempDir(t);
  chmodSync(dir, 0o700);
  const dataDir = join(dir, 'data');
  const auth = createAuthority(dataDir);
  writeTransaction(auth, () => createRepository(auth, 'demo'));
  auth.close();
  return { dir, dataDir };
}

function create(w: World, tokenFile: string, extra: string[] = [], cwd?: string): Promise<CliResult> {
  return runCli(
    ['--data-dir', w.dataDir, 'grant', 'create', '--actor', 'alice/claude-1', '--token-file', tokenFile, ...extra],
    cwd === undefined ? {} : { cwd },
  );
}

function grantCount(w: World): number {
  const auth = openAuthority(w.dataDir, { mode: 'read' });
  try {
    return listGrants(auth, null).length;
  } finally {
    auth.close();
  }
}

function modeOf(path: string): number {
  return statSync(path).mode & 0o7777;
}

test('grant create creates each missing directory 0700, says so, and lists them in --json', async (t) => {
  const w = world(t);
  const file = join(w.dir, 'a', 'b', 'c', 'alice.token');
  const human = await create(w, file);
  assert.equal(human.code, 0, human.stderr);
  for (const level of ['a', 'a/b', 'a/b/c']) assert.equal(modeOf(join(w.dir, level)), 0o700, level);
  assert.equal(modeOf(file), 0o600);
  assert.match(readTokenFile(file), /^agentscm_/);
  const lines = human.stdout.trimEnd().split('\n');
  assert.deepEqual(lines.slice(1), [
    `created directory ${join(w.dir, 'a')} (mode 0700)`,
    `created directory ${join(w.dir, 'a', 'b')} (mode 0700)`,
    `created directory ${join(w.dir, 'a', 'b', 'c')} (mode 0700)`,
    `token written to ${file} (mode 0600)`,
  ]);

  // One level missing below an existing one; --json names it, and none when nothing was missing.
  const second = join(w.dir, 'a', 'b', 'd', 'bob.token');
  const json = await create(w, second, ['--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(jsonOf<{ created_directories: string[] }>(json).created_directories, [join(w.dir, 'a', 'b', 'd')]);
  const third = await create(w, join(w.dir, 'a', 'b', 'd', 'carol.token'), ['--json']);
  assert.equal(third.code, 0, third.stderr);
  assert.deepEqual(jsonOf<{ created_directories: string[] }>(third).created_directories, []);
  assert.equal(grantCount(w), 3);
});

test('the directories are 0700 whatever the umask, and ~ is a plain name (the shell expands it, not agentscm)', async (t) => {
  const w = world(t);
  const cwd = join(w.dir, 'cwd');
  mkdirSync(cwd, { mode: 0o700 });
  // The child inherits the umask: 000 would leave mkdir's 0700 as it is, 077 too; 0200 must not strip the owner.
  const previous = process.umask(0o200);
  t.after(() => process.umask(previous));
  const literal = await create(w, '~/.agentscm/alice.token', [], cwd);
  assert.equal(literal.code, 0, literal.stderr);
  assert.equal(modeOf(join(cwd, '~')), 0o700);
  assert.equal(modeOf(join(cwd, '~', '.agentscm')), 0o700);
  assert.ok(existsSync(join(cwd, '~', '.agentscm', 'alice.token')));
});

/** A refusal that created nothing: exit 2, GRANT_TOKEN_FILE_UNSAFE with the fix, no directory, no grant. */
async function refusedUnsafe(w: World, file: string, missing: string, message: RegExp): Promise<void> {
  const before = grantCount(w);
  const result = await create(w, file, ['--json']);
  assert.equal(result.code, 2, result.stderr);
  const { error } = jsonOf<{ error: { code: string; message: string; hint: string } }>(result);
  assert.equal(error.code, 'GRANT_TOKEN_FILE_UNSAFE');
  assert.match(error.message, message);
  assert.match(error.hint, /chmod 700|directory you own/);
  assert.equal(existsSync(missing), false, `${missing} was not created`);
  assert.equal(grantCount(w), before, 'no grant row');
}

test('an existing parent that group or others can write is refused with the chmod fix, creating nothing', async (t) => {
  const w = world(t);
  for (const [name, mode] of [
    ['world', 0o777],
    ['group', 0o770],
    ['others', 0o702],
  ] as const) {
    const parent = join(w.dir, name);
    mkdirSync(parent);
    chmodSync(parent, mode);
    await refusedUnsafe(
      w,
      join(parent, 'new', 'deeper', 'alice.token'),
      join(parent, 'new'),
      new RegExp(`${name}" on the way to the new token file has mode 0${mode.toString(8)}`),
    );
    // The same parent made private: accepted, and the levels are created.
    chmodSync(parent, 0o700);
    const ok = await create(w, join(parent, 'new', 'deeper', `${name}.token`));
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(modeOf(join(parent, 'new', 'deeper')), 0o700);
  }
});

test('an unsafe ancestor further up counts too, and a file on the way is not a directory', async (t) => {
  const w = world(t);
  const open = join(w.dir, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  const mine = join(open, 'mine');
  mkdirSync(mine, { mode: 0o700 });
  await refusedUnsafe(w, join(mine, 'new', 'alice.token'), join(mine, 'new'), /open" on the way .* mode 0777/);
  const plain = join(w.dir, 'plain');
  writeFileSync(plain, 'x');
  const result = await create(w, join(plain, 'sub', 'alice.token'), ['--json']);
  assert.equal(result.code, 2);
  const { error } = jsonOf<{ error: { code: string; message: string } }>(result);
  assert.equal(error.code, 'GRANT_TOKEN_FILE_UNSAFE');
  assert.match(error.message, /plain" is not a directory/);
  assert.equal(grantCount(w), 0);
});

test(
  'an existing parent owned by another user is refused, creating nothing',
  { skip: !isRoot && 'needs root to chown' },
  async (t) => {
    const w = world(t);
    const theirs = join(w.dir, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65534, 65534);
    await refusedUnsafe(
      w,
      join(theirs, 'new', 'alice.token'),
      join(theirs, 'new'),
      /owned by uid 65534, neither you nor root/,
    );
  },
);

test('grant rotate creates missing directories 0700 too, and a refused path keeps the generation', async (t) => {
  const w = world(t);
  const first = await create(w, join(w.dir, 'keys', 'alice.token'), ['--json']);
  assert.equal(first.code, 0, first.stderr);
  const grantId = jsonOf<{ grant: { grant_id: string } }>(first).grant.grant_id;
  const open = join(w.dir, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  const refused = await runCli([
    '--data-dir',
    w.dataDir,
    'grant',
    'rotate',
    grantId,
    '--token-file',
    join(open, 'new', 'alice-2.token'),
  ]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /^error\[GRANT_TOKEN_FILE_UNSAFE\].*chmod 700/);
  assert.equal(existsSync(join(open, 'new')), false);
  const rotated = await runCli([
    '--data-dir',
    w.dataDir,
    'grant',
    'rotate',
    grantId,
    '--token-file',
    join(w.dir, 'keys', 'v2', 'alice-2.token'),
    '--json',
  ]);
  assert.equal(rotated.code, 0, rotated.stderr);
  const body = jsonOf<{ grant: { generation: number }; created_directories: string[] }>(rotated);
  assert.equal(body.grant.generation, 2, 'one rotation: the refused one changed nothing');
  assert.deepEqual(body.created_directories, [join(w.dir, 'keys', 'v2')]);
  assert.equal(modeOf(join(w.dir, 'keys', 'v2')), 0o700);
});
