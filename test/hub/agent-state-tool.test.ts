/**
 * The workspace MCP tool `agent_state` with the official SDK client over a real loopback port
 * (docs/hub.md "MCP"): listed beside the task tools with an input schema built from the published
 * agent-state schemas; each operation answers exactly what `agentscm agent-state OP --json`
 * prints for the same input (a real CLI process); refusals are tool errors carrying the same code
 * as the CLI's; a reader grant never reaches it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { Client, SdkHttpError, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';

import { AGENT_STATE_OPERATIONS } from '../../src/agent-state/operations.js';
import {
  agentStateConflictsDecoder,
  agentStateCreateDecoder,
  agentStateDecoder,
  agentStateEligibleDecoder,
  agentStateReconcileDecoder,
} from '../../src/contracts/agent-state.js';
import { plainJsonSchema } from '../../src/hub/mcp.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { grantFor, hubStore, REPOSITORY_ID, startTestHub } from '../support/hub.js';

const WORKSPACE_MCP = `/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=default`;

async function connect(t: test.TestContext, url: string, token: string, path = WORKSPACE_MCP): Promise<Client> {
  const client = new Client({ name: 'agentscm-agent-state-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(path, url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  t.after(() => client.close());
  return client;
}

function answerOf(result: CallToolResult): Record<string, unknown> {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const content = result.content[0];
  assert.equal(content?.type, 'text');
  assert.deepEqual(JSON.parse((content as { text: string }).text), result.structuredContent);
  return result.structuredContent as Record<string, unknown>;
}

function refusalOf(result: CallToolResult): string {
  assert.equal(result.isError, true, JSON.stringify(result));
  return (result.structuredContent as { error: { code: string } }).error.code;
}

const BUILDER = {
  agent_id: 'builder',
  backend: 'codex',
  task_id: 'task-1',
  state: 'working',
  state_source: 'native',
  scopes: [{ path: 'skills/agent_state', access: 'write' }],
  capabilities: { send_message: 'native', mutate_workspace: 'native' },
};

test('agent_state over workspace MCP: listed with the published schemas, and every operation answers what the CLI prints', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const client = await connect(t, running.url, alice.token);

  const { tools } = await client.listTools();
  const tool = tools.find((entry) => entry.name === 'agent_state');
  assert.ok(tool !== undefined, tools.map((entry) => entry.name).join(', '));
  assert.ok((tool.description ?? '').length > 60);
  const schema = tool.inputSchema as {
    type: string;
    required: string[];
    properties: { operation: { enum: string[] }; input: { anyOf: Record<string, unknown>[] } };
  };
  assert.equal(schema.type, 'object');
  assert.deepEqual(schema.required, ['operation', 'input']);
  assert.deepEqual(schema.properties.operation.enum, [...AGENT_STATE_OPERATIONS]);
  const published = [
    agentStateCreateDecoder,
    agentStateDecoder,
    agentStateReconcileDecoder,
    agentStateEligibleDecoder,
    agentStateConflictsDecoder,
  ];
  assert.deepEqual(
    schema.properties.input.anyOf.map(({ title, description, ...rest }) => {
      assert.equal(description, `the input of operation ${String(title)}`);
      return [title, rest];
    }),
    published.map((decoder, i) => [AGENT_STATE_OPERATIONS[i], plainJsonSchema(decoder.schema)]),
  );

  const call = (operation: string, input: unknown) =>
    client.callTool({ name: 'agent_state', arguments: { operation, input } });
  const envelope = answerOf(await call('create', BUILDER));
  const reviewer = {
    ...envelope,
    agent_id: 'reviewer',
    scopes: [{ path: 'skills', access: 'write' }],
    capabilities: { ...(envelope.capabilities as object), send_message: 'unknown' },
  };
  const cases: [string, unknown, number][] = [
    ['create', BUILDER, 0],
    ['validate', envelope, 0],
    [
      'reconcile',
      { observations: [{ ...envelope, state_source: 'terminal', revision: 9, state: 'idle' }, envelope] },
      0,
    ],
    ['eligible', { agents: [envelope, reviewer], require: { send_message: true } }, 0],
    // A blocking answer (exit 1 in the CLI) is an answer here, not a tool error.
    ['eligible', { agents: [reviewer], require: { send_message: true } }, 1],
    ['conflicts', { agents: [envelope, reviewer] }, 1],
  ];
  const dir = hub.dir;
  for (const [i, [operation, input, exit]] of cases.entries()) {
    const answer = answerOf(await call(operation, input));
    const file = join(dir, `agent-state-${i}.json`);
    writeFileSync(file, JSON.stringify(input));
    const cli = await runCli(['agent-state', operation, file, '--json']);
    assert.equal(cli.code, exit, `${operation}: ${cli.stderr}`);
    assert.deepEqual(answer, jsonOf(cli), operation);
  }
  assert.equal(answerOf(await call('reconcile', cases[2]?.[1])).winner, 1);
  assert.equal((answerOf(await call('conflicts', { agents: [envelope, reviewer] })).conflicts as unknown[]).length, 1);
});

test("agent_state refusals are tool errors with the CLI's codes; reader grants never reach the tool", async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const client = await connect(t, running.url, alice.token);
  const call = (args: Record<string, unknown>) => client.callTool({ name: 'agent_state', arguments: args });

  const envelope = answerOf(await call({ operation: 'create', input: BUILDER }));
  // Two different observations of equal source and revision: the same refusal as the CLI's.
  const disagreeing = { observations: [{ ...envelope, state: 'idle' }, envelope] };
  assert.equal(refusalOf(await call({ operation: 'reconcile', input: disagreeing })), 'AGENT_STATE_CONFLICT');
  const file = join(hub.dir, 'disagreeing.json');
  writeFileSync(file, JSON.stringify(disagreeing));
  const cli = await runCli(['agent-state', 'reconcile', file, '--json']);
  assert.equal(cli.code, 3);
  assert.equal(jsonOf<{ error: { code: string } }>(cli).error.code, 'AGENT_STATE_CONFLICT');

  assert.equal(
    refusalOf(await call({ operation: 'validate', input: { ...envelope, state: 'blocked' } })),
    'AGENT_STATE_INVALID',
  );
  assert.equal(
    refusalOf(await call({ operation: 'create', input: { ...BUILDER, capabilities: { teleport: 'native' } } })),
    'SCHEMA_UNKNOWN_FIELD',
  );
  assert.equal(
    refusalOf(
      await call({ operation: 'validate', input: { ...envelope, scopes: [{ path: './src', access: 'write' }] } }),
    ),
    'PATH_INVALID',
  );
  assert.equal(
    refusalOf(await call({ operation: 'validate', input: { ...envelope, revision: 2 ** 60 } })),
    'JSON_NUMBER_INVALID',
  );
  assert.equal(refusalOf(await call({ operation: 'merge', input: {} })), 'USAGE');
  assert.equal(refusalOf(await call({ operation: 'create', input: BUILDER, actor: 'bob' })), 'SCHEMA_UNKNOWN_FIELD');
  assert.equal(refusalOf(await call({ operation: 'create' })), 'SCHEMA_MISSING_FIELD');
  assert.equal(refusalOf(await call({ operation: 'create', input: [BUILDER] })), 'SCHEMA_TYPE');
  assert.equal(refusalOf(await call({ operation: 5, input: BUILDER })), 'SCHEMA_TYPE');

  // The legacy endpoint of reader grants has no agent_state tool, and a reader grant is refused
  // by the workspace endpoint before MCP.
  const reader = grantFor(hub, 'carol', 'c1', 'reader');
  const legacy = await connect(t, running.url, reader.token, '/mcp');
  assert.deepEqual(
    (await legacy.listTools()).tools.map((entry) => entry.name),
    ['agentscm_workflow_status'],
  );
  await assert.rejects(legacy.callTool({ name: 'agent_state', arguments: { operation: 'create', input: BUILDER } }));
  await assert.rejects(
    connect(t, running.url, reader.token),
    (error: unknown) => error instanceof SdkHttpError && error.status === 403,
  );
});
