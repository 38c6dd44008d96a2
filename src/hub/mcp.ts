/**
 * The hub's MCP endpoints (docs/wire.md "Hub"; docs/hub.md "MCP"), built with the official
 * TypeScript SDK: Streamable HTTP, stateless — a fresh server per HTTP request, so every request is
 * authenticated anew and no session outlives a revoked token. The SDK's entry serves every protocol
 * revision it negotiates (the 2026-07-28 per-request envelope and the 2025-era initialize handshake
 * through its stateless fallback).
 *
 * Workspace MCP: one tool `agentscm_task_<operation>` per registered operation (operations.ts),
 * calling the same path as the HTTP route (task-call.ts); the structured output is the same JSON
 * as the route's `result`, and a refusal is a tool error carrying the code. Beside them the tool
 * `agent_state` (agent-state-tool.ts), framed the same way. Legacy `/mcp`: reader grants only,
 * one read-only tool `agentscm_workflow_status`.
 */
import {
  createMcpHandler,
  fromJsonSchema,
  McpServer,
  type CallToolResult,
  type JsonSchemaType,
  type JsonSchemaValidator,
  type jsonSchemaValidator,
  type JsonSchemaValidatorResult,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';

import { AgentscmError } from '../contracts/errors.js';
import { HUB_JSON_BODY_MAX_BYTES, HUB_SUBJECT_SCHEMA } from '../contracts/hub-config.js';
import { ID_SCHEMA } from '../contracts/ids.js';
import { encodeCanonicalText } from '../contracts/json/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { asParsed } from '../contracts/json/strict-json.js';
import {
  AGENT_STATE_TOOL,
  AGENT_STATE_TOOL_DESCRIPTION,
  agentStateToolSchema,
  callAgentStateTool,
} from './agent-state-tool.js';
import { asAgentscmError, publicMessage } from './http-errors.js';
import { hubOperations, toolNameOf, type HubOperation } from './operations.js';
import type { HubTaskCall } from './task-call.js';

/** The one tool of the legacy endpoint. */
export const LEGACY_STATUS_TOOL = 'agentscm_workflow_status';

const SERVER_INFO = { name: 'agentscm-hub', version: '1' };

/**
 * What the servers advertise (issue #25 item 17): tools, and nothing the hub does not do. The
 * tool list of an endpoint never changes while the hub runs, so `listChanged` is false (the SDK
 * would otherwise advertise true once a tool is registered). A `subscriptions/listen` request
 * then has nothing to subscribe to, and the SDK answers it at once: its acknowledgement with an
 * empty filter, and the complete result.
 */
const CAPABILITIES = { tools: { listChanged: false } };

/**
 * The facade is the one validator of every input (strict JSON, exact u64, the published
 * schemas); the SDK's own check would refuse our custom keywords' inputs differently and lose
 * the stable code, so it accepts everything and the schema is only advertised.
 */
const PASS_THROUGH: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input: unknown): JsonSchemaValidatorResult<T> => ({
      valid: true,
      data: input as T,
      errorMessage: undefined,
    });
  },
};

/**
 * The keywords of JSON Schema 2020-12 (the dialect MCP gives a tool schema without `$schema`):
 * a published schema keeps these and nothing else.
 */
const STANDARD_KEYWORDS = new Set([
  '$schema',
  '$id',
  '$ref',
  '$defs',
  '$comment',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'prefixItems',
  'items',
  'contains',
  'properties',
  'patternProperties',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'title',
  'description',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'examples',
  'format',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
]);
/** Keywords whose value is a map of names to schemas (the names are not keywords). */
const SCHEMA_MAPS = new Set(['$defs', 'properties', 'patternProperties', 'dependentSchemas']);
/** Keywords whose value is a schema, or an array of schemas. */
const SCHEMA_VALUES = new Set([
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'prefixItems',
  'items',
  'contains',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);

/**
 * A schema of src/contracts/ as plain JSON Schema for tools/list (issue #25 item 18): `u64`
 * becomes an integer range (bounds above 2^53 dropped), `maxUtf8Bytes` a maxLength (characters
 * never outnumber bytes, so it is a looser but true bound), and every other keyword that is not
 * JSON Schema 2020-12's (`idKind`, …) goes. Property names are names, never keywords: a
 * property called `idKind` stays.
 */
export function plainJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plainJsonSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === 'u64') {
      const bounds =
        typeof value === 'object' && value !== null ? (value as { minimum?: string; maximum?: string }) : {};
      out.type = 'integer';
      out.minimum = Number(bounds.minimum ?? '0');
      if (bounds.maximum !== undefined && BigInt(bounds.maximum) <= BigInt(Number.MAX_SAFE_INTEGER))
        out.maximum = Number(bounds.maximum);
      continue;
    }
    if (key === 'maxUtf8Bytes') {
      if (!('maxLength' in schema)) out.maxLength = value;
      continue;
    }
    if (!STANDARD_KEYWORDS.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, plainJsonSchema(item)]));
    } else {
      out[key] = SCHEMA_VALUES.has(key) ? plainJsonSchema(value) : value;
    }
  }
  return out;
}

