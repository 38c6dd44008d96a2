/**
 * The Stop hook's one request over node:http (docs/stop-hooks.md "Agent-owned mode" and
 * "Performance"), against real loopback servers: the time limit covers the body as well as the
 * head, and the connection is the call's own — closed when the call ends, never kept alive.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import test, { type TestContext } from 'node:test';

import { isAgentscmError } from '../../src/contracts/errors.js';
import { requestQualification } from '../../src/hooks/qualification-client.js';

async function listen(t: TestContext, server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const REQUEST = {
  repository: 'acme/widgets',
  profile: 'default',
  token: 't'.repeat(43),
  subject: { change_id: 'c1', context_digest: 'a'.repeat(64) },
};

test('a body that stops half-way is a failed request at the time limit, and the connection is closed', async (t) => {
  let socket: Socket | undefined;
  const server = createServer((_req, res) => {
    socket = res.socket ?? undefined;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"capability":');
  });
  const endpoint = await listen(t, server);
  const started = Date.now();
  await assert.rejects(
    requestQualification({ ...REQUEST, endpoint, timeoutMs: 400 }),
    (error: unknown) => isAgentscmError(error) && error.code === 'HOOK_QUALIFICATION_FAILED',
  );
  const elapsed = Date.now() - started;
  assert.ok(elapsed >= 350 && elapsed < 10_000, `ended at the limit (${elapsed} ms)`);
  assert.ok(socket !== undefined);
  const open = socket;
  await new Promise<void>((resolve) => (open.destroyed ? resolve() : open.once('close', () => resolve())));
});

test('the request asks for no keep-alive and the server sees its connection end after the answer', async (t) => {
  const seen: { connection: string | undefined; authorization: string | undefined; body: string }[] = [];
  let closed = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ connection: req.headers.connection, authorization: req.headers.authorization, body });
      res.writeHead(503).end();
    });
  });
  server.on('connection', (socket: Socket) => socket.on('close', () => closed++));
  const endpoint = await listen(t, server);
  await assert.rejects(
    requestQualification({ ...REQUEST, endpoint }),
    (error: unknown) => isAgentscmError(error) && error.code === 'HOOK_QUALIFICATION_FAILED',
  );
  await new Promise<void>((resolve) => {
    const wait = (): void => void (closed === 1 ? resolve() : setTimeout(wait, 10));
    wait();
  });
  assert.deepEqual(seen, [
    {
      connection: 'close',
      authorization: `Bearer ${REQUEST.token}`,
      body: JSON.stringify({ operation: 'qualification', input: null, subject: REQUEST.subject }),
    },
  ]);
});
