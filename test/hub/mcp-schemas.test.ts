/**
 * The tool input schemas the hub publishes in tools/list (docs/hub.md "MCP", issue #25 item 18):
 * plain JSON Schema an MCP client can compile, with none of the decoder's own keywords (`idKind`,
 * `u64`, `maxUtf8Bytes`). Each schema, as the official SDK client receives it over a real
 * loopback hub, must compile under ajv's strict mode with the JSON Schema 2020-12 dialect (the
 * dialect MCP gives a schema without `$schema`; no tool schema declares another), which refuses
 * every keyword it does not know.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';

import { grantFor, hubStore, REPOSITORY_ID, startTestHub } from '../support/hub.js';

/** Every tool's input schema from tools/list of one endpoint. */
async function listedSchemas(
  t: test.TestContext,
  url: string,
  token: string,
  path: string,
): Promise<Map<string, Record<string, unknown>>> {
  const client = new Client({ name: 'agentscm-schema-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(path, url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  t.after(() => client.close());
  const { tools } = await client.listTools();
  return new Map(tools.map((tool) => [tool.name, tool.inputSchema as Record<string, unknown>]));
}

/** Object keys anywhere in a schema (keywords and property names alike). */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      into.add(key);
      keysOf(item, into);
    }
  }
  return into;
}

test(
  'every published tool input schema compiles under ajv strict mode (JSON Schema 2020-12): no custom keyword leaks',
  { timeout: 60_000 },
  async (t) => {
    const hub = hubStore(t);
    const alice = grantFor(hub, 'alice', 'a1');
    const reader = grantFor(hub, 'carol', 'c1', 'reader');
    const running = await startTestHub(t, hub);
    const workspace = await listedSchemas(
      t,
      running.url,
      alice.token,
      `/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=default`,
    );
    const legacy = await listedSchemas(t, running.url, reader.token, '/mcp');
    const all = new Map([...workspace, ...legacy]);
    assert.ok(workspace.size > 10 && legacy.size === 1, `tools: ${[...all.keys()].join(', ')}`);
    const failures: string[] = [];
    for (const [name, schema] of all) {
      assert.equal(schema.$schema, undefined, `${name} declares a dialect of its own`);
      // A fresh ajv per tool: strict mode throws on the first unknown keyword, format or type issue.
      const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });
      try {
        if (!ajv.validateSchema(schema)) throw new Error(ajv.errorsText(ajv.errors));
        ajv.compile(schema);
      } catch (error) {
        failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
      const keys = keysOf(schema);
      for (const custom of ['idKind', 'u64', 'maxUtf8Bytes'])
        if (keys.has(custom)) failures.push(`${name}: carries ${custom}`);
    }
    assert.deepEqual(failures, []);
    // The subject, where a tool takes one, is plain strings with their patterns and bounds.
    const subject = (
      workspace.get('agentscm_task_next')?.properties as {
        subject?: { properties?: Record<string, Record<string, unknown>> };
      }
    ).subject;
    assert.deepEqual(Object.keys(subject?.properties ?? {}).sort(), ['change_id', 'context_digest']);
    for (const field of Object.values(subject?.properties ?? {})) {
      assert.equal(field.type, 'string');
      assert.equal(typeof field.pattern, 'string');
    }
  },
);
