/**
 * Where a token file may live (docs/grants.md "Where a token file may live"; issue #25 item 8):
 * every reader applies grant create's rule to the whole path — each directory owned by the
 * caller or root and not writable by group or others unless sticky, the file owned by the caller
 * or root — so another local user cannot swap the file or a directory on its way. Tests run as
 * root where they need another owner (chown to nobody); /tmp itself (1777, root) stays usable.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, copyFileSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { createGrant } from '../../src/native/grants.js';
import { createRepository } from '../../src/native/repositories.js';
import { createAuthority, writeTransaction, type Authority } from '../../src/native/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';

const ALICE = { owner_id: 'alice', agent_id: 'claude-1' };
const NOBODY = 65534;
const isRoot = typeof process.geteuid === 'function' && process.geteuid() === 0;

interface Setup {
  readonly dir: string;
  readonly dataDir: string;
  readonly auth: Authority;
  /** A token file grant create wrote into a 0700 directory. */
  readonly token: string;
  readonly tokenFile: string;
}

function setup(t: test.TestContext): Setup {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const auth = createAuthority(dataDir);
  t.after(() => auth.close());
  writeTransaction(auth, () => createRepository(auth, 'demo'));
  const privateDir = join(dir, 'private');
  mkdirSync(privateDir, { mode: 0o700 });
  const created = createGrant(auth, {
    actor: ALICE,
    scope: 'agent',
    tokenFile: join(privateDir, 'alice.token'),
    nowMs: 1,
  });
  return { dir, dataDir, auth, token: readTokenFile(created.token_file), tokenFile: created.token_file };
}

/** A copy of the token file (0600) in a new directory `name` of mode `mode` below `parent`. */
function copyInto(s: Setup, parent: string, name: string, mode: number): string {
  const target = join(parent, name);
  mkdirSync(target);
  chmodSync(target, mode);
  const file = join(target, 'alice.token');
  copyFileSync(s.tokenFile, file);
  chmodSync(file, 0o600);
  return file;
}

