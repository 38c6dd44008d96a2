/**
 * `agentscm doctor` against the live container engine (AGENTSCM_TEST_DOCKER_SOCKET, image
 * local/busybox:1): the images installed collector profiles pin, the runtime identity each
 * profile pins, and an engine that does not answer — needed (profiles installed, or the socket
 * named) or not.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { createSigningKey } from '../../src/collector/key-store.js';
import { formatJson } from '../../src/contracts/json/canonical-json.js';
import { enrollExecutor } from '../../src/native/executor-registry.js';
import { installCollectorProfileFile } from '../../src/tasks/collector/profiles.js';
import { withStore } from '../../src/tasks/store.js';
import { tempDir } from '../helpers/tmp.js';
import { busyboxRecipe, DOCKER_EXE, IMAGE, makeCollection, STEP } from '../support/evidence-collect.js';
import { defaultFiles, makeTaskStore, PROFILE, RECIPE_PATH, sha256 } from '../support/tasks.js';
import { DOCKER_SOCKET, doctor, findingOf, findingsOf, testHome } from './fixture.js';

const ABSENT_IMAGE = 'local/agentscm-doctor-absent:1';

test('a collector profile pinning an image the engine does not have is IMAGE_MISSING with the load fix', async (t) => {
  const dir = tempDir(t, 'agentscm-doctor-');
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  const recipe = { ...busyboxRecipe(['true']), image: ABSENT_IMAGE };
  const recipeText = JSON.stringify(recipe);
  const store = makeTaskStore(dataDir, undefined, defaultFiles({ [RECIPE_PATH]: recipeText }));
  const key = createSigningKey(join(dir, 'collector'));
  const enrollment = withStore(dataDir, 'write', (s) =>
    enrollExecutor(s.authority(), {
      repository: store.repository,
      profile: PROFILE,
      step: STEP,
      executor: 'box-1',
      public_key: key.public_key,
    }),
  );
  const profileFile = join(dir, 'profile.json');
  writeFileSync(
    profileFile,
    formatJson({
      version: 1,
      kind: 'command',
      repository_id: store.repository,
      workflow_profile: PROFILE,
      step_id: STEP,
      registration_id: enrollment.registration_id,
      registration_epoch: enrollment.registration_epoch,
      verification_key_id: enrollment.verification_key_id,
      recipe,
      recipe_digest: sha256(recipeText),
      runtime_identity_digest: 'a'.repeat(64),
    }),
  );
  withStore(dataDir, 'write', (held) => installCollectorProfileFile(held, profileFile, Date.now()));
  const { report } = await doctor(testHome(t), ['--data-dir', dataDir, '--docker', DOCKER_EXE]);
  const missing = findingOf(report, 'runtime.image', 'IMAGE_MISSING');
  assert.equal(missing.status, 'fail');
  assert.match(
    missing.message,
    new RegExp(`image ${ABSENT_IMAGE}, pinned by 1 collector profile, cannot be used: IMAGE_NOT_FOUND`),
  );
  assert.match(missing.fix ?? '', /docker load -i FILE.*agentscm never pulls images/);
  // An identity cannot be observed without the image: nothing is compared for that profile.
  assert.deepEqual(findingsOf(report, 'runtime.identity'), []);
  findingOf(report, 'runtime', 'OK');
});

test('a profile whose pinned runtime identity is no longer the observed one is RUNTIME_IDENTITY_CHANGED with the probe fix', async (t) => {
  const c = await makeCollection(t, { runtimeDigest: 'b'.repeat(64) });
  const { report } = await doctor(testHome(t), ['--data-dir', c.dataDir, '--docker', DOCKER_EXE]);
  findingOf(report, 'runtime.image', 'OK');
  const changed = findingOf(report, 'runtime.identity', 'RUNTIME_IDENTITY_CHANGED');
  assert.equal(changed.status, 'fail');
  assert.match(changed.message, new RegExp(`pins runtime identity ${'b'.repeat(64)}, but .* give [0-9a-f]{64}`));
  assert.equal(
    changed.fix?.startsWith(
      `probe the runtime (agentscm agent-task runtime-probe --docker ${DOCKER_EXE} --docker-socket ${DOCKER_SOCKET} --image ${IMAGE}) and install a new collector profile`,
    ),
    true,
    changed.fix ?? '',
  );
  // Without --docker the identity (which hashes the executable) is not compared: a skip with the flag to pass.
  const without = await doctor(testHome(t), ['--data-dir', c.dataDir]);
  assert.equal(findingOf(without.report, 'runtime.identity', 'NO_DOCKER_EXECUTABLE').status, 'skip');
});

test('an engine that does not answer fails when profiles are installed, and is only a warning when nothing collects', async (t) => {
  const c = await makeCollection(t);
  const dead = join(c.dir, 'no-engine.sock');
  const { report } = await doctor(testHome(t), ['--data-dir', c.dataDir, '--docker-socket', dead]);
  const down = findingOf(report, 'runtime', 'RUNTIME_UNAVAILABLE');
  assert.match(down.message, new RegExp(`unix://${dead}`));
  assert.match(down.fix ?? '', /start the container engine/);
  assert.equal(findingOf(report, 'runtime.image', 'RUNTIME_DOWN').status, 'skip');

  const bare = tempDir(t, 'agentscm-doctor-');
  makeTaskStore(join(bare, 'data'));
  const quiet = await doctor(testHome(t), ['--data-dir', join(bare, 'data')], {
    defaultSocket: true,
    env: { DOCKER_HOST: `unix://${dead}` },
  });
  assert.equal(findingOf(quiet.report, 'runtime', 'RUNTIME_NOT_CONFIGURED').status, 'warn');
  assert.equal(findingOf(quiet.report, 'runtime.image', 'NO_PROFILES').status, 'skip');
  assert.equal(quiet.report.ok, true);
});
