/**
 * Fetching a claimed revision from a real hub on loopback (docs/wire.md "Fetching a claimed
 * revision"): the snapshot made from fetched objects is byte for byte the one made from the local
 * store; a second fetch asks only for what the cache lacks; a hub (a proxy in front of it) that
 * changes a byte, a tree, the order or the length of a batch is refused with nothing cached but
 * verified objects; an object outside the claim, another attempt and a revoked grant are refused
 * by the hub; a connection cut mid-batch resumes with only the missing blobs.
 */
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { materializeRemoteSnapshot } from '../../src/collector/remote-objects/materialize.js';
import { materializeSnapshot } from '../../src/collector/snapshot.js';
import { BATCH_COUNT_BYTES, FRAME_HEADER_BYTES, REMOTE_LIMITS } from '../../src/contracts/collector/object-batch.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { BATCH_BODY_MAX_BYTES } from '../../src/hub/routes/objects.js';
import { startHub } from '../../src/hub/server.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { revokeGrantInStore } from '../../src/native/grants.js';
import { withStore } from '../../src/tasks/store.js';
import { tempDir } from '../helpers/tmp.js';
import { asyncCodeOf } from '../support/evidence-collect.js';
import { claim, makeEvidence } from '../support/evidence.js';
import { errorCode, httpCall, hubOver, tasksPath } from '../support/hub.js';
import { cacheEntries, clientOf, remoteSetup, startProxy, type RemoteSetup } from './support.js';

const DIGEST = 'ab'.repeat(32);

/** Every path below `root` with its kind, mode and content (or link target). */
function listing(root: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, prefix)).sort()) {
    const path = prefix === '' ? name : `${prefix}/${name}`;
    const stat = lstatSync(join(root, path));
    if (stat.isDirectory()) out.push(`${path}/ ${(stat.mode & 0o777).toString(8)}`, ...listing(root, path));
    else if (stat.isSymbolicLink()) out.push(`${path} -> ${readlinkSync(join(root, path))}`);
    else out.push(`${path} ${(stat.mode & 0o777).toString(8)} ${sha256Hex(readFileSync(join(root, path)))}`);
  }
  return out;
}

function localSnapshot(setup: RemoteSetup, parent: string): string {
  return withStore(setup.ev.store.dataDir, 'read', (store) =>
    materializeSnapshot(store.authority(), {
      repository: setup.descriptor.repository_id,
      revision: setup.descriptor.subject.revision,
      parent,
      digest: 'c'.repeat(64),
    }),
  ).path;
}

function objectsPath(setup: RemoteSetup, rest: string): string {
  return `${tasksPath()}/objects/${setup.descriptor.attempt.attempt_id}/${rest}`;
}

test('a claimed revision fetched from the hub materializes exactly as from the local store', async (t) => {
  const setup = await remoteSetup(t);
  const { client, cache } = clientOf(setup);
  const dir = tempDir(t);
  const remote = await materializeRemoteSnapshot(client, cache, {
    revision: setup.descriptor.subject.revision,
    parent: join(dir, 'remote'),
    digest: 'd'.repeat(64),
  });
  assert.deepEqual(listing(remote.path), listing(localSnapshot(setup, join(dir, 'local'))));
  assert.ok(remote.entries >= 4);
  const first = { ...client.stats };
  // The revision, one tree batch per level of the tree (the root, skills/, skills/check/), one
  // batch for every blob.
  assert.equal(first.requests, 1 + 3 + 1);
  assert.ok(cacheEntries(cache).every(([, , ok]) => ok));

  // The second fetch of the same revision asks for the revision object only: every tree and blob is cached.
  const again = clientOf(setup, setup.hubUrl, cache).client;
  await materializeRemoteSnapshot(again, cache, {
    revision: setup.descriptor.subject.revision,
    parent: join(dir, 'remote'),
    digest: 'e'.repeat(64),
  });
  assert.equal(again.stats.requests, 1);
  assert.ok(again.stats.bytes < 512, `${again.stats.bytes} bytes`);

  // A damaged cache entry is found on read, removed and fetched again.
  const [, blob] = cacheEntries(cache).find(([kind]) => kind === 'blobs') ?? [];
  assert.ok(blob !== undefined);
  writeFileSync(join(cache.dir, 'blobs', blob.slice(0, 2), blob), 'damaged');
  const third = clientOf(setup, setup.hubUrl, cache).client;
  const healed = await materializeRemoteSnapshot(third, cache, {
    revision: setup.descriptor.subject.revision,
    parent: join(dir, 'remote'),
    digest: 'f'.repeat(64),
  });
  assert.equal(third.stats.objects, 1);
  assert.deepEqual(listing(healed.path), listing(remote.path));
  assert.ok(cacheEntries(cache).every(([, , ok]) => ok));
});

