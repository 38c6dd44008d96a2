/**
 * Collector profiles (docs/collector-profiles.md): `agent-task profile install` / `profile show`
 * against real stores. A profile installs only for the exact current epoch of a registration
 * with the same bindings, a command step of an installed requirement binding its recipe_digest,
 * and exactly that recipe; it is immutable, and a refused profile changes nothing.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { collectorProfileId, validateCollectorProfile } from '../../src/contracts/collector/profile.js';
import { formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import { listProfilesOfRegistration, requireCurrentCollectorProfile } from '../../src/native/collector-profiles.js';
import { openAuthority, type Authority } from '../../src/native/store.js';
import { installCollectorProfileFile, showCollectorProfile } from '../../src/tasks/collector/profiles.js';
import { withStore } from '../../src/tasks/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import {
  defaultFiles,
  enroll,
  makeTaskStore,
  PROFILE,
  RECIPE,
  RECIPE_PATH,
  revoke,
  sha256,
  type Executor,
  type TaskStore,
} from '../support/tasks.js';

const RUNTIME = 'ab'.repeat(32);

function profileFor(store: TaskStore, executor: Executor, step = 'unit', overrides: JsonObject = {}): JsonObject {
  const e = executor.enrollment;
  return {
    version: 1,
    kind: 'command',
    repository_id: store.repository,
    workflow_profile: PROFILE,
    step_id: step,
    registration_id: e.registration_id,
    registration_epoch: e.registration_epoch,
    verification_key_id: e.verification_key_id,
    recipe: RECIPE,
    recipe_digest: sha256(JSON.stringify(RECIPE)),
    runtime_identity_digest: RUNTIME,
    ...overrides,
  };
}

let files = 0;
function writeProfile(dir: string, profile: JsonObject): string {
  files += 1;
  const file = join(dir, `profile-${files}.json`);
  writeFileSync(file, formatJson(profile));
  return file;
}

function withRead<T>(dataDir: string, fn: (auth: Authority) => T): T {
  const auth = openAuthority(dataDir, { mode: 'read' });
  try {
    return fn(auth);
  } finally {
    auth.close();
  }
}

test('profile install and show: the id is the profile digest; installing again changes nothing; show reports currency', async (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const executor = enroll(store, 'unit');
  // Enrollment alone makes no collector.
  assert.deepEqual(
    withRead(dir, (auth) => listProfilesOfRegistration(auth, executor.enrollment.registration_id)),
    [],
  );
  const profile = profileFor(store, executor);
  const file = writeProfile(dir, profile);
  const installed = await runCli(['--data-dir', dir, 'agent-task', 'profile', 'install', file, '--json']);
  assert.equal(installed.code, 0, installed.stderr);
  const result = jsonOf<{
    collector_profile_id: string;
    installed: boolean;
    registration_current: boolean;
    profile: JsonObject;
    bound_by: { target: string; recipe_path: string };
  }>(installed);
  const id = collectorProfileId(validateCollectorProfile(profile));
  assert.equal(result.collector_profile_id, id);
  assert.equal(result.installed, true);
  assert.equal(result.registration_current, true);
  assert.deepEqual(result.bound_by.target, 'main');
  assert.equal(result.bound_by.recipe_path, RECIPE_PATH);
  assert.equal(result.profile.step_id, 'unit');
  const again = await runCli(['--data-dir', dir, 'agent-task', 'profile', 'install', file]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`already installed collector profile ${id}`));
  const shown = await runCli(['--data-dir', dir, 'agent-task', 'profile', 'show', id, '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.deepEqual(jsonOf<{ profile: JsonObject }>(shown).profile, result.profile);
  assert.equal(
    withRead(dir, (auth) => listProfilesOfRegistration(auth, executor.enrollment.registration_id)).length,
    1,
  );
  assert.equal(withRead(dir, (auth) => requireCurrentCollectorProfile(auth, id)).installed.collector_profile_id, id);
  // Immutable.
  const auth = openAuthority(dir, { mode: 'write' });
  try {
    assert.throws(() => auth.db.prepare('UPDATE collector_profiles SET installed_at_ms = 0').run(), /immutable/);
    assert.throws(() => auth.db.prepare('DELETE FROM collector_profiles').run(), /immutable/);
  } finally {
    auth.close();
  }
  // Re-enrollment supersedes the epoch: the profile stays, authorizes nothing, and a profile for
  // the new epoch is another profile.
  const renewed = enroll(store, 'unit');
  assert.equal(withStore(dir, 'read', (held) => showCollectorProfile(held, id)).registration_current, false);
  assert.equal(
    codeOf(() => withRead(dir, (auth2) => requireCurrentCollectorProfile(auth2, id))),
    'REGISTRATION_NOT_CURRENT',
  );
  const next = withStore(dir, 'write', (held) =>
    installCollectorProfileFile(held, writeProfile(dir, profileFor(store, renewed)), 1),
  );
  assert.notEqual(next.collector_profile_id, id);
  revoke(store, renewed.enrollment.registration_id);
  assert.equal(
    withStore(dir, 'read', (held) => showCollectorProfile(held, next.collector_profile_id)).registration_current,
    false,
  );
  const missing = await runCli(['--data-dir', dir, 'agent-task', 'profile', 'show', 'f'.repeat(64), '--json']);
  assert.equal(missing.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(missing).error.code, 'COLLECTOR_PROFILE_NOT_FOUND');
  assert.equal(
    codeOf(() => withStore(dir, 'read', (held) => showCollectorProfile(held, 'nope'))),
    'ID_INVALID',
  );
});

test('profile install refuses every binding that is not the current registration, a command step binding the recipe, or that recipe', (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const unit = enroll(store, 'unit');
  const paths = enroll(store, 'paths');
  const install = (profile: JsonObject): string =>
    codeOf(() => withStore(dir, 'write', (held) => installCollectorProfileFile(held, writeProfile(dir, profile), 1)));
  const cases: [string, JsonObject, string][] = [
    [
      'unknown registration',
      profileFor(store, unit, 'unit', { registration_id: 'reg-unknown' }),
      'REGISTRATION_NOT_FOUND',
    ],
    [
      'another epoch',
      profileFor(store, unit, 'unit', { registration_epoch: 2n }),
      'COLLECTOR_PROFILE_BINDING_MISMATCH',
    ],
    [
      'another key',
      profileFor(store, unit, 'unit', { verification_key_id: '0'.repeat(64) }),
      'COLLECTOR_PROFILE_BINDING_MISMATCH',
    ],
    ['another step than the registration', profileFor(store, unit, 'lint'), 'COLLECTOR_PROFILE_BINDING_MISMATCH'],
    [
      'another workflow profile',
      profileFor(store, unit, 'unit', { workflow_profile: 'other' }),
      'COLLECTOR_PROFILE_BINDING_MISMATCH',
    ],
    ['another repository', profileFor(store, unit, 'unit', { repository_id: 'f'.repeat(32) }), 'REPOSITORY_NOT_FOUND'],
    ['a source_paths step', profileFor(store, paths, 'paths'), 'COLLECTOR_PROFILE_STEP_INVALID'],
    [
      'another recipe digest',
      profileFor(store, unit, 'unit', { recipe_digest: '1'.repeat(64) }),
      'COLLECTOR_PROFILE_STEP_INVALID',
    ],
    [
      'another recipe',
      profileFor(store, unit, 'unit', { recipe: { ...RECIPE, argv: ['sh', '-c', 'true'] } as unknown as JsonValue }),
      'COLLECTOR_PROFILE_RECIPE_MISMATCH',
    ],
    ['an unknown field', { ...profileFor(store, unit), collector: 'x' }, 'SCHEMA_UNKNOWN_FIELD'],
    ['a review kind', profileFor(store, unit, 'unit', { kind: 'review' }), 'SCHEMA_TYPE'],
  ];
  for (const [what, profile, code] of cases) assert.equal(install(profile), code, what);
  // A revoked registration: not current.
  revoke(store, unit.enrollment.registration_id);
  assert.equal(install(profileFor(store, unit)), 'REGISTRATION_NOT_CURRENT', 'revoked');
  // Nothing was installed by any refusal.
  const auth = openAuthority(dir, { mode: 'read' });
  try {
    assert.equal((auth.db.prepare('SELECT count(*) AS n FROM collector_profiles').get() as { n: number }).n, 0);
  } finally {
    auth.close();
  }
});

test("the profile's recipe must be the recipe file decoded, env order included", (t) => {
  const dir = tempDir(t);
  const recipe = { ...RECIPE, env: { B: '2', A: '1' } };
  const store = makeTaskStore(dir, undefined, defaultFiles({ [RECIPE_PATH]: JSON.stringify(recipe) }));
  const unit = enroll(store, 'unit');
  const digest = sha256(JSON.stringify(recipe));
  const reordered = profileFor(store, unit, 'unit', {
    recipe: { ...RECIPE, env: { A: '1', B: '2' } } as unknown as JsonValue,
    recipe_digest: digest,
  });
  assert.equal(
    codeOf(() => withStore(dir, 'write', (held) => installCollectorProfileFile(held, writeProfile(dir, reordered), 1))),
    'COLLECTOR_PROFILE_RECIPE_MISMATCH',
  );
  const exact = profileFor(store, unit, 'unit', { recipe: recipe as unknown as JsonValue, recipe_digest: digest });
  assert.equal(
    withStore(dir, 'write', (held) => installCollectorProfileFile(held, writeProfile(dir, exact), 1)).installed,
    true,
  );
});
