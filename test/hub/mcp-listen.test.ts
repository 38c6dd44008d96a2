/**
 * MCP answers that must not wait (docs/hub.md "MCP", issue #25 item 17): the hub advertises only
 * what it does (no `tools.listChanged: true`), so `subscriptions/listen` — what a 2026-era client
 * sends at session start — gets its complete answer at once; a method the hub does not serve is
 * answered at once with JSON-RPC "method not found"; the SDK's answers are streamed through
 * headers first, and the access log records the status actually sent.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { sendWebResponse } from '../../src/hub/web-response.js';
import { grantFor, hubStore, REPOSITORY_ID, startTestHub } from '../support/hub.js';

const MODERN = '2026-07-28';
const WORKSPACE = `/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=default`;

/** One raw JSON-RPC request of the 2026-07-28 era, as the official client frames it. */
function modernRequest(
  id: string,
  method: string,
  params: Record<string, unknown> = {},
): { headers: Record<string, string>; body: string } {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return {
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-method': method,
      'mcp-protocol-version': MODERN,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }),
  };
}

/** POST it with a 2 s client timeout; the whole answer (the body must end), or the timeout's error. */
async function postWithin2s(
  url: string,
  token: string,
  request: { headers: Record<string, string>; body: string },
): Promise<{ status: number; type: string; text: string; ms: number }> {
  const started = Date.now();
  const response = await fetch(new URL(WORKSPACE, url), {
    method: 'POST',
    headers: { ...request.headers, authorization: `Bearer ${token}` },
    body: request.body,
    signal: AbortSignal.timeout(2_000),
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', text, ms: Date.now() - started };
}

/** The JSON-RPC messages of an answer, SSE (`data:` lines) or plain JSON. */
function messagesOf(answer: { type: string; text: string }): Record<string, unknown>[] {
  if (answer.type.startsWith('text/event-stream')) {
    return answer.text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
  }
  return [JSON.parse(answer.text) as Record<string, unknown>];
}

test(
  'subscriptions/listen is answered completely at once; nothing advertises tools.listChanged; an unknown method is method-not-found at once',
  { timeout: 60_000 },
  async (t) => {
    const hub = hubStore(t);
    const alice = grantFor(hub, 'alice', 'a1');
    const running = await startTestHub(t, hub);

    // The official client, both eras: tools only, listChanged not claimed.
    for (const era of ['modern', 'legacy'] as const) {
      const client = new Client(
        { name: 'listen-test', version: '1' },
        era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {},
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(WORKSPACE, running.url), {
          requestInit: { headers: { authorization: `Bearer ${alice.token}` } },
        }),
      );
      t.after(() => client.close());
      const capabilities = client.getServerCapabilities();
      assert.ok(capabilities?.tools !== undefined, `${era}: ${JSON.stringify(capabilities)}`);
      assert.notEqual(capabilities.tools.listChanged, true, `${era}: ${JSON.stringify(capabilities)}`);
      assert.ok((await client.listTools()).tools.length > 10);
    }

    // What Claude Code sends at session start: a listen for tool-list changes. It gets the SDK's
    // acknowledgement (nothing honoured) and the complete result, and the stream ends.
    const listen = await postWithin2s(
      running.url,
      alice.token,
      modernRequest('listen-1', 'subscriptions/listen', { notifications: { toolsListChanged: true } }),
    );
    assert.equal(listen.status, 200, listen.text);
    assert.ok(listen.ms < 2_000, `listen took ${listen.ms} ms`);
    const messages = messagesOf(listen);
    const ack = messages.find((message) => message.method === 'notifications/subscriptions/acknowledged') as
      { params: { notifications: unknown } } | undefined;
    assert.deepEqual(ack?.params.notifications, {});
    const done = messages.find((message) => message.id === 'listen-1') as
      { result?: { resultType?: string } } | undefined;
    assert.equal(done?.result?.resultType, 'complete', listen.text);

    // A method the hub does not serve: JSON-RPC method not found, at once.
    const prompts = await postWithin2s(running.url, alice.token, modernRequest('p-1', 'prompts/list'));
    assert.ok(prompts.ms < 2_000);
    const [promptsAnswer] = messagesOf(prompts) as { error?: { code: number } }[];
    assert.equal(promptsAnswer?.error?.code, -32601, prompts.text);

    // The access log holds the status each answer was sent with.
    const entries = running.log.map((line) => JSON.parse(line) as { route: string; status: number | null });
    const mcpEntries = entries.filter((entry) => entry.route === 'workspace-mcp');
    assert.ok(mcpEntries.length >= 6, JSON.stringify(entries));
    assert.equal(mcpEntries.at(-2)?.status, 200);
    assert.equal(mcpEntries.at(-1)?.status, prompts.status);
  },
);

test(
  'a web answer is streamed through headers first, and cancelled when the client goes away',
  { timeout: 20_000 },
  async (t) => {
    let cancelled = false;
    const server = createServer((_req, res) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          // One event, then the stream stays open (as an SSE answer may).
          controller.enqueue(new TextEncoder().encode('event: message\ndata: {"first":true}\n\n'));
        },
        cancel() {
          cancelled = true;
        },
      });
      void sendWebResponse(
        res,
        new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', connection: 'keep-alive' } }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const { port } = server.address() as AddressInfo;
    const started = Date.now();
    const first = await new Promise<{ status: number; type: string | undefined; chunk: string; close: () => void }>(
      (resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: '/', agent: false }, (res) => {
          res.once('data', (chunk: Buffer) =>
            resolve({
              status: res.statusCode ?? 0,
              type: res.headers['content-type'],
              chunk: chunk.toString('utf8'),
              close: () => req.destroy(),
            }),
          );
        });
        req.on('error', reject);
        req.setTimeout(2_000, () => reject(new Error('no header or first event within 2 s')));
        req.end();
      },
    );
    assert.ok(Date.now() - started < 2_000);
    assert.deepEqual([first.status, first.type], [200, 'text/event-stream']);
    assert.match(first.chunk, /"first":true/);
    first.close();
    const deadline = Date.now() + 2_000;
    while (!cancelled && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(cancelled, true, 'the web stream was not cancelled after the client went away');
  },
);