function refusal(read: () => unknown): AgentscmError {
  try {
    read();
  } catch (error) {
    if (error instanceof AgentscmError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

test('a token file in a directory group or others can write (not sticky) is refused on read with GRANT_TOKEN_FILE_UNSAFE; in a 0700 directory it is read', (t) => {
  const s = setup(t);
  assert.equal(statSync(join(s.dir, 'private')).mode & 0o7777, 0o700);
  assert.equal(readTokenFile(s.tokenFile), s.token);
  const open = copyInto(s, s.dir, 'open', 0o777);
  const error = refusal(() => readTokenFile(open));
  assert.equal(error.code, 'GRANT_TOKEN_FILE_UNSAFE');
  assert.match(error.message, /has mode 0777: group or others can write it and it is not sticky/);
  assert.match(error.hint ?? '', /chmod 700/);
  assert.equal(
    codeOf(() => readTokenFile(copyInto(s, s.dir, 'group', 0o770))),
    'GRANT_TOKEN_FILE_UNSAFE',
  );
  assert.equal(
    codeOf(() => readTokenFile(copyInto(s, s.dir, 'others', 0o703))),
    'GRANT_TOKEN_FILE_UNSAFE',
  );
  assert.equal(
    readTokenFile(copyInto(s, s.dir, 'shared-read', 0o755)),
    s.token,
    'read access to the directory is not a way to replace the file',
  );
});

test('every ancestor counts: a private directory below a world-writable one is refused, and so is a symlink leading into one', (t) => {
  const s = setup(t);
  const open = join(s.dir, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  const nested = copyInto(s, open, 'private', 0o700);
  assert.match(
    refusal(() => readTokenFile(nested)).message,
    /directory ".*\/open" on the way to the token file has mode 0777/,
  );
  // The link lives in a private directory, what it names does not.
  const link = join(s.dir, 'private', 'link.token');
  symlinkSync(nested, link);
  assert.equal(
    codeOf(() => readTokenFile(link)),
    'GRANT_TOKEN_FILE_UNSAFE',
  );
  // A directory reached through a symbolic link: its real ancestors count.
  const linkedDir = join(s.dir, 'private', 'linked-dir');
  symlinkSync(join(open, 'private'), linkedDir);
  assert.equal(
    codeOf(() => readTokenFile(join(linkedDir, 'alice.token'))),
    'GRANT_TOKEN_FILE_UNSAFE',
  );
});

test(
  'a sticky world-writable directory is safe when you or root own it (as /tmp), refused when another user owns it',
  { skip: !isRoot && 'needs root to give a directory to another user' },
  (t) => {
    const s = setup(t);
    // /tmp itself: 1777, root-owned; every test's private directory lives below it.
    const tmp = statSync(tmpdir());
    t.diagnostic(`tmpdir ${tmpdir()} mode ${(tmp.mode & 0o7777).toString(8)} uid ${tmp.uid}`);
    const stickyOwn = copyInto(s, s.dir, 'sticky-own', 0o1777);
    assert.equal(readTokenFile(stickyOwn), s.token);
    const stickyOther = copyInto(s, s.dir, 'sticky-other', 0o1777);
    chownSync(join(s.dir, 'sticky-other'), NOBODY, NOBODY);
    const error = refusal(() => readTokenFile(stickyOther));
    assert.equal(error.code, 'GRANT_TOKEN_FILE_UNSAFE');
    assert.match(error.message, /is owned by uid 65534, neither you nor root/);
    // Not sticky and owned by another user, even unwritable by others: its owner can replace the file.
    const otherOwned = copyInto(s, s.dir, 'other-owned', 0o755);
    chownSync(join(s.dir, 'other-owned'), NOBODY, NOBODY);
    assert.equal(
      codeOf(() => readTokenFile(otherOwned)),
      'GRANT_TOKEN_FILE_UNSAFE',
    );
    // The file itself owned by another user (0600, readable here only because this is root).
    const foreign = copyInto(s, s.dir, 'foreign-file', 0o700);
    chownSync(foreign, NOBODY, NOBODY);
    assert.match(refusal(() => readTokenFile(foreign)).message, /token file .* is owned by uid 65534/);
  },
);

test('grant create applies the same rule: refused below a world-writable ancestor, allowed in a sticky directory you own', (t) => {
  const s = setup(t);
  const open = join(s.dir, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  const below = join(open, 'private');
  mkdirSync(below, { mode: 0o700 });
  assert.equal(
    codeOf(() => createGrant(s.auth, { actor: ALICE, scope: 'agent', tokenFile: join(below, 't'), nowMs: 2 })),
    'GRANT_TOKEN_FILE_UNSAFE',
  );
  const sticky = join(s.dir, 'sticky');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);
  const created = createGrant(s.auth, { actor: ALICE, scope: 'agent', tokenFile: join(sticky, 't'), nowMs: 2 });
  assert.equal(readTokenFile(created.token_file).length, s.token.length);
});

test('a command reading --token-file from a world-writable directory exits 2 with GRANT_TOKEN_FILE_UNSAFE; from its private directory it runs', async (t) => {
  const s = setup(t);
  s.auth.close();
  const open = copyInto(s, s.dir, 'open', 0o777);
  const refused = await runCli([
    '--data-dir',
    s.dataDir,
    'agent-task',
    'call',
    'capabilities',
    '--token-file',
    open,
    '--json',
  ]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(refused).error.code, 'GRANT_TOKEN_FILE_UNSAFE');
  const ok = await runCli([
    '--data-dir',
    s.dataDir,
    'agent-task',
    'call',
    'capabilities',
    '--token-file',
    s.tokenFile,
    '--json',
  ]);
  assert.equal(ok.code, 0, ok.stderr);
});
