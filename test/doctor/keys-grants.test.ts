/**
 * `agentscm doctor` on collector keys, executor registrations, grants and token files, over a
 * real collection set-up (test/support/evidence-collect.ts: a store, a key enrolled for step
 * lint, a collector profile pinning the live engine's identity, an agent grant): a key file or
 * state directory others can read, a revoked or superseded registration, a revoked or rotated
 * grant — each with its code and fix, the token never printed, and the store left unchanged.
 */
import assert from 'node:assert/strict';
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { createSigningKey } from '../../src/collector/key-store.js';
import { enrollExecutor, revokeRegistration } from '../../src/native/executor-registry.js';
import { listGrantsInStore, revokeGrantInStore, rotateGrantInStore } from '../../src/native/grants.js';
import { withStore } from '../../src/tasks/store.js';
import { DOCKER_EXE, makeCollection, STEP, type Collection } from '../support/evidence-collect.js';
import { PROFILE } from '../support/tasks.js';
import { doctor, findingOf, findingsOf, fingerprint, testHome } from './fixture.js';

function keyArgs(c: Collection): string[] {
  return ['--data-dir', c.dataDir, '--state-dir', c.stateDir, '--token-file', c.tokenFile, '--docker', DOCKER_EXE];
}

function grantIdOf(c: Collection): string {
  const [grant] = withStore(c.dataDir, 'read', (s) => listGrantsInStore(s, undefined));
  assert.ok(grant);
  return grant.grant_id;
}

test('a key file that group or others can read is KEY_FILE_NOT_PRIVATE with the chmod fix; the key and the store are left alone', async (t) => {
  const c = await makeCollection(t);
  chmodSync(c.keyFile, 0o644);
  const before = fingerprint(c.dir);
  const { report } = await doctor(testHome(t), keyArgs(c));
  const open = findingOf(report, 'keys.state-dir', 'KEY_FILE_NOT_PRIVATE');
  assert.equal(open.status, 'fail');
  assert.equal(open.fix, `run: chmod 600 ${c.keyFile}`);
  assert.deepEqual(fingerprint(c.dir), before);
});

test('a state directory that group or others can enter is KEY_STATE_DIR_NOT_PRIVATE with the chmod fix', async (t) => {
  const c = await makeCollection(t);
  chmodSync(c.stateDir, 0o755);
  const { report } = await doctor(testHome(t), keyArgs(c));
  assert.equal(findingOf(report, 'keys.state-dir', 'KEY_STATE_DIR_NOT_PRIVATE').fix, `run: chmod 700 ${c.stateDir}`);
});

test('a key whose registration was revoked is KEY_REVOKED with the new-key fix', async (t) => {
  const c = await makeCollection(t);
  withStore(c.dataDir, 'write', (s) => revokeRegistration(s.authority(), c.enrollment.registration_id, 'lost laptop'));
  const { report } = await doctor(testHome(t), keyArgs(c));
  const revoked = findingOf(report, 'keys.state-dir', 'KEY_REVOKED');
  assert.equal(revoked.status, 'fail');
  assert.match(revoked.message, new RegExp(`registration ${c.enrollment.registration_id} is revoked`));
  assert.match(revoked.fix ?? '', /agentscm agent-task key --state-dir NEW_DIR/);
  assert.match(
    findingOf(report, 'keys.registrations', 'OK').message,
    /^1 executor registration: 0 current, 1 revoked, 0 superseded and not revoked$/,
  );
});

test('a superseded, unrevoked registration is REGISTRATION_SUPERSEDED with the revoke fix, and its key KEY_SUPERSEDED', async (t) => {
  const c = await makeCollection(t);
  const other = createSigningKey(join(c.dir, 'collector-2'));
  withStore(c.dataDir, 'write', (s) =>
    enrollExecutor(s.authority(), {
      repository: c.store.repository,
      profile: PROFILE,
      step: STEP,
      executor: 'box-1',
      public_key: other.public_key,
    }),
  );
  const { report } = await doctor(testHome(t), keyArgs(c));
  const superseded = findingOf(report, 'keys.registrations', 'REGISTRATION_SUPERSEDED');
  assert.equal(superseded.status, 'warn');
  assert.equal(
    superseded.fix,
    `revoke the old epoch: agentscm agent-task revoke ${c.enrollment.registration_id} --reason superseded`,
  );
  assert.equal(findingOf(report, 'keys.state-dir', 'KEY_SUPERSEDED').status, 'warn');
});

test('a token file of a revoked grant is GRANT_TOKEN_REVOKED, and the token is never printed', async (t) => {
  const c = await makeCollection(t);
  const token = readFileSync(c.tokenFile, 'utf8').trim();
  withStore(c.dataDir, 'write', (s) => revokeGrantInStore(s, grantIdOf(c), Date.now()));
  const { result, report } = await doctor(testHome(t), keyArgs(c));
  const revoked = findingOf(report, 'grants.token-file', 'GRANT_TOKEN_REVOKED');
  assert.equal(revoked.status, 'fail');
  assert.match(revoked.fix ?? '', /agentscm grant create --actor OWNER\/AGENT --token-file FILE/);
  assert.match(findingOf(report, 'grants', 'OK').message, /^1 grant: 0 live, 1 revoked \(grants do not expire\)$/);
  assert.equal(result.stdout.includes(token) || result.stderr.includes(token), false);
  const human = await doctor(testHome(t), keyArgs(c), { json: false });
  assert.equal(human.result.stdout.includes(token), false);
});

test('a token file of an older generation is GRANT_TOKEN_ROTATED with the latest-token fix', async (t) => {
  const c = await makeCollection(t);
  withStore(c.dataDir, 'write', (s) =>
    rotateGrantInStore(s, grantIdOf(c), join(c.dir, 'grants', 'rotated.token'), Date.now()),
  );
  const { report } = await doctor(testHome(t), keyArgs(c));
  assert.match(
    findingOf(report, 'grants.token-file', 'GRANT_TOKEN_ROTATED').fix ?? '',
    /latest `agentscm grant rotate`/,
  );
});

test('a token file others can read is GRANT_TOKEN_FILE_INVALID naming the refusal', async (t) => {
  const c = await makeCollection(t);
  chmodSync(c.tokenFile, 0o644);
  const { report } = await doctor(testHome(t), keyArgs(c));
  assert.match(findingOf(report, 'grants.token-file', 'GRANT_TOKEN_FILE_INVALID').message, /GRANT_TOKEN_FILE_UNSAFE/);
  assert.equal(findingsOf(report, 'grants.token-file').length, 1);
});
