/**
 * Grants and token files (docs/grants.md): create, rotate, revoke and list through the CLI and
 * the core, against real stores. The token is written once to a new 0600 file and appears in no
 * output and nowhere in the authority's files; only its SHA-256 is stored.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { formatGrantToken, grantTokenSha256, isGrantToken } from '../../src/contracts/grant.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import {
  authenticateToken,
  createGrant,
  getGrant,
  listGrants,
  requireLiveOrigin,
  revokeGrant,
  rotateGrant,
} from '../../src/native/grants.js';
import { createRepository } from '../../src/native/repositories.js';
import {
  createAuthority,
  nativePaths,
  openAuthority,
  writeTransaction,
  type Authority,
} from '../../src/native/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';

const ALICE = { owner_id: 'alice', agent_id: 'claude-1' };

function store(t: test.TestContext): { dir: string; repository: string; auth: Authority } {
  const dir = tempDir(t);
  const auth = createAuthority(join(dir, 'data'));
  const repository = writeTransaction(auth, () => createRepository(auth, 'demo')).id;
  t.after(() => auth.close());
  return { dir, repository, auth };
}

/** Every byte the authority keeps on disk (database, WAL, lock). */
function authorityBytes(dataDir: string): Buffer {
  const dir = nativePaths(dataDir).dir;
  return Buffer.concat(readdirSync(dir).map((name) => readFileSync(join(dir, name))));
}