/** The input schema of an operation's tool. */
export function toolInputSchema(operation: HubOperation): Record<string, unknown> {
  switch (operation.input.kind) {
    case 'none':
      return { type: 'object', additionalProperties: false, properties: {} };
    case 'subject':
      // The read tools take the Change id alone too: its current context is used (docs/hub.md "MCP").
      return {
        type: 'object',
        additionalProperties: false,
        required: ['subject'],
        properties: { subject: { ...(plainJsonSchema(HUB_SUBJECT_SCHEMA) as object), required: ['change_id'] } },
      };
    case 'document': {
      const plain = plainJsonSchema(operation.input.schema) as { properties?: Record<string, unknown> };
      // The subject of a task not yet retained (claim, instructions, reference), as on the HTTP route.
      return { ...plain, properties: { ...(plain.properties ?? {}), subject: plainJsonSchema(HUB_SUBJECT_SCHEMA) } };
    }
  }
}

/**
 * MCP arguments arrive parsed by the SDK as JavaScript numbers, so an integer above 2^53 - 1 has
 * already lost its exact value: refuse it rather than pass a rounded fence or lease on.
 */
function checkExactNumbers(value: unknown, at: string): void {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new AgentscmError(
        'JSON_NUMBER_INVALID',
        `${at || '/'} is ${String(value)}, not an exact unsigned integer up to 2^53 - 1 as an MCP argument`,
        {
          hint: 'send larger u64 values through the HTTP agent-tasks route, which keeps them exact',
        },
      );
    }
    return;
  }
  if (Array.isArray(value)) value.forEach((item, index) => checkExactNumbers(item, `${at}/${index}`));
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) checkExactNumbers(item, `${at}/${key}`);
}

/** The structured form of an answer: exact u64 as JSON numbers where JavaScript holds them exactly. */
function structuredOf(value: JsonValue): Record<string, unknown> {
  const parsed = asParsed(value);
  const plain = JSON.parse(encodeCanonicalText(parsed)) as unknown;
  return isJsonObject(plain) ? plain : { result: plain };
}

/** A successful tool answer: the exact JSON text and the structured value. */
export function toolAnswer(result: JsonValue): CallToolResult {
  return { content: [{ type: 'text', text: encodeCanonicalText(result) }], structuredContent: structuredOf(result) };
}

/** A successful tool answer from the JSON text a hub worker answered (the canonical text of the result). */
export function toolAnswerOfText(text: string): CallToolResult {
  const plain = JSON.parse(text) as JsonValue;
  return { content: [{ type: 'text', text }], structuredContent: isJsonObject(plain) ? plain : { result: plain } };
}

/** A refusal as a tool error carrying its stable code. */
export function toolError(error: unknown): CallToolResult {
  const refused = asAgentscmError(error);
  // The same public message as an HTTP refusal: a store failure names no file (docs/hub.md "What an answer never
  // says").
  const body = { error: { code: refused.code, message: publicMessage(refused) } };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
}

