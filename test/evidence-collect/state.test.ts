/**
 * The collector state directory (docs/collect.md "The state directory") and the hub endpoint
 * rules, on real directories: a state directory inside a workspace, overlapping the data
 * directory or accessible to others is refused; a reservation is never replaced and names one
 * descriptor; a retained envelope is never replaced; an endpoint must be a hub agent-tasks URL.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { collectionIsolation } from '../../src/collector/collect-request.js';
import {
  collectionDir,
  openCollectState,
  readRetainedEnvelope,
  reserveCollection,
  retainEnvelope,
} from '../../src/collector/collect-state.js';
import { containerSpec } from '../../src/collector/oci-command-collector.js';
import { uploadUrl } from '../../src/collector/upload-client.js';
import { decodeCommandRecipe } from '../../src/contracts/collector/command-recipe.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { makeRepo } from '../support/collector.js';
import { busyboxRecipe } from '../support/evidence-collect.js';

test('a state directory inside a workspace, overlapping the data directory or open to others is COLLECT_STATE_UNSAFE', (t) => {
  const repo = makeRepo(t, { 'a.txt': 'alpha' });
  assert.equal(
    codeOf(() => openCollectState(join(repo.workspace, 'collector'), { dataDir: repo.dataDir })),
    'COLLECT_STATE_UNSAFE',
  );
  assert.equal(
    codeOf(() => openCollectState(join(repo.dataDir, 'collector'), { dataDir: repo.dataDir })),
    'COLLECT_STATE_UNSAFE',
  );
  const dir = tempDir(t);
  assert.equal(
    codeOf(() => openCollectState(dir, { dataDir: join(dir, 'data') })),
    'COLLECT_STATE_UNSAFE',
    'the data directory inside the state directory',
  );
  const open = join(dir, 'open');
  mkdirSync(open);
  chmodSync(open, 0o755);
  assert.equal(
    codeOf(() => openCollectState(open, { dataDir: join(dir, 'data') })),
    'COLLECT_STATE_UNSAFE',
  );
  const state = openCollectState(join(dir, 'state'), { dataDir: join(dir, 'data') });
  assert.equal(state.snapshots, join(dir, 'state', 'snapshots'));
});

test('a reservation names one descriptor and a retained envelope is never replaced', (t) => {
  const dir = tempDir(t);
  const state = openCollectState(join(dir, 'state'), { dataDir: join(dir, 'data') });
  const descriptor = Buffer.from('{"descriptor":1}');
  assert.deepEqual(reserveCollection(state, 'u-1', descriptor), { created: true, state: 'reserved' });
  assert.equal(
    codeOf(() => reserveCollection(state, 'u-1', Buffer.from('{"descriptor":2}'))),
    'COLLECT_STATE_CONFLICT',
  );
  assert.equal(
    codeOf(() => reserveCollection(state, 'u-1', descriptor)),
    'COLLECT_INTERRUPTED',
  );
  const envelope = Buffer.from('AGSCMTR1 bytes');
  retainEnvelope(state, 'u-1', envelope);
  retainEnvelope(state, 'u-1', envelope);
  assert.equal(
    codeOf(() => retainEnvelope(state, 'u-1', Buffer.from('AGSCMTR1 other'))),
    'COLLECT_STATE_CONFLICT',
  );
  const reopened = reserveCollection(state, 'u-1', descriptor);
  assert.equal(reopened.state, 'retained');
  assert.ok(reopened.state === 'retained' && reopened.envelope.equals(envelope));
  assert.ok(readRetainedEnvelope(state, 'u-1')?.equals(envelope));
  assert.ok(readFileSync(join(collectionDir(state, 'u-1'), 'descriptor.json')).equals(descriptor));
  // Another upload request id is another collection, in its own one-digest directory.
  assert.notEqual(collectionDir(state, 'u-2'), collectionDir(state, 'u-1'));
  assert.equal(readRetainedEnvelope(state, 'u-2'), null);
});

test('--endpoint must be the http(s) agent-tasks URL of a hub profile, without credentials, query or fragment', () => {
  const base = 'http://127.0.0.1:8080/v1/hub/workspace/repositories/acme/demo/profiles/default/agent-tasks';
  assert.equal(uploadUrl(base).href, `${base}/collector-upload`);
  for (const bad of [
    'not a url',
    'ftp://127.0.0.1/agent-tasks',
    'http://u:p@127.0.0.1/x/agent-tasks',
    `${base}?x=1`,
    `${base}#f`,
    'http://127.0.0.1:8080/v1/hub/health',
  ]) {
    assert.equal(
      codeOf(() => uploadUrl(bad)),
      'UPLOAD_ENDPOINT_INVALID',
      bad,
    );
  }
});

test('the isolation statement a record carries is what every collector container is given', () => {
  const recipe = decodeCommandRecipe(Buffer.from(JSON.stringify(busyboxRecipe(['true']))));
  const spec = containerSpec({ recipe, imageId: 'sha256:x', snapshotPath: '/s', labels: {} });
  const host = spec.HostConfig as {
    NetworkMode: string;
    CapDrop: string[];
    SecurityOpt: string[];
    Memory: number;
    PidsLimit: number;
    NanoCpus: number;
    Mounts: { ReadOnly: boolean }[];
  };
  const isolation = collectionIsolation(recipe) as {
    network: string;
    source_read_only: boolean;
    user: string;
    capabilities: string[];
    no_new_privileges: boolean;
    limits: { memory_bytes: number; pids: number; cpu_millis: number };
  };
  assert.equal(isolation.user, spec.User);
  assert.equal(isolation.network, host.NetworkMode);
  assert.deepEqual(host.CapDrop, ['ALL']);
  assert.deepEqual(isolation.capabilities, []);
  assert.equal(isolation.no_new_privileges, host.SecurityOpt.includes('no-new-privileges'));
  assert.equal(isolation.source_read_only, host.Mounts[0]?.ReadOnly);
  assert.equal(isolation.limits.memory_bytes, host.Memory);
  assert.equal(isolation.limits.pids, host.PidsLimit);
  assert.equal(isolation.limits.cpu_millis * 1_000_000, host.NanoCpus);
});
