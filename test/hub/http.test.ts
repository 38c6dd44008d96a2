/**
 * The hub's HTTP routes over a real loopback port against real stores (docs/hub.md): the task
 * cycle through the agent-tasks route, every error status of docs/wire.md "Hub" with its code, the
 * storage-only health route, revocation on the very next request, and an access log that never
 * holds a token or a body.
 */
import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import {
  errorCode,
  grantFor,
  httpCall,
  hubStore,
  postTask,
  resultOf,
  revoke,
  rotate,
  startTestHub,
  subjectOf,
  tasksPath,
  type HttpAnswer,
} from '../support/hub.js';
import {
  assertionRequest,
  claimedOf,
  claimRequest,
  mutationRequest,
  recoveryRequest,
  statusRequest,
  taskRef,
} from '../support/task-requests.js';
import { installRequirement } from '../support/tasks.js';

test('the agent-tasks route runs the task cycle through the facade and wraps each answer', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const capabilities = await postTask(running.url, alice.token, 'capabilities', null);
  assert.equal(capabilities.status, 200);
  assert.equal(capabilities.json.capability, 'agentscm.agent-workflow-tasks/v1');
  assert.equal(capabilities.json.schema_version, 1);
  assert.deepEqual((resultOf(capabilities).operations as string[]).includes('claim'), true);
  const requirements = resultOf(await postTask(running.url, alice.token, 'requirements', null, subjectOf(hub)));
  const lint = taskRef(requirements as unknown as JsonObject, 'lint');
  const next = resultOf(await postTask(running.url, alice.token, 'next', null, subjectOf(hub)));
  assert.equal((next.next as { operation: string }).operation, 'claim');
  const claimed = claimedOf(
    resultOf(
      await postTask(
        running.url,
        alice.token,
        'claim',
        claimRequest(alice.actor, lint, 'r-claim', 'e-1'),
        subjectOf(hub),
      ),
    ) as unknown as JsonObject,
  );
  assert.equal(claimed.fence, 1n);
  resultOf(
    await postTask(running.url, alice.token, 'heartbeat', mutationRequest(alice.actor, claimed, 'heartbeat', 'r-hb')),
  );
  resultOf(
    await postTask(running.url, alice.token, 'result', assertionRequest(alice.actor, claimed, 'r-result', 'failed')),
  );
  const status = resultOf(await postTask(running.url, alice.token, 'status', statusRequest(claimed)));
  assert.equal(status.state, 'finished');
  const recovered = resultOf(
    await postTask(
      running.url,
      alice.token,
      'recovery',
      recoveryRequest('claim', claimRequest(alice.actor, lint, 'r-claim', 'e-1')),
    ),
  );
  assert.equal(typeof recovered, 'object');
  // The access log: one line per request, method/route/status/code/timing, never the token or a body.
  assert.equal(running.log.length, 8);
  for (const line of running.log) {
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.deepEqual(Object.keys(entry).sort(), ['code', 'duration_ms', 'method', 'remote', 'route', 'status', 'time']);
    assert.equal(entry.route, 'agent-tasks');
    assert.ok(!line.includes(alice.token) && !line.includes('agentscm_') && !line.includes('r-claim'), line);
  }
});

