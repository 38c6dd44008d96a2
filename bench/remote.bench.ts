/**
 * Remote collection benchmark (issue 31 "Benchmark"), `npm run bench -- remote`: a revision of
 * AGENTSCM_BENCH_REMOTE_FILES files (default 10,000) and AGENTSCM_BENCH_REMOTE_MB MiB (default 100)
 * materialized for a collector
 *   - from the local store (materializeSnapshot): the baseline;
 *   - from a real hub on loopback, with an empty object cache (every tree and blob fetched by
 *     digest, checked and cached, then the snapshot written from the cache);
 *   - the raw transfer of the same number of bytes over the same loopback, one plain HTTP answer;
 * target: the first fetch ≤ 1.5 × local + raw transfer. Then the next revision, one file changed,
 * claimed afresh and fetched with the cache of the first: the bytes transferred are printed
 * (target ≤ 64 KiB + the changed blob). Loopback, in process; the veth variant of the issue is the
 * namespace test's set-up (test/remote-collector/netns.test.ts). `node -e 0` is printed as the floor.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';

import { createSigningKey, loadSigningKey } from '../src/collector/key-store.js';
import { ObjectCache } from '../src/collector/remote-objects/cache.js';
import { ObjectClient } from '../src/collector/remote-objects/client.js';
import { materializeRemoteSnapshot } from '../src/collector/remote-objects/materialize.js';
import { materializeSnapshot, removeSnapshot } from '../src/collector/snapshot.js';
import type { CollectorDescriptor } from '../src/contracts/collector/descriptor.js';
import { encodeCanonical } from '../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../src/contracts/json/json-value.js';
import { startHub } from '../src/hub/server.js';
import { readTokenFile } from '../src/native/grant-token-file.js';
import { callWithTokenFile } from '../src/tasks/grant-guard.js';
import { openStore, withStore } from '../src/tasks/store.js';
import { ALICE, claim, enrollAndInstall, EVIDENCE_STEPS, type Evidence } from '../test/support/evidence.js';
import { makeGrant } from '../test/support/grants.js';
import { hubOver, tasksPath } from '../test/support/hub.js';
import { addRevision, checkpoint, defaultFiles, makeTaskStore, PROFILE } from '../test/support/tasks.js';
import { floorLine, nodeFloor } from './_floor.js';

const FILES = Number(process.env.AGENTSCM_BENCH_REMOTE_FILES ?? 10_000);
const MIB = Number(process.env.AGENTSCM_BENCH_REMOTE_MB ?? 100);
const ROUNDS = Number(process.env.AGENTSCM_BENCH_ROUNDS ?? 3);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function revisionFiles(seed: string): Record<string, Buffer> {
  const size = Math.floor((MIB * 1024 * 1024) / FILES);
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < FILES; i++) {
    const body = Buffer.alloc(size, i % 251);
    body.write(`${seed}-${i}`);
    files[`src/d${String(i % 100).padStart(2, '0')}/f${i}.txt`] = body;
  }
  return files;
}

async function rawTransfer(bytes: number): Promise<number> {
  const body = Buffer.alloc(bytes, 7);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': body.byteLength });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const start = performance.now();
    const response = await request(url);
    for await (const chunk of response.body) void chunk;
    return performance.now() - start;
  } finally {
    server.close();
  }
}

/** Untimed: reconcile the first claim's attempt (no transfer), so that the next subject may be claimed. */
function reconcile(ev: Evidence, d: CollectorDescriptor): void {
  const answer = callWithTokenFile({
    store: openStore(ev.store.dataDir, { mode: 'write' }),
    tokenFile: ev.tokenFile,
    operation: 'reconcile',
    input: encodeCanonical({
      version: 1,
      request_id: `bench-reconcile-${d.attempt.attempt_id}`,
      action: 'reconcile',
      task_id: d.task.task_id,
      task_digest: d.task.task_digest,
      attempt_id: d.attempt.attempt_id,
      attempt_digest: d.attempt.attempt_digest,
      execution_operation_id: d.attempt.execution_operation_id,
      agent: { ...ALICE },
      executor: { ...d.executor },
      fence: d.attempt.fence,
      reason: 'the bench fetched the revision only',
    }),
    profile: PROFILE,
    target: 'main',
  }) as JsonObject;
  if (answer.status !== 'reconciled') throw new Error(`reconcile answered ${JSON.stringify(answer.status ?? null)}`);
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-bench-remote-'));
  try {
    process.stderr.write(`building a revision of ${FILES} files, ${MIB} MiB\n`);
    const dataDir = join(dir, 'data');
    const files = { ...defaultFiles(), ...revisionFiles('a') };
    const store = makeTaskStore(dataDir, EVIDENCE_STEPS, files);
    const created = createSigningKey(join(dir, 'key'));
    const key = loadSigningKey(created.key_file);
    const { enrollment, profileId } = enrollAndInstall(store, key);
    const grant = makeGrant(dataDir, dir, ALICE);
    const ev: Evidence = {
      dir,
      store,
      key,
      enrollment,
      profileId,
      tokenFile: grant.token_file,
      grantId: grant.grant.grant_id,
    };
    const descriptor = claim(ev);
    const { profile } = hubOver(dir, store);
    const hub = await startHub({ host: '127.0.0.1', port: 0, profiles: [profile] }, { accessLog: () => undefined });
    const token = readTokenFile(ev.tokenFile);
    const endpoint = `${hub.url}${tasksPath()}`;
    const totalBytes = Object.values(files).reduce((sum, b) => sum + Buffer.byteLength(b), 0);
    try {
      const local: number[] = [];
      const remote: number[] = [];
      const raw: number[] = [];
      const floors: number[] = [];
      let fetched = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const parent = join(dir, `snap-${round}`);
        let start = performance.now();
        const made = withStore(dataDir, 'read', (s) =>
          materializeSnapshot(s.authority(), {
            repository: store.repository,
            revision: descriptor.subject.revision,
            parent,
            digest: 'a'.repeat(64),
          }),
        );
        local.push(performance.now() - start);
        removeSnapshot(made.path);
        const stateDir = join(dir, `state-${round}`);
        mkdirSync(stateDir, { mode: 0o700 });
        const cache = new ObjectCache(stateDir);
        const client = new ObjectClient({ endpoint, token, attemptId: descriptor.attempt.attempt_id, cache });
        start = performance.now();
        const fetchedSnap = await materializeRemoteSnapshot(client, cache, {
          revision: descriptor.subject.revision,
          parent,
          digest: 'b'.repeat(64),
        });
        remote.push(performance.now() - start);
        fetched = client.stats.bytes;
        removeSnapshot(fetchedSnap.path);
        if (round < ROUNDS - 1) rmSync(stateDir, { recursive: true, force: true });
        raw.push(await rawTransfer(totalBytes));
        floors.push(await nodeFloor());
        process.stderr.write(`round ${round + 1}/${ROUNDS}\n`);
      }
      const l = median(local);
      const r = median(remote);
      const t = median(raw);
      console.log(`revision: ${FILES} files, ${totalBytes} bytes; fetched ${fetched} bytes (loopback)`);
      console.log(`local materialize     ${l.toFixed(0)} ms`);
      console.log(`raw transfer          ${t.toFixed(0)} ms`);
      console.log(`remote first fetch    ${r.toFixed(0)} ms`);
      console.log(`remote / (1.5 × local + raw) = ${(r / (1.5 * l + t)).toFixed(2)} (target ≤ 1.00)`);

      // The next revision: one file changed, claimed afresh, fetched with the cache of the first.
      const changedPath = 'src/d00/f0.txt';
      const changed = Buffer.from(files[changedPath] as Buffer);
      changed.write('changed!');
      reconcile(ev, descriptor);
      const next = addRevision(dataDir, store.repository, { ...files, [changedPath]: changed }, store.revision);
      checkpoint(store, next);
      const second = claim(ev);
      const cache = new ObjectCache(join(dir, `state-${ROUNDS - 1}`));
      const client = new ObjectClient({ endpoint, token, attemptId: second.attempt.attempt_id, cache });
      await materializeRemoteSnapshot(client, cache, {
        revision: second.subject.revision,
        parent: join(dir, 'snap-next'),
        digest: 'c'.repeat(64),
      });
      const overhead = client.stats.bytes - changed.byteLength;
      console.log(
        `next revision, one file changed: ${client.stats.bytes} bytes in ${client.stats.requests} requests ` +
          `(${changed.byteLength} the changed blob, ${overhead} beyond it; target ≤ 65536)`,
      );
      console.log(floorLine(floors, { name: 'remote first fetch', ms: r }));
    } finally {
      await hub.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