test('the token format: agentscm_ and the canonical unpadded base64url of 32 bytes', () => {
  const token = formatGrantToken(new Uint8Array(32).fill(0xff));
  assert.equal(token, `agentscm_${'_'.repeat(42)}8`);
  assert.equal(token.length, 52);
  assert.ok(isGrantToken(token));
  assert.ok(!isGrantToken(`agentscm_${'_'.repeat(42)}9`), 'nonzero unused bits are not canonical');
  assert.ok(!isGrantToken(`agentscm_${'_'.repeat(42)}`), 'too short');
  assert.ok(!isGrantToken(`AGENTSCM_${'_'.repeat(42)}8`), 'wrong prefix');
  assert.ok(!isGrantToken(`agentscm_${'+'.repeat(42)}8`), 'not base64url');
  assert.equal(grantTokenSha256('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(
    codeOf(() => formatGrantToken(new Uint8Array(31))),
    'INTERNAL',
  );
});

test('grant create writes a new 0600 token file, stores only its SHA-256 and prints no secret', async (t) => {
  const { dir } = store(t);
  const dataDir = join(dir, 'data');
  const tokens = join(dir, 'tokens');
  mkdirSync(tokens, { mode: 0o700 });
  const file = join(tokens, 'alice.token');
  const created = await runCli([
    '--data-dir',
    dataDir,
    'grant',
    'create',
    '--actor',
    'alice/claude-1',
    '--token-file',
    file,
    '--json',
  ]);
  assert.equal(created.code, 0, created.stderr);
  const body = readFileSync(file, 'utf8');
  assert.match(body, /^agentscm_[A-Za-z0-9_-]{43}\n$/);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const token = body.slice(0, -1);
  const result = jsonOf<{
    grant: { grant_id: string; owner_id: string; agent_id: string; scope: string; generation: number; state: string };
    token_file: string;
  }>(created);
  assert.equal(result.grant.owner_id, 'alice');
  assert.equal(result.grant.agent_id, 'claude-1');
  assert.equal(result.grant.scope, 'agent');
  assert.equal(result.grant.generation, 1);
  assert.equal(result.grant.state, 'live');
  assert.equal(result.token_file, file);
  assert.match(result.grant.grant_id, /^g-[0-9a-f]{32}$/);
  const human = await runCli([
    '--data-dir',
    dataDir,
    'grant',
    'create',
    '--actor',
    'bob/b1',
    '--scope',
    'reader',
    '--token-file',
    join(tokens, 'bob.token'),
  ]);
  assert.equal(human.code, 0, human.stderr);
  const bobToken = readFileSync(join(tokens, 'bob.token'), 'utf8').trim();
  const list = await runCli(['--data-dir', dataDir, 'grant', 'list', '--json']);
  const listHuman = await runCli(['--data-dir', dataDir, 'grant', 'list']);
  assert.equal(list.code, 0, list.stderr);
  const grants = jsonOf<{ grants: { grant_id: string; scope: string }[] }>(list).grants;
  assert.deepEqual(
    grants.map((g) => g.scope),
    ['agent', 'reader'],
  );
  assert.match(
    listHuman.stdout,
    new RegExp(`${result.grant.grant_id}  alice/claude-1 .* scope agent  generation 1  live`),
  );
  for (const output of [created, human, list, listHuman]) {
    for (const secret of [token, bobToken]) {
      assert.ok(!output.stdout.includes(secret) && !output.stderr.includes(secret), 'no output holds a token');
      assert.ok(!output.stdout.includes(grantTokenSha256(secret)), 'nor its hash');
    }
  }
  const disk = authorityBytes(dataDir);
  assert.ok(
    !disk.includes(Buffer.from(token)) && !disk.includes(Buffer.from(token.slice(9))),
    'the authority never stores the token',
  );
  const db = new Database(nativePaths(dataDir).db, { readonly: true });
  try {
    assert.equal(
      (
        db.prepare('SELECT token_sha256 FROM grants WHERE grant_id = ?').get(result.grant.grant_id) as {
          token_sha256: string;
        }
      ).token_sha256,
      grantTokenSha256(token),
    );
  } finally {
    db.close();
  }
  // The token authenticates as its grant.
  const auth = openAuthority(dataDir, { mode: 'read' });
  try {
    assert.equal(authenticateToken(auth, readTokenFile(file)).grant_id, result.grant.grant_id);
  } finally {
    auth.close();
  }
});

test('grant create refuses an existing file, an unsafe directory, a bad actor or repository, and changes nothing', async (t) => {
  const { dir, auth } = store(t);
  const dataDir = join(dir, 'data');
  const existing = join(dir, 'taken.token');
  writeFileSync(existing, 'keep me', { mode: 0o600 });
  const taken = await runCli([
    '--data-dir',
    dataDir,
    'grant',
    'create',
    '--actor',
    'alice/a1',
    '--token-file',
    existing,
    '--json',
  ]);
  assert.equal(taken.code, 3, taken.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(taken).error.code, 'GRANT_TOKEN_FILE_EXISTS');
  assert.equal(readFileSync(existing, 'utf8'), 'keep me', 'never overwritten');
  const open = join(dir, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  assert.equal(
    codeOf(() => createGrant(auth, { actor: ALICE, scope: 'agent', tokenFile: join(open, 't'), nowMs: 1 })),
    'GRANT_TOKEN_FILE_UNSAFE',
  );
  chmodSync(open, 0o775);
  assert.equal(
    codeOf(() => createGrant(auth, { actor: ALICE, scope: 'agent', tokenFile: join(open, 't'), nowMs: 1 })),
    'GRANT_TOKEN_FILE_UNSAFE',
  );
  assert.equal(existsSync(join(open, 't')), false);
  assert.equal(
    codeOf(() => createGrant(auth, { actor: ALICE, scope: 'agent', tokenFile: join(existing, 't'), nowMs: 1 })),
    'GRANT_TOKEN_FILE_UNSAFE',
    'a file is no directory',
  );
  assert.equal(
    codeOf(() =>
      createGrant(auth, {
        repository: 'nobody',
        actor: ALICE,
        scope: 'agent',
        tokenFile: join(dir, 'n.token'),
        nowMs: 1,
      }),
    ),
    'REPOSITORY_NOT_FOUND',
  );
  assert.equal(existsSync(join(dir, 'n.token')), false, 'no token file for a refused grant');
  assert.equal(
    codeOf(() =>
      createGrant(auth, {
        actor: { owner_id: 'a b', agent_id: 'x' },
        scope: 'agent',
        tokenFile: join(dir, 'n.token'),
        nowMs: 1,
      }),
    ),
    'ID_INVALID',
  );
  const badActor = await runCli([
    '--data-dir',
    dataDir,
    'grant',
    'create',
    '--actor',
    'alice',
    '--token-file',
    join(dir, 'n.token'),
    '--json',
  ]);
  assert.equal(badActor.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(badActor).error.code, 'USAGE');
  const badScope = await runCli([
    '--data-dir',
    dataDir,
    'grant',
    'create',
    '--actor',
    'alice/a1',
    '--scope',
    'admin',
    '--token-file',
    join(dir, 'n.token'),
    '--json',
  ]);
  assert.equal(badScope.code, 2);
  assert.equal(existsSync(join(dir, 'n.token')), false);
  assert.deepEqual(listGrants(auth, null), []);
});

test('a grant whose commit fails leaves no token file behind', (t) => {
  const { dir, auth } = store(t);
  // Another connection holds the writer lock: the grant's transaction cannot commit (STORE_BUSY).
  const blocker = new Database(nativePaths(join(dir, 'data')).db);
  blocker.pragma('busy_timeout = 0');
  blocker.exec('BEGIN IMMEDIATE');
  try {
    assert.equal(
      codeOf(() => createGrant(auth, { actor: ALICE, scope: 'agent', tokenFile: join(dir, 'a.token'), nowMs: 1 })),
      'STORE_BUSY',
    );
  } finally {
    blocker.exec('ROLLBACK');
    blocker.close();
  }
  assert.equal(existsSync(join(dir, 'a.token')), false);
  assert.deepEqual(
    readdirSync(dir).filter((name) => name.endsWith('.tmp')),
    [],
    'no temporary file either',
  );
  assert.deepEqual(listGrants(auth, null), []);
});

test('rotate raises the generation and kills the old token at once; revoke is final', (t) => {
  const { dir, auth } = store(t);
  const first = createGrant(auth, { actor: ALICE, scope: 'agent', tokenFile: join(dir, 'g1.token'), nowMs: 1 });
  const oldToken = readTokenFile(first.token_file);
  assert.equal(authenticateToken(auth, oldToken).generation, 1n);
  const origin1 = { owner_id: 'alice', agent_id: 'claude-1', grant_id: first.grant.grant_id, grant_generation: 1n };
  assert.equal(requireLiveOrigin(auth, origin1).grant_id, first.grant.grant_id);
  // A rotation into an existing file changes nothing.
  assert.equal(
    codeOf(() => rotateGrant(auth, first.grant.grant_id, first.token_file, 2)),
    'GRANT_TOKEN_FILE_EXISTS',
  );
  assert.equal(getGrant(auth, first.grant.grant_id).generation, 1n);
  const rotated = rotateGrant(auth, first.grant.grant_id, join(dir, 'g2.token'), 3);
  assert.equal(rotated.previous_generation, 1n);
  assert.equal(rotated.grant.generation, 2n);
  assert.equal(statSync(rotated.token_file).mode & 0o777, 0o600);
  const newToken = readTokenFile(rotated.token_file);
  assert.notEqual(newToken, oldToken);
  assert.throws(
    () => authenticateToken(auth, oldToken),
    (e: unknown) =>
      (e as { code: string; details: { reason: string } }).code === 'GRANT_TOKEN_REJECTED' &&
      (e as { details: { reason: string } }).details.reason === 'rotated',
  );
  assert.equal(
    codeOf(() => requireLiveOrigin(auth, origin1)),
    'GRANT_NOT_LIVE',
  );
  assert.equal(authenticateToken(auth, newToken).generation, 2n);
  const unknown = formatGrantToken(new Uint8Array(32));
  assert.throws(
    () => authenticateToken(auth, unknown),
    (e: unknown) => (e as { details: { reason: string } }).details.reason === 'unknown',
  );
  const revoked = revokeGrant(auth, first.grant.grant_id, 4);
  assert.equal(revoked.already_revoked, false);
  assert.equal(revoked.grant.state, 'revoked');
  assert.throws(
    () => authenticateToken(auth, newToken),
    (e: unknown) => (e as { details: { reason: string } }).details.reason === 'revoked',
  );
  assert.equal(
    codeOf(() => requireLiveOrigin(auth, { ...origin1, grant_generation: 2n })),
    'GRANT_NOT_LIVE',
  );
  assert.equal(revokeGrant(auth, first.grant.grant_id, 5).already_revoked, true);
  assert.equal(
    codeOf(() => rotateGrant(auth, first.grant.grant_id, join(dir, 'g3.token'), 6)),
    'GRANT_REVOKED',
  );
  assert.equal(existsSync(join(dir, 'g3.token')), false);
  assert.equal(
    codeOf(() => revokeGrant(auth, 'g-missing', 7)),
    'GRANT_NOT_FOUND',
  );
  // The table refuses to un-revoke or delete.
  assert.throws(() => auth.db.prepare('UPDATE grants SET revoked = 0').run(), /never changes/);
  assert.throws(() => auth.db.prepare('DELETE FROM grants').run(), /never deleted/);
});

test('grant rotate and revoke through the CLI', async (t) => {
  const { dir, auth } = store(t);
  const dataDir = join(dir, 'data');
  const created = createGrant(auth, { actor: ALICE, scope: 'agent', tokenFile: join(dir, 'g1.token'), nowMs: 1 });
  const id = created.grant.grant_id;
  const rotate = await runCli([
    '--data-dir',
    dataDir,
    'grant',
    'rotate',
    id,
    '--token-file',
    join(dir, 'g2.token'),
    '--json',
  ]);
  assert.equal(rotate.code, 0, rotate.stderr);
  assert.deepEqual(
    [
      jsonOf<{ previous_generation: number; grant: { generation: number } }>(rotate).previous_generation,
      jsonOf<{ grant: { generation: number } }>(rotate).grant.generation,
    ],
    [1, 2],
  );
  assert.ok(!rotate.stdout.includes(readTokenFile(join(dir, 'g2.token'))));
  const revoke = await runCli(['--data-dir', dataDir, 'grant', 'revoke', id]);
  assert.equal(revoke.code, 0, revoke.stderr);
  assert.match(revoke.stdout, new RegExp(`revoked grant ${id}`));
  const again = await runCli([
    '--data-dir',
    dataDir,
    'grant',
    'rotate',
    id,
    '--token-file',
    join(dir, 'g3.token'),
    '--json',
  ]);
  assert.equal(again.code, 3);
  assert.equal(jsonOf<{ error: { code: string } }>(again).error.code, 'GRANT_REVOKED');
  const missing = await runCli(['--data-dir', dataDir, 'grant', 'revoke', 'g-nothing', '--json']);
  assert.equal(missing.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(missing).error.code, 'GRANT_NOT_FOUND');
});

test('a token file is read only when it is a private regular file holding exactly one token', (t) => {
  const dir = tempDir(t);
  const token = formatGrantToken(new Uint8Array(32).fill(7));
  const write = (name: string, content: string, mode = 0o600): string => {
    const path = join(dir, name);
    writeFileSync(path, content, { mode });
    chmodSync(path, mode);
    return path;
  };
  assert.equal(readTokenFile(write('plain', token)), token);
  assert.equal(readTokenFile(write('newline', `${token}\n`)), token);
  assert.equal(
    codeOf(() => readTokenFile(write('two-newlines', `${token}\n\n`))),
    'GRANT_TOKEN_INVALID',
  );
  assert.equal(
    codeOf(() => readTokenFile(write('crlf', `${token}\r\n`))),
    'GRANT_TOKEN_INVALID',
  );
  assert.equal(
    codeOf(() => readTokenFile(write('space', ` ${token}`))),
    'GRANT_TOKEN_INVALID',
  );
  assert.equal(
    codeOf(() => readTokenFile(write('empty', ''))),
    'GRANT_TOKEN_INVALID',
  );
  assert.equal(
    codeOf(() => readTokenFile(write('readable', token, 0o644))),
    'GRANT_TOKEN_FILE_UNSAFE',
  );
  assert.equal(
    codeOf(() => readTokenFile(write('big', 'x'.repeat(2000)))),
    'INPUT_TOO_LARGE',
  );
  assert.equal(
    codeOf(() => readTokenFile(dir)),
    'INPUT_NOT_REGULAR_FILE',
  );
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  assert.equal(
    codeOf(() => readTokenFile(fifo)),
    'INPUT_NOT_REGULAR_FILE',
  );
  assert.equal(
    codeOf(() => readTokenFile(join(dir, 'absent'))),
    'INPUT_NOT_FOUND',
  );
  // A malformed file's content is never repeated in the message.
  const secretish = 'agentscm_not-quite-a-token-but-private';
  try {
    readTokenFile(write('almost', secretish));
    assert.fail('expected a refusal');
  } catch (error) {
    assert.ok(!(error as Error).message.includes('not-quite'));
  }
});