test('every error status of the hub with its code', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const bob = grantFor(hub, 'bob', 'b1');
  const reader = grantFor(hub, 'carol', 'c1', 'reader');
  const running = await startTestHub(t, hub);
  const requirements = resultOf(await postTask(running.url, alice.token, 'requirements', null, subjectOf(hub)));
  const lint = taskRef(requirements as unknown as JsonObject, 'lint');
  resultOf(
    await postTask(running.url, alice.token, 'claim', claimRequest(alice.actor, lint, 'r-1', 'e-1'), subjectOf(hub)),
  );

  const cases: [string, Promise<HttpAnswer>, number, string][] = [
    [
      'no Authorization header',
      httpCall(running.url, 'POST', tasksPath(), { body: '{"operation":"capabilities","input":null}' }),
      401,
      'HUB_AUTH_REQUIRED',
    ],
    [
      'not a Bearer header',
      httpCall(running.url, 'POST', tasksPath(), { body: '{}', headers: { authorization: `Basic ${alice.token}` } }),
      401,
      'HUB_AUTH_REQUIRED',
    ],
    [
      'a token of no grant',
      postTask(running.url, `agentscm_${'A'.repeat(43)}`, 'capabilities', null),
      401,
      'GRANT_TOKEN_REJECTED',
    ],
    [
      'a reader grant on the task route',
      postTask(running.url, reader.token, 'capabilities', null),
      403,
      'TASK_NOT_AUTHORIZED',
    ],
    [
      'an agent grant on the legacy endpoint',
      httpCall(running.url, 'POST', '/mcp', { token: alice.token, body: '{}' }),
      403,
      'HUB_GRANT_SCOPE_MISMATCH',
    ],
    [
      'another actor in the request',
      postTask(running.url, bob.token, 'claim', claimRequest(alice.actor, lint, 'r-2', 'e-2')),
      403,
      'TASK_ACTOR_MISMATCH',
    ],
    [
      'an unknown route',
      httpCall(running.url, 'POST', '/v1/hub/nothing', { token: alice.token, body: '{}' }),
      404,
      'HUB_ROUTE_NOT_FOUND',
    ],
    [
      'GET on the task route',
      httpCall(running.url, 'GET', tasksPath(), { token: alice.token }),
      404,
      'HUB_ROUTE_NOT_FOUND',
    ],
    [
      'an unknown profile',
      postTask(running.url, alice.token, 'capabilities', null, undefined, tasksPath('acme/widgets', 'nope')),
      404,
      'HUB_PROFILE_NOT_FOUND',
    ],
    [
      'an unknown repository',
      postTask(running.url, alice.token, 'capabilities', null, undefined, tasksPath('acme/other')),
      404,
      'HUB_PROFILE_NOT_FOUND',
    ],
    [
      'malformed JSON',
      httpCall(running.url, 'POST', tasksPath(), { token: alice.token, body: '{"operation":' }),
      400,
      'JSON_SYNTAX',
    ],
    [
      'a duplicate key',
      httpCall(running.url, 'POST', tasksPath(), {
        token: alice.token,
        body: '{"operation":"next","operation":"next","input":null}',
      }),
      400,
      'JSON_DUPLICATE_KEY',
    ],
    [
      'an unknown envelope field',
      httpCall(running.url, 'POST', tasksPath(), {
        token: alice.token,
        body: '{"operation":"next","input":null,"actor":"bob/b1"}',
      }),
      400,
      'SCHEMA_UNKNOWN_FIELD',
    ],
    ['an unknown operation', postTask(running.url, alice.token, 'launch', null), 400, 'TASK_OPERATION_UNKNOWN'],
    ['an input for next', postTask(running.url, alice.token, 'next', { change_id: 'x' }), 400, 'USAGE'],
    ['an input that is not an object', postTask(running.url, alice.token, 'claim', [1]), 400, 'SCHEMA_TYPE'],
    ['next without a subject', postTask(running.url, alice.token, 'next', null), 400, 'TASK_SUBJECT_REQUIRED'],
    [
      'a claim of a claimed task',
      postTask(running.url, bob.token, 'claim', claimRequest(bob.actor, lint, 'r-3', 'e-3'), subjectOf(hub)),
      409,
      '',
    ],
    [
      'a body over 512 KiB',
      httpCall(running.url, 'POST', tasksPath(), {
        token: alice.token,
        body: `{"operation":"next","input":null,"pad":"${'x'.repeat(512 * 1024)}"}`,
      }),
      413,
      'HUB_BODY_TOO_LARGE',
    ],
  ];
  for (const [name, pending, status, code] of cases) {
    const answer = await pending;
    assert.equal(answer.status, status, `${name}: ${answer.text.slice(0, 300)}`);
    if (code !== '') assert.equal(errorCode(answer), code, name);
    else assert.match(errorCode(answer), /^TASK_/, name);
    assert.deepEqual(Object.keys(answer.json), ['error'], name);
    assert.deepEqual(Object.keys(answer.json.error as object).sort(), ['code', 'message'], name);
  }

  // 409 from the profile's pin: a requirement installed after the hub started is not the pinned one.
  installRequirement(hub.store, hub.dir, [{ id: 'lint', kind: 'command' }]);
  const moved = await postTask(running.url, alice.token, 'capabilities', null);
  assert.equal(moved.status, 409);
  assert.equal(errorCode(moved), 'HUB_REQUIREMENT_CHANGED');

  // 503: the store is no longer at its path; health reads it afresh and says so.
  renameSync(join(hub.store.dataDir, 'native'), join(hub.dir, 'moved-native'));
  const health = await httpCall(running.url, 'GET', '/v1/hub/health');
  assert.equal(health.status, 503);
  assert.equal(errorCode(health), 'STORE_NOT_INITIALIZED');
});