function splitArguments(operation: HubOperation, args: unknown): { input: JsonValue; subject: HubTaskCall['subject'] } {
  const given = args === undefined || args === null ? {} : args;
  if (!isJsonObject(given))
    throw new AgentscmError('SCHEMA_TYPE', `the arguments of ${toolNameOf(operation.name)} must be an object`);
  checkExactNumbers(given, '');
  const { subject, ...rest } = given as JsonObject & { subject?: JsonValue };
  if (subject !== undefined && !isJsonObject(subject))
    throw new AgentscmError('SCHEMA_TYPE', '/subject must be an object {"change_id","context_digest"}');
  let selection: HubTaskCall['subject'] = undefined;
  if (subject !== undefined) {
    const given = subject as Partial<Record<'change_id' | 'context_digest', JsonValue>>;
    const keys = Object.keys(subject).sort().join(',');
    const changeOnly = operation.input.kind === 'subject' && keys === 'change_id';
    if (changeOnly && typeof given.change_id === 'string') {
      // A read tool (requirements, next, qualification) takes the Change id alone: its current context is used.
      selection = { change_id: given.change_id };
    } else if (
      keys === 'change_id,context_digest' &&
      typeof given.change_id === 'string' &&
      typeof given.context_digest === 'string'
    ) {
      selection = { change_id: given.change_id, context_digest: given.context_digest };
    } else {
      throw new AgentscmError(
        'SCHEMA_TYPE',
        operation.input.kind === 'subject'
          ? '/subject must be {"change_id"} or exactly {"change_id","context_digest"}'
          : '/subject must be exactly {"change_id","context_digest"}',
      );
    }
  }
  if (operation.input.kind === 'document') return { input: rest, subject: selection };
  if (Object.keys(rest).length > 0)
    throw new AgentscmError(
      'SCHEMA_UNKNOWN_FIELD',
      `${toolNameOf(operation.name)} takes ${operation.input.kind === 'subject' ? 'only "subject"' : 'no arguments'}`,
    );
  return { input: null, subject: selection };
}

/** The workspace MCP server of one request: the profile's tools, run as the authenticated grant. */
export function workspaceServer(callTask: (call: HubTaskCall) => Promise<CallToolResult>): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: CAPABILITIES });
  for (const operation of hubOperations()) {
    server.registerTool(
      toolNameOf(operation.name),
      {
        description: operation.description,
        inputSchema: fromJsonSchema(toolInputSchema(operation) as JsonSchemaType, PASS_THROUGH),
      },
      async (args: unknown): Promise<CallToolResult> => {
        try {
          const { input, subject } = splitArguments(operation, args);
          // The call runs in the hub's task worker (docs/hub.md "A busy store"), never on this thread.
          return await callTask({ operation: operation.name, input, subject });
        } catch (error) {
          return toolError(error);
        }
      },
    );
  }
  server.registerTool(
    AGENT_STATE_TOOL,
    {
      description: AGENT_STATE_TOOL_DESCRIPTION,
      inputSchema: fromJsonSchema(plainJsonSchema(agentStateToolSchema()) as JsonSchemaType, PASS_THROUGH),
    },
    (args: unknown): CallToolResult => {
      try {
        checkExactNumbers(args, '');
        return toolAnswer(callAgentStateTool(args));
      } catch (error) {
        return toolError(error);
      }
    },
  );
  return server;
}

const STATUS_INPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['run_id'],
  properties: { run_id: plainJsonSchema(ID_SCHEMA) },
};

/** The legacy read-only MCP server of one request (a reader grant): `agentscm_workflow_status` only. */
export function legacyServer(runStatus: (runId: string) => Promise<CallToolResult>): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: CAPABILITIES });
  server.registerTool(
    LEGACY_STATUS_TOOL,
    {
      description:
        "Read-only status of a skill-workflow run of your repository: its state, each step's result and " +
        'observations, and whether its source is still current. Arguments: {"run_id"}. A run is an ' +
        'observation, never an approval.',
      inputSchema: fromJsonSchema(STATUS_INPUT_SCHEMA as JsonSchemaType, PASS_THROUGH),
    },
    async (args: unknown): Promise<CallToolResult> => {
      try {
        const runId =
          isJsonObject(args) && typeof args.run_id === 'string' && Object.keys(args).length === 1 ? args.run_id : null;
        if (runId === null) throw new AgentscmError('SCHEMA_TYPE', `${LEGACY_STATUS_TOOL} takes exactly {"run_id"}`);
        // Read in the hub's read worker, which also checks that the run is of the grant's repository.
        return await runStatus(runId);
      } catch (error) {
        return toolError(error);
      }
    },
  );
  return server;
}

/** What the HTTP layer hands an MCP request: the server of that request, already authorized. */
export type McpServerOf = () => McpServer;

/**
 * One SDK handler for all MCP requests of the hub. The per-request server comes in through
 * `authInfo.extra` (the SDK passes it through untouched and never derives it from headers).
 */
export function createHubMcpHandler(onerror: (error: Error) => void): McpHttpHandler {
  return createMcpHandler(
    (ctx) => {
      const serverOf = ctx.authInfo?.extra?.serverOf as McpServerOf | undefined;
      if (serverOf === undefined) throw new Error('an MCP request reached the SDK without an authorized server');
      return serverOf();
    },
    { maxRequestBodySize: HUB_JSON_BODY_MAX_BYTES, onerror },
  );
}