test('the hub serves only objects of a live claim of the calling grant', async (t) => {
  const setup = await remoteSetup(t);
  const token = setup.token;
  const unreachable = await httpCall(setup.hubUrl, 'GET', objectsPath(setup, `trees/${DIGEST}`), { token });
  assert.equal(errorCode(unreachable), 'REMOTE_OBJECT_NOT_REACHABLE');
  const blob = await httpCall(setup.hubUrl, 'GET', objectsPath(setup, `blobs/${DIGEST}`), { token });
  assert.equal(errorCode(blob), 'REMOTE_OBJECT_NOT_REACHABLE');
  const other = await httpCall(setup.hubUrl, 'GET', `${tasksPath()}/objects/attempt-other/revision`, { token });
  assert.equal(errorCode(other), 'REMOTE_CLAIM_NOT_HELD');
  const anonymous = await httpCall(setup.hubUrl, 'GET', objectsPath(setup, 'revision'));
  assert.equal(anonymous.status, 401);

  // The batch bound: maxBatchDigests digests are read (and refused as unreachable), one more is refused by size.
  const atBound = await httpCall(setup.hubUrl, 'POST', objectsPath(setup, 'blobs'), {
    token,
    body: Buffer.alloc(REMOTE_LIMITS.maxBatchDigests * 32, 0xab),
  });
  assert.equal(errorCode(atBound), 'REMOTE_OBJECT_NOT_REACHABLE');
  const past = await httpCall(setup.hubUrl, 'POST', objectsPath(setup, 'blobs'), {
    token,
    body: Buffer.alloc(BATCH_BODY_MAX_BYTES + 32, 0xab),
  });
  assert.equal(past.status, 413);
  const ragged = await httpCall(setup.hubUrl, 'POST', objectsPath(setup, 'blobs'), { token, body: Buffer.alloc(33) });
  assert.equal(errorCode(ragged), 'REMOTE_BATCH_INVALID');

  // Revoked between two requests: the next one is refused.
  const { client } = clientOf(setup);
  await client.revisionTree(setup.descriptor.subject.revision);
  withStore(setup.ev.store.dataDir, 'write', (s) => revokeGrantInStore(s, setup.ev.grantId, Date.now()));
  const code = await asyncCodeOf(() => client.revisionTree(setup.descriptor.subject.revision));
  assert.match(code, /^GRANT_/);
});

