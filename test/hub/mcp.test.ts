/**
 * The hub's MCP endpoints with the official SDK client over a real loopback port (docs/hub.md
 * "MCP"): initialize in both protocol eras the SDK negotiates, tools/list with the pinned names
 * and schemas, every phase-two tool through the same facade as the HTTP route, refusals as tool
 * errors carrying the code, a grant revoked mid-session failing the next call with 401, and a
 * reader grant that sees only the legacy tool.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { Client, SdkHttpError, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';

import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import { asParsed } from '../../src/contracts/json/strict-json.js';
import { TASK_OPERATIONS } from '../../src/contracts/task/capabilities.js';
import { taskClaimRequestDecoder } from '../../src/contracts/task/requests.js';
import { plainJsonSchema } from '../../src/hub/mcp.js';
import { hubOperations, toolNameOf } from '../../src/hub/operations.js';
import { createRepository } from '../../src/native/repositories.js';
import { openAuthority, writeTransaction } from '../../src/native/store.js';
import { COLLECTOR_TASK_OPERATIONS } from '../../src/tasks/facade.js';
import { runCli } from '../helpers/cli.js';
import {
  grantFor,
  hubStore,
  REPOSITORY_ID,
  revoke,
  startTestHub,
  subjectOf,
  type HubStore,
  type TestGrant,
} from '../support/hub.js';
import {
  assertionRequest,
  claimedOf,
  claimRequest,
  mutationRequest,
  recoveryRequest,
  statusRequest,
  type TaskRef,
} from '../support/task-requests.js';
import { defaultFiles, sha256, SKILL_PATH } from '../support/tasks.js';

async function connectClient(
  t: test.TestContext,
  url: string,
  token: string,
  path: string,
  era: 'legacy' | 'modern' = 'legacy',
): Promise<Client> {
  const client = new Client(
    { name: 'agentscm-hub-test', version: '1' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(path, url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

/** An HTTP refusal of the MCP transport: its status and the hub's error code. */
function httpRefusal(status: number, code: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof SdkHttpError, String(error));
    assert.equal(error.status, status);
    assert.match(error.message, new RegExp(`"code":"${code}"`));
    return true;
  };
}

function workspacePath(profile = 'default'): string {
  return `/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=${profile}`;
}

/** MCP arguments: u64 values as JSON numbers (what an MCP client sends). */
function args(value: JsonValue): Record<string, unknown> {
  return asParsed(value) as unknown as Record<string, unknown>;
}

function structured(result: CallToolResult): Record<string, unknown> {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const content = result.content[0];
  assert.equal(content?.type, 'text');
  // The text is the exact JSON; the structured content is the same value.
  assert.deepEqual(JSON.parse((content as { text: string }).text), result.structuredContent);
  return result.structuredContent as Record<string, unknown>;
}

function refusal(result: CallToolResult): string {
  assert.equal(result.isError, true, JSON.stringify(result));
  return (result.structuredContent as { error: { code: string } }).error.code;
}

