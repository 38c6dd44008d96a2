/**
 * The store's authority_id (docs/grants.md "Authority identity"): 32 lowercase hex, random per
 * store, fixed at creation, shown by `policy show`; an older store gets one at its first writing
 * command (read commands never migrate), and the row refuses every change.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import test from 'node:test';
import Database from 'better-sqlite3';

import { AUTHORITY_MIGRATIONS } from '../../src/native/migrations/index.js';
import { createAuthority, nativePaths } from '../../src/native/store.js';
import { runCli } from '../helpers/cli.js';
import { assertError, cliJson, fixture, initProject } from '../support/foundation.js';

test('policy show names a random authority_id fixed at creation; human output prints it too', async (t) => {
  const a = fixture(t);
  const b = fixture(t);
  await initProject(a);
  await initProject(b);
  const first = await cliJson<{ authority_id: string }>(a, ['policy', 'show']);
  assert.match(first.authority_id, /^[0-9a-f]{32}$/);
  await cliJson(a, ['policy', 'bump']);
  assert.equal(
    (await cliJson<{ authority_id: string }>(a, ['policy', 'show'])).authority_id,
    first.authority_id,
    'a writing command keeps it',
  );
  const other = await cliJson<{ authority_id: string }>(b, ['policy', 'show']);
  assert.notEqual(other.authority_id, first.authority_id, 'each store has its own');
  const human = await runCli(['--data-dir', a.dataDir, 'policy', 'show']);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`^authority ${first.authority_id}$`, 'm'));
  const db = new Database(nativePaths(a.dataDir).db);
  try {
    assert.throws(() => db.prepare('UPDATE authority_identity SET authority_id = ?').run('0'.repeat(32)), /immutable/);
    assert.throws(() => db.prepare('DELETE FROM authority_identity').run(), /immutable/);
  } finally {
    db.close();
  }
});

/** Replace the authority database by one that the first four schema steps built, as an older build left a new store. */
function buildSchema4(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  for (const step of AUTHORITY_MIGRATIONS.slice(0, 4)) step(db);
  db.pragma('user_version = 4');
  db.close();
}

test('a store created before the authority_id gets one at its first writing command, never from a read', async (t) => {
  // A store of schema 4 that holds no revision yet (created, never given a repository): a store
  // that holds revisions of that age is refused as a whole since revisions are trees
  // (STORE_REVISIONS_OUTDATED, test/native/trees-migration.test.ts), so this is the store that
  // migrates through step 5.
  const f = fixture(t);
  createAuthority(f.dataDir).close();
  buildSchema4(nativePaths(f.dataDir).db);
  assertError(await runCli(['--data-dir', f.dataDir, 'policy', 'show', '--json']), 'STORE_SCHEMA_UNSUPPORTED', 4);
  const still = new Database(nativePaths(f.dataDir).db, { readonly: true });
  assert.equal(still.pragma('user_version', { simple: true }), 4, 'the read left the store unmigrated');
  still.close();
  await initProject(f);
  await cliJson(f, ['policy', 'bump']);
  const shown = await cliJson<{ authority_id: string; policy_epoch: number }>(f, ['policy', 'show']);
  assert.match(shown.authority_id, /^[0-9a-f]{32}$/);
  assert.equal(shown.policy_epoch, 1);
  assert.equal((await cliJson<{ authority_id: string }>(f, ['policy', 'show'])).authority_id, shown.authority_id);
});
