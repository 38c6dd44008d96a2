/**
 * The agent-state envelope v1 and the inputs of its operations (docs/agent-state.md "The envelope (v1)": lifecycle
 * state, state authority, declared scopes, a complete capability matrix, revision, an optional
 * completion result). Wire schemas live here so that the registry publishes them as
 * docs/schemas/agent-state-*.schema.json; the operations are in src/agent-state/.
 */
import { AgentscmError } from './errors.js';
import { ID_SCHEMA } from './ids.js';
import { defineDecoder } from './json/schema.js';

/** Lifecycle states (docs/agent-state.md "The envelope (v1)" "backend-neutral lifecycle state"). */
export const LIFECYCLE_STATES = ['queued', 'working', 'idle', 'blocked', 'completed', 'failed', 'cancelled'] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

/** States whose agent still holds its declared scopes (conflicts consider only these). */
export const ACTIVE_STATES: ReadonlySet<LifecycleState> = new Set(['queued', 'working', 'idle', 'blocked']);

/** Why an agent is blocked; required exactly when the state is `blocked`. */
export const BLOCKED_REASONS = [
  'conflict',
  'stale_lease',
  'scope_violation',
  'awaiting_input',
  'dependency',
  'other',
] as const;
export type BlockedReason = (typeof BLOCKED_REASONS)[number];

/** Authorities, strongest first (spec: `native > adapter > terminal > unknown`). */
export const AUTHORITIES = ['native', 'adapter', 'terminal', 'unknown'] as const;
export type Authority = (typeof AUTHORITIES)[number];

/** Rank of an authority: higher is stronger; `unknown` is 0. */
export function authorityRank(authority: Authority): number {
  return AUTHORITIES.length - 1 - AUTHORITIES.indexOf(authority);
}

/** The capability matrix of v1: every envelope names all of them (undeclared = `unknown`). */
export const CAPABILITIES = [
  'resume',
  'fork',
  'read_transcript',
  'send_message',
  'switch_model',
  'mutate_workspace',
] as const;
export type Capability = (typeof CAPABILITIES)[number];
export type CapabilityMatrix = Record<Capability, Authority>;

export const SCOPE_ACCESS = ['read', 'write'] as const;
export type ScopeAccess = (typeof SCOPE_ACCESS)[number];

export const RESULT_OUTCOMES = ['succeeded', 'failed', 'timed_out', 'unverified', 'cancelled'] as const;
export type ResultOutcome = (typeof RESULT_OUTCOMES)[number];

/** Bounds of the envelope. */
export const MAX_SCOPES = 64;
export const MAX_SCOPE_PATH_BYTES = 1024;
export const MAX_RESULT_PATHS = 1000;
export const MAX_SUMMARY_BYTES = 4096;
export const MAX_AGENTS = 256;
export const MAX_OBSERVATIONS = 64;
/** Largest input document of any agent-state operation. */
export const MAX_AGENT_STATE_INPUT_BYTES = 4 * 1024 * 1024;
/** The envelope version this build writes and reads. */
export const AGENT_STATE_VERSION = 1;

export interface Scope {
  readonly path: string;
  readonly access: ScopeAccess;
}

export interface AgentStateResult {
  readonly outcome: ResultOutcome;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly changed_paths: readonly string[];
  readonly scope_violations: readonly string[];
  readonly summary: string;
}

/** The agent-state envelope v1 (declared field order = output order). */
export interface AgentState {
  readonly version: bigint;
  readonly agent_id: string;
  readonly backend: string;
  readonly task_id: string | null;
  readonly state: LifecycleState;
  readonly blocked_reason: BlockedReason | null;
  readonly state_source: Authority;
  readonly scopes: readonly Scope[];
  readonly capabilities: CapabilityMatrix;
  readonly revision: bigint;
  readonly result: AgentStateResult | null;
}

/** The builder's arguments, named as in the spec's example (`create`). */
export interface AgentStateCreateInput {
  readonly agent_id: string;
  readonly backend: string;
  readonly task_id?: string | null;
  readonly state: LifecycleState;
  readonly blocked_reason?: BlockedReason | null;
  readonly state_source?: Authority;
  readonly scopes?: readonly Scope[];
  readonly capabilities?: Partial<CapabilityMatrix>;
  readonly revision?: bigint;
  readonly result?: AgentStateResult | null;
}