test('health pings storage only: no authentication, {"status":"ok"}', async (t) => {
  const hub = hubStore(t);
  const running = await startTestHub(t, hub);
  const health = await httpCall(running.url, 'GET', '/v1/hub/health');
  assert.equal(health.status, 200);
  assert.deepEqual(health.json, { status: 'ok' });
  assert.equal(JSON.parse(running.log[0] ?? '{}').route, 'health');
});

test('a revoked grant fails the very next request with 401, and a rotated token too', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const bob = grantFor(hub, 'bob', 'b1');
  const running = await startTestHub(t, hub);
  assert.equal((await postTask(running.url, bob.token, 'capabilities', null)).status, 200);
  const rotated = rotate(hub, bob);
  const old = await postTask(running.url, bob.token, 'capabilities', null);
  assert.equal(old.status, 401);
  assert.equal(errorCode(old), 'GRANT_TOKEN_REJECTED');
  assert.equal((await postTask(running.url, rotated, 'capabilities', null)).status, 200);
  assert.equal((await postTask(running.url, alice.token, 'capabilities', null)).status, 200);
  revoke(hub, alice);
  const after = await postTask(running.url, alice.token, 'capabilities', null);
  assert.equal(after.status, 401);
  assert.equal(errorCode(after), 'GRANT_TOKEN_REJECTED');
  assert.equal(after.headers.connection, 'close');
});

test('64 concurrent claimers of one task over HTTP: exactly one attempt', async (t) => {
  const hub = hubStore(t);
  const grants = Array.from({ length: 64 }, (_, i) => grantFor(hub, `owner${i}`, `agent${i}`));
  const running = await startTestHub(t, hub);
  const first = grants[0];
  assert.ok(first !== undefined);
  const lint = taskRef(
    resultOf(await postTask(running.url, first.token, 'requirements', null, subjectOf(hub))) as unknown as JsonObject,
    'lint',
  );
  const answers = await Promise.all(
    grants.map((grant, i) =>
      postTask(
        running.url,
        grant.token,
        'claim',
        claimRequest(grant.actor, lint, `claim-${i}`, `exec-${i}`),
        subjectOf(hub),
      ),
    ),
  );
  const won = answers.filter((answer) => answer.status === 200);
  assert.equal(won.length, 1, answers.map((a) => `${a.status} ${errorCode(a)}`).join(', '));
  for (const answer of answers.filter((a) => a.status !== 200)) {
    assert.equal(answer.status, 409, answer.text);
    assert.match(errorCode(answer), /^TASK_/);
  }
  const winner = claimedOf(resultOf(won[0] as never) as unknown as JsonObject);
  assert.equal(winner.fence, 1n);
  const rows = resultOf(await postTask(running.url, first.token, 'requirements', null, subjectOf(hub))).tasks as {
    step_id: string;
    state: string;
  }[];
  assert.equal(rows.find((row) => row.step_id === 'lint')?.state, 'leased');
  const journal = new Database(join(hub.store.dataDir, 'skill-workflows', 'state.sqlite'), { readonly: true });
  try {
    assert.deepEqual(journal.prepare('SELECT count(*) AS n FROM agent_task_attempts').get(), { n: 1 });
  } finally {
    journal.close();
  }
});

test('a request JSON cannot choose the data directory, repository, profile or target', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  for (const field of ['data_dir', 'repository', 'profile', 'target', 'actor', 'executable', 'model']) {
    const answer = await httpCall(running.url, 'POST', tasksPath(), {
      token: alice.token,
      body: JSON.stringify({ operation: 'capabilities', input: null, [field]: 'x' }),
    });
    assert.equal(answer.status, 400, field);
    assert.equal(errorCode(answer), 'SCHEMA_UNKNOWN_FIELD', field);
  }
});
