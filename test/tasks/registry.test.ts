/**
 * The executor registry in a real authority file: immutable scoped epochs, revocations, the
 * current-registration lookup, and no rehabilitation by re-enrollment.
 */
import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';

import { bindingOf, scopeOfSubject } from '../../src/contracts/collector/executor-enrollment.js';
import { signObservation } from '../../src/contracts/collector/observation.js';
import { generateKeyPair, verificationKeyId } from '../../src/crypto/ed25519.js';
import {
  currentRegistration,
  enrollExecutor,
  getRegistration,
  listRegistrations,
  requireCurrentRegistration,
  revokeRegistration,
  verifyCurrentObservation,
} from '../../src/native/executor-registry.js';
import { createRepository } from '../../src/native/repositories.js';
import { createAuthority, type Authority } from '../../src/native/store.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { PASSING_ROWS, sampleAssertion, sampleAttempt, sampleClaim, sampleTask } from '../support/task-contracts.js';

const hexKey = (): string => Buffer.from(generateKeyPair().publicKey).toString('hex');

function setup(t: TestContext): { auth: Authority; repository: string } {
  const auth = createAuthority(tempDir(t));
  t.after(() => auth.close());
  const repository = createRepository(auth, 'demo').id;
  return { auth, repository };
}

const scopeOf = (repository: string) => ({ repository, profile: 'default', step: 'unit-tests' });

test('enrollment creates epoch 1 with the verification key id of the supplied key', (t) => {
  const { auth, repository } = setup(t);
  const key = hexKey();
  const result = enrollExecutor(auth, {
    repository: 'demo',
    profile: 'default',
    step: 'unit-tests',
    executor: 'ci-box',
    public_key: key,
  });
  assert.equal(result.registration_epoch, 1n);
  assert.equal(result.supersedes_epoch, null);
  assert.equal(result.repository, repository);
  assert.equal(result.verification_key_id, verificationKeyId(Buffer.from(key, 'hex')));
  assert.match(result.registration_id, /^reg-[0-9a-f]{32}$/);
  const state = getRegistration(auth, result.registration_id);
  assert.equal(state.current, true);
  assert.equal(state.public_key, key);
});

test('re-enrollment makes a new epoch per scope; the old epoch is superseded and never current again', (t) => {
  const { auth, repository } = setup(t);
  const scope = scopeOf(repository);
  const first = enrollExecutor(auth, { ...scope, executor: 'ci-box', public_key: hexKey() });
  const second = enrollExecutor(auth, { ...scope, executor: 'ci-box', public_key: hexKey() });
  assert.equal(second.registration_epoch, 2n);
  assert.equal(second.supersedes_epoch, 1n);
  assert.notEqual(second.registration_id, first.registration_id);
  const old = getRegistration(auth, first.registration_id);
  assert.equal(old.current, false);
  assert.equal(old.latest_epoch, 2n);
  assert.equal(currentRegistration(auth, { ...scope, executor: 'ci-box' })?.registration_id, second.registration_id);
  assert.equal(
    codeOf(() => requireCurrentRegistration(auth, scope, bindingOf(old))),
    'REGISTRATION_NOT_CURRENT',
  );
  assert.equal(
    requireCurrentRegistration(auth, scope, bindingOf(getRegistration(auth, second.registration_id)))
      .registration_epoch,
    2n,
  );
  // Another step or executor has its own epochs.
  assert.equal(
    enrollExecutor(auth, { ...scope, step: 'lint', executor: 'ci-box', public_key: hexKey() }).registration_epoch,
    1n,
  );
  assert.equal(enrollExecutor(auth, { ...scope, executor: 'other-box', public_key: hexKey() }).registration_epoch, 1n);
});

