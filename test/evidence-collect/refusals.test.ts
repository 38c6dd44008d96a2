/**
 * What `agent-task collect` refuses before anything is reserved or run (docs/collect.md "What
 * collect checks"), against real stores and the live engine: a key of another registration, a
 * descriptor that differs from the authority in any field, a token of another grant, a runtime
 * identity other than the pinned one. Each refusal has its code, reserves nothing in the state
 * directory and creates no container.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { collect } from '../../src/collector/collect.js';
import { createSigningKey } from '../../src/collector/key-store.js';
import { collectorDescriptorToJson } from '../../src/contracts/collector/descriptor.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { enrollExecutor } from '../../src/native/executor-registry.js';
import { openAuthority } from '../../src/native/store.js';
import { openStore } from '../../src/tasks/store.js';
import { requireEngine } from '../support/collector.js';
import {
  ACTOR,
  containersCreated,
  DOCKER_EXE,
  DOCKER_SOCKET,
  makeCollection,
  type Collection,
} from '../support/evidence-collect.js';
import { makeGrant } from '../support/grants.js';
import { PROFILE } from '../support/tasks.js';

function collectInput(
  c: Collection,
  overrides: { descriptorFile?: string; keyFile?: string; tokenFile?: string } = {},
): Parameters<typeof collect>[0] {
  return {
    store: openStore(c.dataDir, { mode: 'read' }),
    uploadStore: openStore(c.dataDir, { mode: 'write' }),
    descriptorFile: overrides.descriptorFile ?? c.descriptorFile,
    keyFile: overrides.keyFile ?? c.keyFile,
    stateDir: c.stateDir,
    docker: DOCKER_EXE,
    dockerSocket: DOCKER_SOCKET,
    tokenFile: overrides.tokenFile ?? c.tokenFile,
    endpoint: 'http://127.0.0.1:9/v1/hub/workspace/repositories/acme/demo/profiles/default/agent-tasks',
    agentscmVersion: '0.1.0',
  };
}

async function refusal(input: Parameters<typeof collect>[0]): Promise<AgentscmError> {
  try {
    await collect(input);
  } catch (error) {
    if (error instanceof AgentscmError) return error;
    throw error;
  } finally {
    input.uploadStore.close();
    input.store.close();
  }
  throw new Error('collect did not refuse');
}

function reservedCount(c: Collection): number {
  const dir = join(c.stateDir, 'collections');
  return existsSync(dir) ? readdirSync(dir).length : 0;
}

let edits = 0;
function editedDescriptor(c: Collection, edit: (d: JsonObject) => void): string {
  const json = collectorDescriptorToJson(c.descriptor);
  edit(json);
  edits += 1;
  const file = join(c.dir, `edited-${edits}.json`);
  writeFileSync(file, encodeCanonical(json));
  return file;
}

test('a descriptor that differs from the authority in any field, a key of another registration or a token of another grant is refused before anything is reserved or run', async (t) => {
  await requireEngine();
  const c = await makeCollection(t);
  const since = Math.floor(Date.now() / 1000) - 1;
  const sub = (d: JsonObject, key: string): JsonObject => d[key] as JsonObject;
  const cases: [string, (d: JsonObject) => void, string, string | null][] = [
    ['authority_id', (d) => (d.authority_id = '0'.repeat(32)), 'COLLECT_DESCRIPTOR_MISMATCH', 'authority_id'],
    ['recipe argv', (d) => (sub(d, 'recipe').argv = ['sh', '-c', 'true']), 'COLLECT_DESCRIPTOR_MISMATCH', 'recipe'],
    [
      'runtime identity',
      (d) => (d.runtime_identity_digest = 'e'.repeat(64)),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'runtime_identity_digest',
    ],
    [
      'task digest',
      (d) => (sub(d, 'task').task_digest = '1'.repeat(64)),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'task.task_digest',
    ],
    [
      'attempt digest',
      (d) => (sub(d, 'attempt').attempt_digest = '2'.repeat(64)),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'attempt.attempt_digest',
    ],
    ['fence', (d) => (sub(d, 'attempt').fence = 2n), 'COLLECT_DESCRIPTOR_MISMATCH', 'attempt.fence'],
    [
      'execution operation',
      (d) => (sub(d, 'attempt').execution_operation_id = 'exec-other'),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'attempt.execution_operation_id',
    ],
    [
      'subject revision',
      (d) => (sub(d, 'subject').revision = '3'.repeat(64)),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'subject.revision',
    ],
    [
      'subject context',
      (d) => (sub(d, 'subject').context_digest = '4'.repeat(64)),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'subject.context_digest',
    ],
    [
      'requirement',
      (d) => (sub(d, 'subject').requirement_digest = '5'.repeat(64)),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'subject.requirement_digest',
    ],
    [
      'executor id',
      (d) => (sub(d, 'executor').executor_id = 'box-2'),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'executor.executor_id',
    ],
    [
      'registration epoch',
      (d) => (sub(d, 'executor').registration_epoch = 9n),
      'COLLECT_DESCRIPTOR_MISMATCH',
      'executor.registration_epoch',
    ],
    ['workflow profile', (d) => (d.workflow_profile = 'other'), 'COLLECT_DESCRIPTOR_MISMATCH', 'workflow_profile'],
    ['another profile', (d) => (d.collector_profile_id = 'f'.repeat(64)), 'COLLECTOR_PROFILE_NOT_FOUND', null],
    ['upload request', (d) => (d.upload_request_id = 'u-other'), 'COLLECT_DESCRIPTOR_MISMATCH', 'upload_request_id'],
    ['origin generation', (d) => (sub(d, 'origin').grant_generation = 7n), 'COLLECT_ORIGIN_MISMATCH', null],
  ];
  for (const [what, edit, code, field] of cases) {
    const error = await refusal(collectInput(c, { descriptorFile: editedDescriptor(c, edit) }));
    assert.equal(error.code, code, `${what}: ${error.message}`);
    if (field !== null) assert.equal(error.details?.field, field, what);
  }
  // The key of another registration (enrolled for another step) is refused, though it is a valid, enrolled key.
  const otherKey = createSigningKey(join(c.dir, 'other-collector'));
  const auth = openAuthority(c.dataDir, { mode: 'write' });
  try {
    enrollExecutor(auth, {
      repository: c.store.repository,
      profile: PROFILE,
      step: 'unit',
      executor: 'box-1',
      public_key: otherKey.public_key,
    });
  } finally {
    auth.close();
  }
  const keyError = await refusal(collectInput(c, { keyFile: otherKey.key_file }));
  assert.equal(keyError.code, 'COLLECT_KEY_MISMATCH');
  assert.equal(keyError.details?.registration_id, c.descriptor.executor.registration_id);
  // A live token of another grant of the same actor is not the descriptor's origin.
  const grantDir = join(c.dir, 'grants');
  const other = makeGrant(c.dataDir, grantDir, ACTOR).token_file;
  assert.equal((await refusal(collectInput(c, { tokenFile: other }))).code, 'COLLECT_ORIGIN_MISMATCH');
  // Nothing was reserved and nothing ran.
  assert.equal(reservedCount(c), 0);
  assert.equal(await containersCreated(c.descriptor.attempt.attempt_id, since), 0);
});

test('a runtime identity other than the one the profile pins is refused before the reservation', async (t) => {
  await requireEngine();
  const c = await makeCollection(t, { runtimeDigest: 'a'.repeat(64) });
  const since = Math.floor(Date.now() / 1000) - 1;
  const error = await refusal(collectInput(c));
  assert.equal(error.code, 'COLLECT_RUNTIME_MISMATCH');
  assert.equal(reservedCount(c), 0);
  assert.equal(await containersCreated(c.descriptor.attempt.attempt_id, since), 0);
});
