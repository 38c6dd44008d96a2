/**
 * The workspace MCP tool `agent_state` (docs/hub.md "The `agent_state` tool": the hub exposes the
 * agent-state operations as the MCP tool `agent_state` with an `operation` argument):
 * `{operation, input}` handed to callAgentStateOperation, the entry the `agentscm agent-state`
 * commands call, so the answer is the JSON those commands print with --json. Transport facts only —
 * the argument frame and the input schema built from each operation's published schema; mcp.ts
 * registers the tool.
 */
import {
  AGENT_STATE_OPERATIONS,
  callAgentStateOperation,
  type AgentStateOperation,
} from '../agent-state/operations.js';
import {
  agentStateConflictsDecoder,
  agentStateCreateDecoder,
  agentStateDecoder,
  agentStateEligibleDecoder,
  agentStateReconcileDecoder,
} from '../contracts/agent-state.js';
import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';

export const AGENT_STATE_TOOL = 'agent_state';

export const AGENT_STATE_TOOL_DESCRIPTION =
  'Agent-state contract for concurrent agents (lifecycle state, declared capabilities, write scopes); reads and ' +
  'writes no store. Arguments {"operation","input"}: create (input: the builder\'s arguments {agent_id, ' +
  'backend, state, ...}) answers an envelope v1; validate (input: an envelope) answers {valid, state}; ' +
  'reconcile ({observations:[envelope...]}) merges observations of one agent by authority native > adapter > ' +
  'terminal > unknown; eligible ({agents, require:{capability:true}}) lists the agents declaring every ' +
  'required capability; conflicts ({agents}) lists pairs of active agents whose write scopes overlap. An empty ' +
  'eligible list or a non-empty conflicts list is an answer, not an error.';

/** The published schema of each operation's input (docs/schemas/agent-state-*.schema.json). */
const INPUT_SCHEMAS: Record<AgentStateOperation, object> = {
  create: agentStateCreateDecoder.schema,
  validate: agentStateDecoder.schema,
  reconcile: agentStateReconcileDecoder.schema,
  eligible: agentStateEligibleDecoder.schema,
  conflicts: agentStateConflictsDecoder.schema,
};

/**
 * The tool's input schema, in the contracts' dialect (mcp.ts makes it plain JSON Schema). The
 * pairing of operation and input is stated per alternative of `input` (its title and
 * description), not by a top-level `oneOf`, which several MCP clients refuse in a tool schema;
 * the operation's strict decoder is the one validator either way.
 */
export function agentStateToolSchema(): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['operation', 'input'],
    properties: {
      operation: { type: 'string', enum: [...AGENT_STATE_OPERATIONS] },
      input: {
        anyOf: AGENT_STATE_OPERATIONS.map((operation) => ({
          title: operation,
          description: `the input of operation ${operation}`,
          ...INPUT_SCHEMAS[operation],
        })),
      },
    },
  };
}

/** Run one call of the tool: the argument frame checked, then the agent-state core on the input's bytes. */
export function callAgentStateTool(args: unknown): JsonValue {
  if (!isJsonObject(args))
    throw new AgentscmError(
      'SCHEMA_TYPE',
      `the arguments of ${AGENT_STATE_TOOL} must be an object {"operation","input"}`,
    );
  for (const key of Object.keys(args)) {
    if (key !== 'operation' && key !== 'input') {
      throw new AgentscmError(
        'SCHEMA_UNKNOWN_FIELD',
        `${AGENT_STATE_TOOL} takes {"operation","input"}, not ${JSON.stringify(key.slice(0, 64))}`,
      );
    }
  }
  const { operation, input } = args;
  if (operation === undefined || input === undefined) {
    throw new AgentscmError('SCHEMA_MISSING_FIELD', `${AGENT_STATE_TOOL} needs both "operation" and "input"`, {
      hint: `operation is one of ${AGENT_STATE_OPERATIONS.join(', ')}; input is that operation's document`,
    });
  }
  if (typeof operation !== 'string') throw new AgentscmError('SCHEMA_TYPE', '/operation must be a string');
  if (!isJsonObject(input))
    throw new AgentscmError('SCHEMA_TYPE', "/input must be an object, the operation's input document");
  return callAgentStateOperation(operation, encodeCanonical(input)).value;
}