test('revocation ends currency; re-enrolling never rehabilitates a revoked or older epoch', (t) => {
  const { auth, repository } = setup(t);
  const scope = scopeOf(repository);
  const key = hexKey();
  const first = enrollExecutor(auth, { ...scope, executor: 'ci-box', public_key: key });
  const binding = bindingOf(getRegistration(auth, first.registration_id));
  assert.deepEqual(revokeRegistration(auth, first.registration_id, 'key leaked'), {
    registration_id: first.registration_id,
    revoked: true,
    already_revoked: false,
  });
  assert.deepEqual(revokeRegistration(auth, first.registration_id), {
    registration_id: first.registration_id,
    revoked: true,
    already_revoked: true,
  });
  const revoked = currentRegistration(auth, { ...scope, executor: 'ci-box' });
  assert.equal(revoked?.revoked, true);
  assert.equal(revoked?.current, false);
  assert.equal(revoked?.revocation_reason, 'key leaked');
  assert.equal(
    codeOf(() => requireCurrentRegistration(auth, scope, binding)),
    'REGISTRATION_NOT_CURRENT',
  );
  // Same key again: a new epoch, and the revoked epoch stays revoked and not current.
  const again = enrollExecutor(auth, { ...scope, executor: 'ci-box', public_key: key });
  assert.equal(again.registration_epoch, 2n);
  assert.equal(again.verification_key_id, first.verification_key_id);
  assert.equal(
    codeOf(() => requireCurrentRegistration(auth, scope, binding)),
    'REGISTRATION_NOT_CURRENT',
  );
  assert.equal(getRegistration(auth, first.registration_id).revoked, true);
  assert.equal(
    requireCurrentRegistration(auth, scope, bindingOf(getRegistration(auth, again.registration_id))).current,
    true,
  );
  assert.deepEqual(
    listRegistrations(auth, repository).map((r) => [r.registration_epoch, r.revoked, r.current]),
    [
      [1n, true, false],
      [2n, false, true],
    ],
  );
});

test('a binding for another scope, an unknown executor or a forged epoch is not current', (t) => {
  const { auth, repository } = setup(t);
  const scope = scopeOf(repository);
  const result = enrollExecutor(auth, { ...scope, executor: 'ci-box', public_key: hexKey() });
  const binding = bindingOf(getRegistration(auth, result.registration_id));
  assert.equal(
    codeOf(() => requireCurrentRegistration(auth, { ...scope, step: 'lint' }, binding)),
    'REGISTRATION_NOT_CURRENT',
  );
  assert.equal(
    codeOf(() => requireCurrentRegistration(auth, scope, { ...binding, executor_id: 'ghost' })),
    'REGISTRATION_NOT_CURRENT',
  );
  assert.equal(
    codeOf(() => requireCurrentRegistration(auth, scope, { ...binding, registration_epoch: 7n })),
    'REGISTRATION_NOT_CURRENT',
  );
  assert.equal(
    codeOf(() => requireCurrentRegistration(auth, scope, { ...binding, verification_key_id: '0'.repeat(64) })),
    'REGISTRATION_NOT_CURRENT',
  );
  assert.equal(currentRegistration(auth, { ...scope, executor: 'ghost' }), null);
});

test('bad keys, ids and repositories are refused and nothing is written', (t) => {
  const { auth, repository } = setup(t);
  const scope = scopeOf(repository);
  const identity = `01${'00'.repeat(31)}`;
  const cases: [string, Parameters<typeof enrollExecutor>[1], string][] = [
    ['small-order key', { ...scope, executor: 'e', public_key: identity }, 'PUBLIC_KEY_INVALID'],
    ['short key', { ...scope, executor: 'e', public_key: 'ab'.repeat(31) }, 'PUBLIC_KEY_INVALID'],
    ['uppercase key', { ...scope, executor: 'e', public_key: hexKey().toUpperCase() }, 'PUBLIC_KEY_INVALID'],
    ['non-canonical point', { ...scope, executor: 'e', public_key: `${'ff'.repeat(31)}7f` }, 'PUBLIC_KEY_INVALID'],
    ['bad executor id', { ...scope, executor: 'has space', public_key: hexKey() }, 'ID_INVALID'],
    [
      'unknown repository',
      { ...scope, repository: 'nope', executor: 'e', public_key: hexKey() },
      'REPOSITORY_NOT_FOUND',
    ],
  ];
  for (const [name, input, code] of cases)
    assert.equal(
      codeOf(() => enrollExecutor(auth, input)),
      code,
      name,
    );
  assert.deepEqual(listRegistrations(auth, repository), []);
  assert.equal(
    codeOf(() => revokeRegistration(auth, 'reg-unknown')),
    'REGISTRATION_NOT_FOUND',
  );
});

