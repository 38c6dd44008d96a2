/**
 * The MCP `subject` tool and the change-id-only subject of the read tools, with the official SDK
 * client over a real loopback port (docs/hub.md "MCP"): tools/list lists subject and says who runs
 * collect; subject answers a Change's current subject from its id; next, qualification and
 * requirements given {"change_id"} alone answer exactly as with the full subject; a claim still
 * needs the full subject; bad input is refused with its code.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';

import { grantFor, hubStore, REPOSITORY_ID, startTestHub, subjectOf } from '../support/hub.js';

async function connect(t: test.TestContext, url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'agentscm-subject-test', version: '1' });
  const path = `/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=default`;
  const transport = new StreamableHTTPClientTransport(new URL(path, url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

function structured(result: CallToolResult): Record<string, unknown> {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return result.structuredContent as Record<string, unknown>;
}

function refusal(result: CallToolResult): string {
  assert.equal(result.isError, true, JSON.stringify(result));
  return (result.structuredContent as { error: { code: string } }).error.code;
}

test('MCP subject: listed, answers the current subject from a Change id; read tools take the id alone', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const client = await connect(t, running.url, alice.token);
  const call = async (name: string, args: Record<string, unknown>) =>
    client.callTool({ name: `agentscm_task_${name}`, arguments: args });

  const { tools } = await client.listTools();
  const tool = tools.find((item) => item.name === 'agentscm_task_subject');
  assert.ok(tool !== undefined, 'tools/list includes agentscm_task_subject');
  assert.deepEqual(tool.inputSchema.required, ['change_id']);
  assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}), ['change_id', 'subject']);
  for (const name of ['agentscm_task_next', 'agentscm_task_qualification', 'agentscm_task_requirements']) {
    const read = tools.find((item) => item.name === name);
    const subject = (read?.inputSchema.properties as Record<string, { required?: string[] }>).subject;
    assert.deepEqual(subject?.required, ['change_id'], `${name} takes the Change id alone`);
  }
  // One story in every tool that leads to a collector: the agent runs claim and collect with the operator's setup.
  for (const name of ['agentscm_task_next', 'agentscm_task_qualification', 'agentscm_task_collector_claim']) {
    const text = tools.find((item) => item.name === name)?.description ?? '';
    assert.match(text, /The agent runs the collector itself/, name);
    assert.match(text, /`agentscm agent-task collect --descriptor DESCRIPTOR --key K --state-dir S/, name);
    assert.match(text, /agentscm agent-task collector add/, name);
    assert.match(text, /agentscm qualification --change C --token-file F/, name);
  }

  const full = subjectOf(hub);
  const subject = structured(await call('subject', { change_id: full.change_id }));
  assert.equal(subject.change_id, full.change_id);
  assert.equal(subject.context_digest, hub.store.contextDigest);
  assert.equal(subject.revision, hub.store.revision);
  assert.equal(subject.target, 'main');
  assert.equal(typeof subject.change_version, 'number');
  assert.match(String(subject.requirement_digest), /^[0-9a-f]{64}$/);

  for (const name of ['next', 'qualification', 'requirements']) {
    const byId = structured(await call(name, { subject: { change_id: full.change_id } }));
    const byFull = structured(await call(name, { subject: full }));
    assert.deepEqual(byId, byFull, `${name} with the Change id alone uses its current context`);
  }
  const next = structured(await call('next', { subject: { change_id: full.change_id } }));
  assert.equal((next.next as { operation: string }).operation, 'claim');
  assert.equal((next.subject as { context_digest: string }).context_digest, hub.store.contextDigest);

  // Refusals, each with its code: an unknown Change, a stray field, a claim (it binds the exact context).
  assert.equal(refusal(await call('subject', { change_id: 'no-such-change' })), 'CHANGE_NOT_FOUND');
  assert.equal(refusal(await call('next', { subject: { change_id: 'no-such-change' } })), 'CHANGE_NOT_FOUND');
  assert.equal(refusal(await call('subject', { change_id: full.change_id, extra: 1 })), 'SCHEMA_UNKNOWN_FIELD');
  assert.equal(refusal(await call('subject', {})), 'SCHEMA_MISSING_FIELD');
  assert.equal(refusal(await call('next', { subject: { context_digest: full.context_digest } })), 'SCHEMA_TYPE');
  assert.equal(
    refusal(await call('claim', { version: 1, subject: { change_id: full.change_id } })),
    'SCHEMA_TYPE',
    'a claim needs the exact subject',
  );
});