async function runCycle(t: test.TestContext, hub: HubStore, alice: TestGrant, client: Client): Promise<void> {
  const call = (name: string, input: Record<string, unknown>) =>
    client.callTool({ name: toolNameOf(name), arguments: input });
  const capabilities = structured(await call('capabilities', {}));
  assert.deepEqual(capabilities, {
    capability: 'agentscm.agent-workflow-tasks/v1',
    supported_schema_versions: [1],
    operations: [...TASK_OPERATIONS, ...COLLECTOR_TASK_OPERATIONS].sort(),
  });
  const requirements = structured(await call('requirements', { subject: subjectOf(hub) }));
  const tasks = requirements.tasks as { step_id: string; task_id: string; task_digest: string }[];
  const unitRow = tasks.find((row) => row.step_id === 'lint');
  assert.ok(unitRow !== undefined);
  const lint: TaskRef = { task_id: unitRow.task_id, task_digest: unitRow.task_digest };
  const next = structured(await call('next', { subject: subjectOf(hub) }));
  assert.equal((next.next as { operation: string }).operation, 'claim');
  const claim = structured(
    await call('claim', { ...args(claimRequest(alice.actor, lint, 'm-claim', 'm-exec')), subject: subjectOf(hub) }),
  );
  const claimed = claimedOf(claim as unknown as JsonObject);
  const reference = (name: string, extra: Record<string, unknown> = {}) =>
    call('reference', {
      version: 1,
      task_id: lint.task_id,
      task_digest: lint.task_digest,
      name,
      expected_sha256: sha256(defaultFiles()[SKILL_PATH] ?? ''),
      expected_schema_version: 1,
      agent: alice.actor,
      ...extra,
    });
  assert.equal(structured(await reference('skill')).status, 'available');
  const mismatch = structured(await reference('skill', { expected_schema_version: 2 }));
  assert.equal(mismatch.status, 'schema_mismatch');
  assert.deepEqual(mismatch.server_schema_versions, [1]);
  const instructions = structured(
    await call('instructions', { version: 1, task_id: lint.task_id, supported_schema_versions: [1] }),
  );
  assert.equal(typeof instructions, 'object');
  structured(await call('heartbeat', args(mutationRequest(alice.actor, claimed, 'heartbeat', 'm-hb'))));
  structured(await call('result', args(assertionRequest(alice.actor, claimed, 'm-result', 'failed'))));
  assert.equal(structured(await call('status', args(statusRequest(claimed)))).state, 'finished');
  const recovered = structured(
    await call('recovery', args(recoveryRequest('claim', claimRequest(alice.actor, lint, 'm-claim', 'm-exec')))),
  );
  assert.equal(typeof recovered, 'object');
  // Refusals are tool errors carrying the code.
  assert.equal(
    refusal(
      await call('claim', {
        ...args(claimRequest({ owner_id: 'bob', agent_id: 'b1' }, lint, 'm-2', 'm-3')),
        subject: subjectOf(hub),
      }),
    ),
    'TASK_ACTOR_MISMATCH',
  );
  assert.equal(refusal(await call('next', {})), 'TASK_SUBJECT_REQUIRED');
  // The collector tools reach the facade's collector operations (no collector profile is installed here).
  assert.match(
    refusal(
      await call('collector_descriptor', {
        version: 1,
        agent: alice.actor,
        task_id: lint.task_id,
        attempt_id: 'no-such-attempt',
      }),
    ),
    /^(TASK|COLLECTOR)_/,
  );
  assert.match(
    refusal(
      await call('collector_claim', {
        ...args(claimRequest(alice.actor, lint, 'm-4', 'm-5')),
        executor: undefined,
        collector_profile_id: 'f'.repeat(64),
      }),
    ),
    /^(TASK|COLLECTOR|SCHEMA)_/,
  );
  assert.equal(refusal(await call('capabilities', { actor: 'bob/b1' })), 'SCHEMA_UNKNOWN_FIELD');
  assert.equal(
    refusal(
      await call('heartbeat', { ...args(mutationRequest(alice.actor, claimed, 'heartbeat', 'm-big')), fence: 2 ** 60 }),
    ),
    'JSON_NUMBER_INVALID',
  );
  t.diagnostic('cycle done');
}

test('workspace MCP (2025 handshake): initialize, tools/list as pinned, every phase-two tool through the facade', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const client = await connectClient(t, running.url, alice.token, workspacePath());
  assert.deepEqual(Object.keys(client.getServerCapabilities() ?? {}).includes('tools'), true);
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    [
      ...[...TASK_OPERATIONS, ...COLLECTOR_TASK_OPERATIONS].sort().map((operation) => `agentscm_task_${operation}`),
      'agent_state',
    ],
  );
  for (const tool of tools) {
    assert.ok((tool.description ?? '').length > 60, tool.name);
    assert.equal(tool.inputSchema.type, 'object');
  }
  const claimTool = tools.find((tool) => tool.name === 'agentscm_task_claim');
  const expected = plainJsonSchema(taskClaimRequestDecoder.schema) as {
    properties: Record<string, unknown>;
    required: string[];
  };
  assert.deepEqual(claimTool?.inputSchema.required, expected.required);
  assert.deepEqual(
    Object.keys(claimTool?.inputSchema.properties ?? {}).sort(),
    [...Object.keys(expected.properties), 'subject'].sort(),
  );
  assert.deepEqual((claimTool?.inputSchema.properties as Record<string, unknown>).requested_lease_ms, {
    type: 'integer',
    minimum: 1,
    maximum: 86_400_000,
  });
  assert.equal(hubOperations().length, TASK_OPERATIONS.length + COLLECTOR_TASK_OPERATIONS.length);
  await runCycle(t, hub, alice, client);
});

