/**
 * The hub's reuse of an authorization (src/hub/auth.ts ProfileAuthorizations; docs/hub.md
 * "Authentication"): while the authority is unchanged the same authorization answers again, and
 * any commit to the authority — a revocation, a rotation, a new requirement, by another
 * connection or process — is seen by the very next authorization.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import { ProfileAuthorizations } from '../../src/hub/auth.js';
import { openStore } from '../../src/tasks/store.js';
import { grantFor, hubStore, revoke, rotate } from '../support/hub.js';
import { installRequirement } from '../support/tasks.js';

function refusedWith(code: string): (error: unknown) => boolean {
  return (error: unknown) => error instanceof AgentscmError && error.code === code;
}

test('an unchanged authority answers the same authorization again, per profile and token', (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const bob = grantFor(hub, 'bob', 'b1');
  const store = openStore(hub.store.dataDir, { mode: 'write' });
  t.after(() => store.close());
  const authorizations = new ProfileAuthorizations();
  const first = authorizations.authorize(hub.profile, alice.token, store);
  assert.equal(authorizations.authorize(hub.profile, alice.token, store), first);
  const other = authorizations.authorize(hub.profile, bob.token, store);
  assert.notEqual(other, first);
  assert.deepEqual(other.actor, bob.actor);
  // Another profile of the same store is authorized on its own (its repository and pin).
  const second = { ...hub.profile, profileId: 'other-profile' };
  assert.notEqual(authorizations.authorize(second, alice.token, store), first);
  assert.equal(authorizations.authorize(hub.profile, alice.token, store), first);
});

test('a revocation, a rotation or a new requirement committed elsewhere is seen by the next authorization', (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const bob = grantFor(hub, 'bob', 'b1');
  const carol = grantFor(hub, 'carol', 'c1');
  const store = openStore(hub.store.dataDir, { mode: 'write' });
  t.after(() => store.close());
  const authorizations = new ProfileAuthorizations();
  for (const grant of [alice, bob, carol]) authorizations.authorize(hub.profile, grant.token, store);

  revoke(hub, alice);
  assert.throws(() => authorizations.authorize(hub.profile, alice.token, store), refusedWith('GRANT_TOKEN_REJECTED'));
  const rotated = rotate(hub, bob);
  assert.throws(() => authorizations.authorize(hub.profile, bob.token, store), refusedWith('GRANT_TOKEN_REJECTED'));
  assert.deepEqual(authorizations.authorize(hub.profile, rotated, store).actor, bob.actor);
  // A refusal is never kept: the same dead token is refused again by the same reads.
  assert.throws(() => authorizations.authorize(hub.profile, alice.token, store), refusedWith('GRANT_TOKEN_REJECTED'));

  const before = authorizations.authorize(hub.profile, carol.token, store);
  assert.equal(authorizations.authorize(hub.profile, carol.token, store), before);
  installRequirement(hub.store, hub.dir, [{ id: 'lint', kind: 'command' }]);
  assert.throws(
    () => authorizations.authorize(hub.profile, carol.token, store),
    refusedWith('HUB_REQUIREMENT_CHANGED'),
  );
});
