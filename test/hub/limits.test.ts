/**
 * The hub's bounds against hostile clients (docs/hub.md "Bounds"): an oversize body is refused
 * before it is buffered — from its Content-Length, or at the chunk that crosses 512 KiB while
 * streaming — with memory flat, and slow-loris clients (headers or body trickled) are cut by the
 * header and request timeouts without delaying anyone else.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import test from 'node:test';

import { grantFor, httpCall, hubStore, startTestHub, tasksPath } from '../support/hub.js';

function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Everything the server sends until it closes the connection, and when it closed. */
function untilClosed(socket: Socket): Promise<{ text: string; closedAt: number }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), closedAt: Date.now() }));
  });
}

test(
  'a declared Content-Length over 512 KiB is refused with 413 before a byte of body is sent',
  { timeout: 20_000 },
  async (t) => {
    const hub = hubStore(t);
    const alice = grantFor(hub, 'alice', 'a1');
    const running = await startTestHub(t, hub);
    const socket = await openSocket(running.url);
    const closed = untilClosed(socket);
    socket.write(
      `POST ${tasksPath()} HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`,
    );
    const { text } = await closed;
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.match(text, /"code":"HUB_BODY_TOO_LARGE"/);
    assert.match(text, /connection: close/i);
    // Exactly 512 KiB is accepted as far as the bound goes (then refused by the operation's own decoder).
    const atBound = await httpCall(running.url, 'POST', tasksPath(), {
      token: alice.token,
      body: `{"operation":"capabilities","input":null,"x":"${'y'.repeat(512 * 1024 - 50)}"}`.padEnd(512 * 1024, ' '),
    });
    assert.equal(atBound.status, 400, atBound.text);
  },
);

test(
  'a streamed body is cut at the chunk that crosses 512 KiB: 413, the connection closed, memory flat',
  { timeout: 60_000 },
  async (t) => {
    const hub = hubStore(t);
    const alice = grantFor(hub, 'alice', 'a1');
    const running = await startTestHub(t, hub);
    const before = process.memoryUsage();
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let written = 0;
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        new URL(tasksPath(), running.url),
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${alice.token}`,
            'content-type': 'application/json',
            'transfer-encoding': 'chunked',
          },
          agent: false,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', (error) => (written > 0 ? undefined : reject(error)));
      const pump = (): void => {
        // Up to 256 MiB offered, written only as the socket drains.
        while (written < 256 * 1024 * 1024 && !req.destroyed) {
          written += chunk.byteLength;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    assert.equal(status, 413);
    const after = process.memoryUsage();
    assert.ok(written < 64 * 1024 * 1024, `the client could write ${written} bytes`);
    assert.ok(
      after.arrayBuffers - before.arrayBuffers < 32 * 1024 * 1024,
      `arrayBuffers grew by ${after.arrayBuffers - before.arrayBuffers}`,
    );
    assert.ok(after.rss - before.rss < 96 * 1024 * 1024, `rss grew by ${after.rss - before.rss}`);
    const entry = JSON.parse(running.log.at(-1) ?? '{}') as { status: number; code: string };
    assert.deepEqual([entry.status, entry.code], [413, 'HUB_BODY_TOO_LARGE']);
  },
);

test(
  'slow-loris clients are cut by the header and request timeouts and never delay others',
  { timeout: 20_000 },
  async (t) => {
    const hub = hubStore(t);
    const alice = grantFor(hub, 'alice', 'a1');
    const running = await startTestHub(t, hub, { headersTimeoutMs: 400, requestTimeoutMs: 800 });
    const started = Date.now();
    const slowHeaders = await Promise.all(Array.from({ length: 16 }, () => openSocket(running.url)));
    const headerClosings = slowHeaders.map((socket) => untilClosed(socket));
    const timers: NodeJS.Timeout[] = [];
    for (const socket of slowHeaders) {
      socket.write(`POST ${tasksPath()} HTTP/1.1\r\nHost: hub\r\n`);
      // One header byte every 50 ms, never finishing the header block.
      timers.push(setInterval(() => socket.writable && socket.write('X'), 50));
    }
    const slowBody = await openSocket(running.url);
    const bodyClosing = untilClosed(slowBody);
    slowBody.write(
      `POST ${tasksPath()} HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"oper`,
    );
    t.after(() => {
      for (const timer of timers) clearInterval(timer);
    });
    // Meanwhile ordinary clients are served at once.
    for (let i = 0; i < 5; i += 1) {
      const begun = Date.now();
      const health = await httpCall(running.url, 'GET', '/v1/hub/health');
      assert.equal(health.status, 200);
      assert.ok(Date.now() - begun < 300, `health took ${Date.now() - begun} ms`);
      const capabilities = await httpCall(running.url, 'POST', tasksPath(), {
        token: alice.token,
        body: '{"operation":"capabilities","input":null}',
      });
      assert.equal(capabilities.status, 200);
    }
    const closings = await Promise.all(headerClosings);
    for (const { closedAt } of closings)
      assert.ok(closedAt - started < 2_000, `a slow header client was held ${closedAt - started} ms`);
    const body = await bodyClosing;
    assert.ok(body.closedAt - started < 3_000, `the slow body client was held ${body.closedAt - started} ms`);
    assert.match(body.text, /^HTTP\/1\.1 408 /);
  },
);