/**
 * A scope path: repository-relative, `/`-separated, no empty, `.` or `..` component, no leading
 * or trailing `/`, no control character; `.` alone is the whole repository. Any UTF-8 otherwise
 * (docs/wire.md "Workspace paths"); the component rules are checked by scopePathProblem.
 */
const SCOPE_PATH_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxUtf8Bytes: MAX_SCOPE_PATH_BYTES,
  pattern: '^[^\\u0000-\\u001f\\u007f]+$',
} as const;
const AUTHORITY_SCHEMA = { type: 'string', enum: [...AUTHORITIES] } as const;

const SCOPE_SCHEMA = {
  type: 'object',
  required: ['path', 'access'],
  additionalProperties: false,
  properties: { path: SCOPE_PATH_SCHEMA, access: { type: 'string', enum: [...SCOPE_ACCESS] } },
} as const;

const RESULT_SCHEMA = {
  type: ['object', 'null'],
  required: ['outcome', 'exit_code', 'signal', 'changed_paths', 'scope_violations', 'summary'],
  additionalProperties: false,
  properties: {
    outcome: { type: 'string', enum: [...RESULT_OUTCOMES] },
    exit_code: { type: ['integer', 'null'], minimum: 0, maximum: 255 },
    signal: { type: ['string', 'null'], maxLength: 16, pattern: '^SIG[A-Z0-9]{1,13}$' },
    changed_paths: { type: 'array', maxItems: MAX_RESULT_PATHS, items: SCOPE_PATH_SCHEMA },
    scope_violations: { type: 'array', maxItems: MAX_RESULT_PATHS, items: SCOPE_PATH_SCHEMA },
    summary: { type: 'string', maxUtf8Bytes: MAX_SUMMARY_BYTES },
  },
} as const;

const capabilityProperties = Object.fromEntries(CAPABILITIES.map((name) => [name, AUTHORITY_SCHEMA]));

const COMMON_PROPERTIES = {
  agent_id: ID_SCHEMA,
  backend: ID_SCHEMA,
  task_id: { type: ['string', 'null'], minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._-]{1,128}$', idKind: 'id' },
  state: { type: 'string', enum: [...LIFECYCLE_STATES] },
  blocked_reason: { type: ['string', 'null'], enum: [...BLOCKED_REASONS, null] },
  state_source: AUTHORITY_SCHEMA,
  scopes: { type: 'array', maxItems: MAX_SCOPES, items: SCOPE_SCHEMA },
  revision: { u64: true },
  result: RESULT_SCHEMA,
} as const;

/** JSON Schema of the envelope v1 (published as docs/schemas/agent-state-v1.schema.json). */
export const AGENT_STATE_SCHEMA = {
  type: 'object',
  required: [
    'version',
    'agent_id',
    'backend',
    'task_id',
    'state',
    'blocked_reason',
    'state_source',
    'scopes',
    'capabilities',
    'revision',
    'result',
  ],
  additionalProperties: false,
  properties: {
    version: { u64: { minimum: '1', maximum: '1' } },
    ...COMMON_PROPERTIES,
    capabilities: {
      type: 'object',
      required: [...CAPABILITIES],
      additionalProperties: false,
      properties: capabilityProperties,
    },
  },
} as const;

/** The builder's input: the envelope's fields less version, most optional (spec example names). */
export const AGENT_STATE_CREATE_SCHEMA = {
  type: 'object',
  required: ['agent_id', 'backend', 'state'],
  additionalProperties: false,
  properties: {
    ...COMMON_PROPERTIES,
    capabilities: { type: 'object', additionalProperties: false, properties: capabilityProperties },
  },
} as const;

export const AGENT_STATE_RECONCILE_SCHEMA = {
  type: 'object',
  required: ['observations'],
  additionalProperties: false,
  properties: { observations: { type: 'array', minItems: 1, maxItems: MAX_OBSERVATIONS, items: AGENT_STATE_SCHEMA } },
} as const;