test('registrations and revocations are immutable in the database itself', (t) => {
  const { auth, repository } = setup(t);
  const result = enrollExecutor(auth, { ...scopeOf(repository), executor: 'ci-box', public_key: hexKey() });
  revokeRegistration(auth, result.registration_id);
  assert.throws(
    () => auth.db.prepare("UPDATE executor_registrations SET registration_epoch = '00000000000000000009'").run(),
    /immutable/,
  );
  assert.throws(() => auth.db.prepare('DELETE FROM executor_registrations').run(), /immutable/);
  assert.throws(() => auth.db.prepare('DELETE FROM executor_revocations').run(), /immutable/);
  assert.throws(() => auth.db.prepare("UPDATE executor_revocations SET reason = 'x'").run(), /immutable/);
  const stored = auth.db.prepare('SELECT registration_epoch FROM executor_registrations').get() as {
    registration_epoch: string;
  };
  assert.equal(stored.registration_epoch, '00000000000000000001');
});

test('verifyCurrentObservation: current key verifies; revocation invalidates a retained observation; re-enrollment does not rehabilitate it', (t) => {
  const { auth, repository } = setup(t);
  const scope = scopeOf(repository);
  const { privateKey, publicKey } = generateKeyPair();
  const enrolled = enrollExecutor(auth, {
    ...scope,
    executor: 'ci-box',
    public_key: Buffer.from(publicKey).toString('hex'),
  });
  const task = sampleTask();
  const binding = bindingOf(getRegistration(auth, enrolled.registration_id));
  const attempt = sampleAttempt(task, sampleClaim(task, binding));
  const observation = signObservation(sampleAssertion(task, attempt, PASSING_ROWS), privateKey);
  const verified = verifyCurrentObservation(auth, scope, observation);
  assert.equal(verified.registration.registration_id, enrolled.registration_id);
  assert.equal(verified.observation_digest, observation.executor_provenance?.observation_digest);
  // A signature by another key under the same binding does not verify.
  const other = generateKeyPair();
  const forged = signObservation(
    {
      ...observation,
      executor: { ...binding, verification_key_id: verificationKeyId(other.publicKey) },
      executor_provenance: null,
    },
    other.privateKey,
  );
  assert.equal(
    codeOf(() => verifyCurrentObservation(auth, scope, { ...forged, executor: binding })),
    'SIGNATURE_INVALID',
  );
  assert.equal(
    codeOf(() => verifyCurrentObservation(auth, { ...scope, step: 'lint' }, observation)),
    'REGISTRATION_NOT_CURRENT',
  );
  revokeRegistration(auth, enrolled.registration_id);
  assert.equal(
    codeOf(() => verifyCurrentObservation(auth, scope, observation)),
    'REGISTRATION_NOT_CURRENT',
  );
  enrollExecutor(auth, { ...scope, executor: 'ci-box', public_key: Buffer.from(publicKey).toString('hex') });
  assert.equal(
    codeOf(() => verifyCurrentObservation(auth, scope, observation)),
    'REGISTRATION_NOT_CURRENT',
  );
  const agent = { ...observation, trust_class: 'agent_assertion' as const, executor: null, executor_provenance: null };
  assert.equal(
    codeOf(() => verifyCurrentObservation(auth, scope, agent)),
    'TRUST_CLASS_INVALID',
  );
});

test('scopeOfSubject names the repository, profile and step of a task subject', () => {
  const subject = sampleTask().subject;
  assert.deepEqual(scopeOfSubject(subject), {
    repository: subject.repository,
    profile: subject.profile,
    step: subject.step_id,
  });
});