test('a hub answer that differs from the digest asked for is refused and never cached', async (t) => {
  const cases: [string, (req: { method: string; path: string }, answer: Buffer) => Buffer | null][] = [
    [
      'one flipped byte in a blob',
      (req, answer) => {
        if (!req.path.endsWith('/blobs')) return null;
        const out = Buffer.from(answer);
        const at = out.byteLength - 1;
        out[at] = (out[at] ?? 0) ^ 1;
        return out;
      },
    ],
    [
      'a wrong tree',
      (req, answer) => (req.path.endsWith('/trees') ? Buffer.from(answer.toString().replace('a', 'b')) : null),
    ],
    [
      'a reordered batch',
      (req, answer) => {
        if (!req.path.endsWith('/blobs')) return null;
        // Swap the first two frames.
        const frames: Buffer[] = [];
        let at = BATCH_COUNT_BYTES;
        while (at < answer.byteLength) {
          const length = Number(answer.readBigUInt64BE(at + 32));
          frames.push(answer.subarray(at, at + FRAME_HEADER_BYTES + length));
          at += FRAME_HEADER_BYTES + length;
        }
        const [a, b, ...rest] = frames;
        return Buffer.concat([answer.subarray(0, BATCH_COUNT_BYTES), b as Buffer, a as Buffer, ...rest]);
      },
    ],
    [
      'a truncated batch',
      (req, answer) => {
        if (!req.path.endsWith('/blobs')) return null;
        const length = Number(answer.readBigUInt64BE(BATCH_COUNT_BYTES + 32));
        return answer.subarray(0, BATCH_COUNT_BYTES + FRAME_HEADER_BYTES + length);
      },
    ],
    [
      'a padded batch',
      (req, answer) => (req.path.endsWith('/blobs') ? Buffer.concat([answer, Buffer.from([0])]) : null),
    ],
  ];
  const setup = await remoteSetup(t);
  for (const [name, tamper] of cases) {
    const proxy = await startProxy(t, setup.hubUrl);
    proxy.tamper = tamper;
    const dir = tempDir(t);
    const { client, cache } = clientOf({ ...setup, stateDir: join(dir, 'state') }, proxy.url);
    const code = await asyncCodeOf(() =>
      materializeRemoteSnapshot(client, cache, {
        revision: setup.descriptor.subject.revision,
        parent: join(dir, 'snapshots'),
        digest: 'a'.repeat(64),
      }),
    );
    assert.equal(code, 'REMOTE_OBJECT_MISMATCH', name);
    assert.ok(
      cacheEntries(cache).every(([, , ok]) => ok),
      name,
    );
    assert.equal(existsSync(join(dir, 'snapshots')), false, `${name}: no snapshot was begun`);
  }
});

test('a connection cut mid-batch resumes with only the blobs still missing', async (t) => {
  const setup = await remoteSetup(t);
  const proxy = await startProxy(t, setup.hubUrl);
  let cuts = 0;
  proxy.tamper = (req) => {
    if (!req.path.endsWith('/blobs') || cuts > 0) return null;
    cuts += 1;
    return 'cut';
  };
  const { client, cache } = clientOf(setup, proxy.url);
  const dir = tempDir(t);
  const result = await materializeRemoteSnapshot(client, cache, {
    revision: setup.descriptor.subject.revision,
    parent: join(dir, 'snapshots'),
    digest: 'a'.repeat(64),
  });
  const batches = proxy.seen.filter((seen) => seen.path.endsWith('/blobs')).map((seen) => seen.body.byteLength / 32);
  assert.equal(batches.length, 2);
  const blobs = cacheEntries(cache).filter(([kind]) => kind === 'blobs').length;
  assert.equal(batches[0], blobs);
  assert.ok((batches[1] ?? 0) < blobs, `the second batch asks ${batches[1]} of ${blobs}`);
  assert.ok((batches[1] ?? 0) > 0);
  assert.deepEqual(listing(result.path), listing(localSnapshot(setup, join(dir, 'local'))));
});

test('a hub restarted mid-fetch: refused while it is down, the fetch completes from what is cached once it is back', async (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const { profile } = hubOver(ev.dir, ev.store);
  let hub = await startHub({ host: '127.0.0.1', port: 0, profiles: [profile] }, { accessLog: () => undefined });
  const port = Number(new URL(hub.url).port);
  const setup: RemoteSetup = {
    ev,
    descriptor,
    hubUrl: hub.url,
    token: readTokenFile(ev.tokenFile),
    stateDir: join(tempDir(t), 'state'),
  };
  const { client, cache } = clientOf(setup);
  const root = await client.revisionTree(descriptor.subject.revision);
  await client.trees([root]);
  await hub.close();
  assert.equal(await asyncCodeOf(() => client.revisionTree(descriptor.subject.revision)), 'REMOTE_HUB_UNAVAILABLE');
  hub = await startHub({ host: '127.0.0.1', port, profiles: [profile] }, { accessLog: () => undefined });
  t.after(() => hub.close());
  const before = client.stats.objects;
  const result = await materializeRemoteSnapshot(client, cache, {
    revision: descriptor.subject.revision,
    parent: join(tempDir(t), 'snapshots'),
    digest: 'a'.repeat(64),
  });
  // The root tree came before the restart and is not fetched again.
  assert.equal(client.stats.objects - before, cacheEntries(cache).length - 1);
  assert.ok(result.entries >= 4);
});