export const AGENT_STATE_CONFLICTS_SCHEMA = {
  type: 'object',
  required: ['agents'],
  additionalProperties: false,
  properties: { agents: { type: 'array', maxItems: MAX_AGENTS, items: AGENT_STATE_SCHEMA } },
} as const;

export const AGENT_STATE_ELIGIBLE_SCHEMA = {
  type: 'object',
  required: ['agents', 'require'],
  additionalProperties: false,
  properties: {
    agents: { type: 'array', maxItems: MAX_AGENTS, items: AGENT_STATE_SCHEMA },
    require: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(CAPABILITIES.map((name) => [name, { type: 'boolean', const: true }])),
    },
  },
} as const;

/** Why a scope path is not canonical, or undefined when it is (`.` is the repository root). */
export function scopePathProblem(path: string): string | undefined {
  if (path === '.') return undefined;
  if (path.length === 0) return 'it is empty';
  if (Buffer.byteLength(path, 'utf8') > MAX_SCOPE_PATH_BYTES)
    return `it is longer than ${MAX_SCOPE_PATH_BYTES} UTF-8 bytes`;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return `it contains the control character 0x${c.toString(16).padStart(2, '0')} at ${i}`;
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = path.charCodeAt(i + 1);
      if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return `it contains a lone surrogate at ${i}`;
      i++;
    }
  }
  if (path.startsWith('/')) return 'it starts with / (absolute)';
  if (path.endsWith('/')) return 'it ends with /';
  for (const component of path.split('/')) {
    if (component === '') return 'it has an empty component (//)';
    if (component === '.') return 'it has a "." component';
    if (component === '..') return 'it has a ".." component';
  }
  return undefined;
}

/** A canonical scope path, or PATH_INVALID (docs/agent-state.md "The envelope (v1)"). */
export function validateScopePath(path: string, what = 'scope path'): string {
  const problem = scopePathProblem(path);
  if (problem !== undefined) {
    const shown = path.length > 80 ? `${JSON.stringify(path.slice(0, 80))}…` : JSON.stringify(path);
    throw new AgentscmError(
      'PATH_INVALID',
      `${what} ${shown} is not a canonical repository-relative path: ${problem}`,
      {
        hint:
          'write the path relative to the repository root, / between components, without ., .. or a trailing /; ' +
          '"." is the whole repository',
        details: { what, reason: problem },
      },
    );
  }
  return path;
}

/** Whole-component containment: `dir` is `path` or one of its ancestors (`.` contains everything). */
export function isScopeWithin(dir: string, path: string): boolean {
  if (dir === '.') return true;
  if (path === '.') return false;
  return path === dir || (path.startsWith(dir) && path.charCodeAt(dir.length) === 0x2f);
}

/** Decoder of the envelope v1 (`validate`). */
export const agentStateDecoder = defineDecoder<AgentState>('agent-state-v1', AGENT_STATE_SCHEMA, {
  versionField: 'version',
  supportedVersions: [AGENT_STATE_VERSION],
});
/** Decoder of the builder's input (`create`). */
export const agentStateCreateDecoder = defineDecoder<AgentStateCreateInput>(
  'agent-state-create-v1',
  AGENT_STATE_CREATE_SCHEMA,
);
/** Decoder of `{observations: [envelope…]}` (`reconcile`). */
export const agentStateReconcileDecoder = defineDecoder<{ observations: AgentState[] }>(
  'agent-state-reconcile-v1',
  AGENT_STATE_RECONCILE_SCHEMA,
);
/** Decoder of `{agents: [envelope…]}` (`conflicts`). */
export const agentStateConflictsDecoder = defineDecoder<{ agents: AgentState[] }>(
  'agent-state-conflicts-v1',
  AGENT_STATE_CONFLICTS_SCHEMA,
);
/** Decoder of `{agents: [envelope…], require: {capability: true…}}` (`eligible`). */
export const agentStateEligibleDecoder = defineDecoder<{
  agents: AgentState[];
  require: Partial<Record<Capability, true>>;
}>('agent-state-eligible-v1', AGENT_STATE_ELIGIBLE_SCHEMA);
