/**
 * The capabilities answer lists every operation the hub serves (docs/hub.md "Routes": schema
 * discovery reports the operation names), over the agent-tasks route and the workspace MCP tool
 * alike, and each listed name is one the route accepts: an operation cannot be served without being
 * listed, nor listed without being served.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { hubOperations, toolNameOf } from '../../src/hub/operations.js';
import { FACADE_OPERATIONS } from '../../src/tasks/facade.js';
import { errorCode, grantFor, hubStore, postTask, REPOSITORY_ID, resultOf, startTestHub } from '../support/hub.js';

test('capabilities lists exactly the operations the hub serves, on the route and as MCP tools', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const served = hubOperations().map((operation) => operation.name);

  const overHttp = resultOf(await postTask(running.url, alice.token, 'capabilities', null));
  assert.deepEqual(overHttp.operations, served);
  assert.deepEqual(served, [...FACADE_OPERATIONS]);
  for (const name of ['collector_claim', 'collector_descriptor', 'collector_finalize'])
    assert.ok(served.includes(name), name);

  const client = new Client({ name: 'agentscm-capabilities-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(`/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=default`, running.url),
      {
        requestInit: { headers: { authorization: `Bearer ${alice.token}` } },
      },
    ),
  );
  t.after(() => client.close());
  const overMcp = await client.callTool({ name: toolNameOf('capabilities'), arguments: {} });
  assert.notEqual(overMcp.isError, true);
  assert.deepEqual((overMcp.structuredContent as { operations: string[] }).operations, served);
  const taskTools = (await client.listTools()).tools
    .map((tool) => tool.name)
    .filter((name) => name.startsWith('agentscm_task_'));
  assert.deepEqual(taskTools, served.map(toolNameOf));

  // Every listed name reaches the facade: none is refused as unknown (an empty input is refused
  // by the operation's own decoder or subject rule instead).
  for (const name of served) {
    const answer = await postTask(running.url, alice.token, name, name === 'capabilities' ? null : {});
    if (answer.status !== 200) assert.notEqual(errorCode(answer), 'TASK_OPERATION_UNKNOWN', name);
  }
  assert.equal(errorCode(await postTask(running.url, alice.token, 'collector_upload', null)), 'TASK_OPERATION_UNKNOWN');
});