test('workspace MCP (2026-07-28 per-request envelope): the same tools and answers', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const client = await connectClient(t, running.url, alice.token, workspacePath(), 'modern');
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  const { tools } = await client.listTools();
  assert.equal(tools.length, TASK_OPERATIONS.length + COLLECTOR_TASK_OPERATIONS.length + 1);
  await runCycle(t, hub, alice, client);
});

test('a grant revoked mid-session: the next call fails with 401', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const client = await connectClient(t, running.url, alice.token, workspacePath());
  structured(await client.callTool({ name: 'agentscm_task_capabilities', arguments: {} }));
  revoke(hub, alice);
  await assert.rejects(
    client.callTool({ name: 'agentscm_task_capabilities', arguments: {} }),
    httpRefusal(401, 'GRANT_TOKEN_REJECTED'),
  );
  const log = running.log.map((line) => JSON.parse(line) as { status: number; code: string | null; route: string });
  assert.deepEqual(log.at(-1), { ...log.at(-1), status: 401, code: 'GRANT_TOKEN_REJECTED', route: 'workspace-mcp' });
});

test('a reader grant sees only the legacy tool; agent grants do not reach the legacy endpoint', async (t) => {
  const hub = hubStore(t);
  const reader = grantFor(hub, 'carol', 'c1', 'reader');
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  await assert.rejects(
    connectClient(t, running.url, reader.token, workspacePath()),
    httpRefusal(403, 'TASK_NOT_AUTHORIZED'),
  );
  const legacy = await connectClient(t, running.url, reader.token, '/mcp');
  const { tools } = await legacy.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['agentscm_workflow_status'],
  );
  // A real run of the repository: its status, read-only.
  const definition = join(hub.dir, 'paths.json');
  writeFileSync(
    definition,
    JSON.stringify({
      version: 1,
      name: 'paths',
      source: { repository: hub.store.repository, revision: hub.store.revision, policy_epoch: 0 },
      skill: { entrypoint: SKILL_PATH, resources: [] },
      steps: [
        {
          id: 'paths',
          needs: [],
          required: true,
          action: { kind: 'source_paths', expectations: [{ path: 'a.txt', sha256: sha256('alpha') }] },
        },
      ],
    }),
  );
  const run = await runCli(['--data-dir', hub.store.dataDir, 'skill-workflow', 'run', 'run-1', definition]);
  assert.equal(run.code, 0, run.stderr);
  const status = structured(
    await legacy.callTool({ name: 'agentscm_workflow_status', arguments: { run_id: 'run-1' } }),
  );
  assert.equal(status.run_id, 'run-1');
  assert.equal(status.admission, 'not_assessed');
  assert.equal(
    refusal(await legacy.callTool({ name: 'agentscm_workflow_status', arguments: { run_id: 'no-such-run' } })),
    'WORKFLOW_RUN_NOT_FOUND',
  );
  // A reader of another repository learns nothing of this one's runs.
  const auth = openAuthority(hub.store.dataDir, { mode: 'write' });
  const other = writeTransaction(auth, () => createRepository(auth, 'other')).id;
  auth.close();
  const stranger = await connectClient(t, running.url, grantFor(hub, 'dave', 'd1', 'reader', other).token, '/mcp');
  assert.equal(
    refusal(await stranger.callTool({ name: 'agentscm_workflow_status', arguments: { run_id: 'run-1' } })),
    'WORKFLOW_RUN_NOT_FOUND',
  );
  assert.equal(
    refusal(await legacy.callTool({ name: 'agentscm_workflow_status', arguments: { run_id: 'run-1', verbose: true } })),
    'SCHEMA_TYPE',
  );
  await assert.rejects(legacy.callTool({ name: 'agentscm_task_claim', arguments: {} }));
  await assert.rejects(
    connectClient(t, running.url, alice.token, '/mcp'),
    httpRefusal(403, 'HUB_GRANT_SCOPE_MISMATCH'),
  );
  await assert.rejects(
    connectClient(t, running.url, alice.token, '/v1/hub/workspace/mcp?repository=acme%2Fwidgets&profile=other'),
    httpRefusal(404, 'HUB_PROFILE_NOT_FOUND'),
  );
});
