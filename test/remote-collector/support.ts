/**
 * What the remote collector tests share: a real collector claim served by a real hub on
 * loopback, a collector state directory with its object cache, and a proxy in front of the hub
 * that can change what the hub answers (the transport is never trusted).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { ObjectCache, objectDigest, type ObjectKind } from '../../src/collector/remote-objects/cache.js';
import { ObjectClient } from '../../src/collector/remote-objects/client.js';
import type { CollectorDescriptor } from '../../src/contracts/collector/descriptor.js';
import { startHub } from '../../src/hub/server.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { tempDir } from '../helpers/tmp.js';
import { claim, makeEvidence, type Evidence } from '../support/evidence.js';
import { hubOver, tasksPath } from '../support/hub.js';

export interface RemoteSetup {
  readonly ev: Evidence;
  readonly descriptor: CollectorDescriptor;
  readonly hubUrl: string;
  readonly token: string;
  readonly stateDir: string;
}

/** A real claim and a real hub serving it on loopback (closed after the test). */
export async function remoteSetup(t: TestContext): Promise<RemoteSetup> {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const { profile } = hubOver(ev.dir, ev.store);
  const hub = await startHub({ host: '127.0.0.1', port: 0, profiles: [profile] }, { accessLog: () => undefined });
  t.after(() => hub.close());
  return { ev, descriptor, hubUrl: hub.url, token: readTokenFile(ev.tokenFile), stateDir: join(tempDir(t), 'state') };
}

export function clientOf(
  setup: RemoteSetup,
  baseUrl = setup.hubUrl,
  cache = new ObjectCache(setup.stateDir),
): { client: ObjectClient; cache: ObjectCache } {
  const client = new ObjectClient({
    endpoint: `${baseUrl}${tasksPath()}`,
    token: setup.token,
    attemptId: setup.descriptor.attempt.attempt_id,
    cache,
  });
  return { client, cache };
}

/** Every entry of the object cache: [kind, name, whether its bytes still match its name]. */
export function cacheEntries(cache: ObjectCache): [ObjectKind, string, boolean][] {
  const out: [ObjectKind, string, boolean][] = [];
  for (const kind of ['trees', 'blobs'] as const) {
    let prefixes: string[];
    try {
      prefixes = readdirSync(join(cache.dir, kind));
    } catch {
      continue;
    }
    for (const prefix of prefixes)
      for (const name of readdirSync(join(cache.dir, kind, prefix))) {
        const bytes = readFileSync(join(cache.dir, kind, prefix, name));
        out.push([kind, name, objectDigest(kind, bytes) === name]);
      }
  }
  return out.sort();
}

/** What the proxy does with one answer of the hub: the bytes to send instead, or 'cut' the connection midway. */
export type Tamper = (req: { method: string; path: string; body: Buffer }, answer: Buffer) => Buffer | 'cut' | null;

export interface Proxy {
  readonly url: string;
  /** Each request the proxy forwarded: method, path and the bytes of its body. */
  readonly seen: { method: string; path: string; body: Buffer }[];
  tamper: Tamper;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** A loopback proxy in front of the hub whose answers `tamper` may change. */
export async function startProxy(t: TestContext, target: string): Promise<Proxy> {
  const proxy: Proxy = { url: '', seen: [], tamper: () => null };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const seen = { method: req.method ?? 'GET', path: req.url ?? '/', body };
      proxy.seen.push(seen);
      const upstream = new URL(seen.path, target);
      const answer = await new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>(
        (resolve, reject) => {
          const out = httpRequest(
            upstream,
            { method: seen.method, headers: { ...req.headers, host: upstream.host } },
            (reply) => {
              void readAll(reply).then(
                (bytes) =>
                  resolve({
                    status: reply.statusCode ?? 502,
                    headers: { 'content-type': String(reply.headers['content-type'] ?? '') },
                    body: bytes,
                  }),
                reject,
              );
            },
          );
          out.on('error', reject);
          out.end(body);
        },
      );
      const changed = answer.status === 200 ? proxy.tamper(seen, answer.body) : null;
      if (changed === 'cut') {
        res.writeHead(200, { ...answer.headers, 'content-length': answer.body.byteLength });
        res.write(answer.body.subarray(0, Math.floor(answer.body.byteLength / 2)));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      const bytes = changed ?? answer.body;
      res.writeHead(answer.status, { ...answer.headers, 'content-length': bytes.byteLength });
      res.end(bytes);
    })().catch(() => res.socket?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.after(() => server.closeAllConnections());
  (proxy as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
