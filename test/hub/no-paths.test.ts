/**
 * No network-facing answer of the hub names a filesystem path (issue #25 item 5; docs/hub.md
 * "What an answer never says"): every route's refusals — health, the dashboard's JSON routes, both
 * MCP endpoints, the agent-tasks and upload routes, an unknown route — with a bogus token, with no
 * token and with a valid one, first with the store in place and then with the store gone from its
 * data directory. A caller that is not authenticated learns nothing about the store; the detail
 * goes to the hub's log.
 */
import assert from 'node:assert/strict';
import { realpathSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { grantFor, httpCall, hubStore, startTestHub, tasksPath, type HttpAnswer } from '../support/hub.js';
import { PROFILE } from '../support/tasks.js';

const BOGUS = `agentscm_${'Q'.repeat(43)}`;
const MCP_INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

type Route = readonly [name: string, call: (url: string, token: string | undefined) => Promise<HttpAnswer>];

const ROUTES: readonly Route[] = [
  ['health', (url) => httpCall(url, 'GET', '/v1/hub/health')],
  ['ui-api profiles', (url, token) => httpCall(url, 'GET', '/v1/hub/ui-api/profiles', { token })],
  [
    'ui-api changes',
    (url, token) =>
      httpCall(url, 'GET', `/v1/hub/ui-api/repositories/acme/widgets/profiles/${PROFILE}/changes`, { token }),
  ],
  [
    'ui-api receipts of an unknown profile',
    (url, token) => httpCall(url, 'GET', '/v1/hub/ui-api/repositories/acme/widgets/profiles/nope/receipts', { token }),
  ],
  [
    'agent-tasks',
    (url, token) => httpCall(url, 'POST', tasksPath(), { token, body: '{"operation":"capabilities","input":null}' }),
  ],
  [
    'collector-upload',
    (url, token) =>
      httpCall(url, 'POST', `${tasksPath()}/collector-upload`, {
        token,
        body: Buffer.from('AGSCMTR1garbage'),
        headers: { 'content-type': 'application/octet-stream' },
      }),
  ],
  [
    'workspace mcp',
    (url, token) =>
      httpCall(url, 'POST', `/v1/hub/workspace/mcp?repository=acme%2Fwidgets&profile=${PROFILE}`, {
        token,
        body: MCP_INIT,
        headers: MCP_HEADERS,
      }),
  ],
  ['legacy mcp', (url, token) => httpCall(url, 'POST', '/mcp', { token, body: MCP_INIT, headers: MCP_HEADERS })],
  ['unknown route', (url, token) => httpCall(url, 'GET', '/v1/hub/nothing/here', { token })],
];

test(
  'no route answers a filesystem path, with the store in place or gone, to a bogus, missing or valid token',
  { timeout: 120_000 },
  async (t) => {
    const hub = hubStore(t);
    const alice = grantFor(hub, 'alice', 'a1');
    const reader = grantFor(hub, 'olivia', 'dash', 'reader');
    const running = await startTestHub(t, hub);
    const secrets = [...new Set([hub.store.dataDir, realpathSync(hub.store.dataDir), hub.dir, realpathSync(hub.dir)])];
    const check = (phase: string, name: string, answer: HttpAnswer): void => {
      const seen = `${answer.text} ${JSON.stringify(answer.headers)}`;
      for (const secret of secrets)
        assert.ok(
          !seen.includes(secret),
          `${phase}, ${name}: the answer names ${secret}: ${answer.status} ${answer.text.slice(0, 400)}`,
        );
      assert.doesNotMatch(
        answer.text,
        /\/(tmp|home|srv|var|Users)\//,
        `${phase}, ${name}: ${answer.text.slice(0, 400)}`,
      );
    };

    const statuses: Record<string, number> = {};
    for (const [token, label] of [
      [BOGUS, 'bogus token'],
      [undefined, 'no token'],
      [alice.token, 'agent token'],
      [reader.token, 'reader token'],
    ] as const) {
      for (const [name, call] of ROUTES) check(`store in place, ${label}`, name, await call(running.url, token));
    }

    // The store leaves its data directory while the hub runs.
    renameSync(join(hub.store.dataDir, 'native'), join(hub.dir, 'moved-native'));
    for (const [token, label] of [
      [BOGUS, 'bogus token'],
      [undefined, 'no token'],
      [alice.token, 'agent token'],
      [reader.token, 'reader token'],
    ] as const) {
      for (const [name, call] of ROUTES) {
        const answer = await call(running.url, token);
        check(`store gone, ${label}`, name, answer);
        statuses[`${label} ${name}`] = answer.status;
        if (label === 'bogus token' && name.startsWith('ui-api')) {
          // The token cannot be checked without the store: a 503 that says nothing of the store.
          assert.equal(answer.status, 503, answer.text);
          assert.equal((answer.json.error as { code: string }).code, 'HUB_PROFILE_UNAVAILABLE');
        }
      }
    }
    const health = await httpCall(running.url, 'GET', '/v1/hub/health');
    assert.equal(health.status, 503);
    assert.deepEqual(Object.keys(health.json.error as object).sort(), ['code', 'message']);
    // The operator finds the detail, path included, in the hub's log.
    assert.ok(
      running.log.some((line) => line.includes('"event":"refusal_detail"') && line.includes(hub.store.dataDir)),
      running.log.slice(-5).join('\n'),
    );
    // Without a token every route but health refuses before anything else (401).
    for (const [name] of ROUTES.filter(([name]) => name !== 'health' && name !== 'unknown route'))
      assert.equal(statuses[`no token ${name}`], 401, name);
  },
);
