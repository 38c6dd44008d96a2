/**
 * The agent-state operations (docs/agent-state.md "Operations": `create`, `validate`, `reconcile`,
 * `eligible`, `conflicts`), one pure function each, plus callAgentStateOperation, the one entry a
 * transport (the CLI today, the hub's MCP tool `agent_state` later) calls with the operation name
 * and the input bytes. No I/O here.
 */
import {
  ACTIVE_STATES,
  AGENT_STATE_VERSION,
  agentStateConflictsDecoder,
  agentStateCreateDecoder,
  agentStateDecoder,
  agentStateEligibleDecoder,
  agentStateReconcileDecoder,
  authorityRank,
  CAPABILITIES,
  MAX_AGENT_STATE_INPUT_BYTES,
  validateScopePath,
  type AgentState,
  type AgentStateCreateInput,
  type Capability,
  type CapabilityMatrix,
  type LifecycleState,
  type Scope,
} from '../contracts/agent-state.js';
import { AgentscmError, type ErrorDetails } from '../contracts/errors.js';
import { validateId } from '../contracts/ids.js';
import { encodeCanonicalText } from '../contracts/json/canonical-json.js';
import type { JsonValue } from '../contracts/json/json-value.js';

/** The operation names, as the CLI and the MCP tool `agent_state` take them. */
export const AGENT_STATE_OPERATIONS = ['create', 'validate', 'reconcile', 'eligible', 'conflicts'] as const;
export type AgentStateOperation = (typeof AGENT_STATE_OPERATIONS)[number];

const NO_RESULT_STATES: ReadonlySet<LifecycleState> = new Set(['queued', 'working']);

function invalid(message: string, details: ErrorDetails<'AGENT_STATE_INVALID'>, hint?: string): AgentscmError {
  return new AgentscmError('AGENT_STATE_INVALID', message, { details, ...(hint === undefined ? {} : { hint }) });
}

/** The rules of an envelope that its schema cannot state (docs/agent-state.md "The envelope"). */
export function checkAgentState(state: AgentState, at = '/'): AgentState {
  if ((state.state === 'blocked') !== (state.blocked_reason !== null)) {
    throw invalid(
      `${at}: blocked_reason must be set exactly when the state is blocked (state ${state.state}, blocked_reason ` +
        `${String(state.blocked_reason)})`,
      { pointer: at, state: state.state },
      'give a blocked_reason with state blocked, and null otherwise',
    );
  }
  if (state.result !== null && NO_RESULT_STATES.has(state.state)) {
    throw invalid(
      `${at}: a ${state.state} agent has no completion result`,
      { pointer: at, state: state.state },
      'send result null until the work ends',
    );
  }
  checkScopes(state.scopes, at);
  if (state.result !== null) {
    state.result.changed_paths.forEach((path, i) => validateScopePath(path, `${at}result/changed_paths/${i}`));
    state.result.scope_violations.forEach((path, i) => validateScopePath(path, `${at}result/scope_violations/${i}`));
  }
  return state;
}

function checkScopes(scopes: readonly Scope[], at: string): void {
  const seen = new Set<string>();
  scopes.forEach((scope, i) => {
    validateScopePath(scope.path, `${at}scopes/${i}/path`);
    if (seen.has(scope.path)) {
      throw invalid(
        `${at}scopes/${i}: the path ${JSON.stringify(scope.path)} is declared twice`,
        { pointer: `${at}scopes/${i}`, path: scope.path },
        'declare each path once, with its widest access',
      );
    }
    seen.add(scope.path);
  });
}

/** Complete a partial capability matrix: every undeclared capability is `unknown`. */
export function completeCapabilities(declared: Partial<CapabilityMatrix> = {}): CapabilityMatrix {
  const matrix = {} as Record<Capability, CapabilityMatrix[Capability]>;
  for (const name of CAPABILITIES) matrix[name] = declared[name] ?? 'unknown';
  return matrix;
}

/** `create`: build an envelope v1 from the builder's arguments (docs/agent-state.md "Operations"). */
export function createAgentState(input: AgentStateCreateInput): AgentState {
  // In-process callers (agent-state run, a hub) skip the decoder: check the identifiers here.
  validateId(input.agent_id, 'agent_id');
  validateId(input.backend, 'backend');
  if (input.task_id !== undefined && input.task_id !== null) validateId(input.task_id, 'task_id');
  const state: AgentState = {
    version: BigInt(AGENT_STATE_VERSION),
    agent_id: input.agent_id,
    backend: input.backend,
    task_id: input.task_id ?? null,
    state: input.state,
    blocked_reason: input.blocked_reason ?? null,
    state_source: input.state_source ?? 'unknown',
    scopes: (input.scopes ?? []).map((scope) => ({ path: scope.path, access: scope.access })),
    capabilities: completeCapabilities(input.capabilities),
    revision: input.revision ?? 0n,
    result: input.result ?? null,
  };
  return checkAgentState(state);
}

export interface ValidateOutcome {
  readonly valid: true;
  readonly state: AgentState;
}

/** `validate`: an envelope passes its schema and the rules of checkAgentState. */
export function validateAgentState(state: AgentState): ValidateOutcome {
  return { valid: true, state: checkAgentState(state) };
}

export interface Overruled {
  readonly index: number;
  readonly state_source: AgentState['state_source'];
  readonly revision: bigint;
  readonly reason: 'weaker_source' | 'older_revision' | 'same_observation';
}

export interface ReconcileOutcome {
  readonly state: AgentState;
  /** Index of the observation whose lifecycle state, scopes and result were kept. */
  readonly winner: number;
  readonly overruled: readonly Overruled[];
}

/**
 * `reconcile`: merge observations of one agent by authority (`native > adapter > terminal >
 * unknown`). The lifecycle state, scopes and result come from the strongest source, the highest
 * revision among equals; a weaker source never overwrites a stronger one, whatever its revision
 * or position. Each capability keeps its strongest declaration. The outcome does not depend on
 * the order of the observations; two different observations of equal source and revision are
 * AGENT_STATE_CONFLICT.
 */
export function reconcileAgentStates(observations: readonly AgentState[]): ReconcileOutcome {
  const first = observations[0];
  if (first === undefined) throw invalid('reconcile needs at least one observation', { pointer: '/observations' });
  observations.forEach((observation, i) => {
    checkAgentState(observation, `/observations/${i}/`);
    for (const field of ['agent_id', 'backend', 'task_id'] as const) {
      if (observation[field] !== first[field]) {
        throw new AgentscmError(
          'AGENT_STATE_MISMATCH',
          `/observations/${i}: ${field} ${JSON.stringify(observation[field])} differs from ` +
            `${JSON.stringify(first[field])} of /observations/0`,
          { hint: 'reconcile the observations of one agent, backend and task at a time', details: { index: i, field } },
        );
      }
    }
  });
  const key = (o: AgentState): [number, bigint] => [authorityRank(o.state_source), o.revision];
  let winner = 0;
  for (let i = 1; i < observations.length; i++) {
    const [rank, revision] = key(observations[i] as AgentState);
    const [bestRank, bestRevision] = key(observations[winner] as AgentState);
    if (rank > bestRank || (rank === bestRank && revision > bestRevision)) winner = i;
  }
  const best = observations[winner] as AgentState;
  const [bestRank, bestRevision] = key(best);
  const bestText = encodeCanonicalText(best as unknown as JsonValue);
  const overruled: Overruled[] = [];
  observations.forEach((observation, i) => {
    if (i === winner) return;
    const [rank, revision] = key(observation);
    if (rank === bestRank && revision === bestRevision) {
      if (encodeCanonicalText(observation as unknown as JsonValue) !== bestText) {
        throw new AgentscmError(
          'AGENT_STATE_CONFLICT',
          `/observations/${i} and /observations/${winner} are both ${observation.state_source} observations of ` +
            `revision ${revision} and disagree`,
          {
            hint: 'a source must raise the revision whenever it reports a change',
            details: { indices: [winner, i], state_source: observation.state_source, revision: revision.toString() },
          },
        );
      }
      overruled.push({ index: i, state_source: observation.state_source, revision, reason: 'same_observation' });
      return;
    }
    overruled.push({
      index: i,
      state_source: observation.state_source,
      revision,
      reason: rank < bestRank ? 'weaker_source' : 'older_revision',
    });
  });
  const capabilities = { ...best.capabilities };
  for (const observation of observations) {
    for (const name of CAPABILITIES) {
      if (authorityRank(observation.capabilities[name]) > authorityRank(capabilities[name]))
        capabilities[name] = observation.capabilities[name];
    }
  }
  return { state: { ...best, capabilities }, winner, overruled };
}

function checkDistinctAgents(agents: readonly AgentState[]): void {
  const seen = new Map<string, number>();
  agents.forEach((agent, i) => {
    checkAgentState(agent, `/agents/${i}/`);
    const previous = seen.get(agent.agent_id);
    if (previous !== undefined) {
      throw invalid(
        `/agents/${i}: agent ${agent.agent_id} is listed twice (also /agents/${previous})`,
        { pointer: `/agents/${i}`, agent_id: agent.agent_id },
        'reconcile the observations of one agent first, then list it once',
      );
    }
    seen.set(agent.agent_id, i);
  });
}

export interface EligibleOutcome {
  readonly required: readonly Capability[];
  readonly eligible: readonly string[];
  readonly ineligible: readonly { readonly agent_id: string; readonly missing: readonly Capability[] }[];
}

/** `eligible`: the agents whose matrix declares every required capability; `unknown` never satisfies one. */
export function eligibleAgents(
  agents: readonly AgentState[],
  require: Partial<Record<Capability, true>>,
): EligibleOutcome {
  checkDistinctAgents(agents);
  const required = CAPABILITIES.filter((name) => require[name] === true);
  const eligible: string[] = [];
  const ineligible: { agent_id: string; missing: Capability[] }[] = [];
  for (const agent of agents) {
    const missing = required.filter((name) => agent.capabilities[name] === 'unknown');
    if (missing.length === 0) eligible.push(agent.agent_id);
    else ineligible.push({ agent_id: agent.agent_id, missing });
  }
  return { required, eligible, ineligible };
}

export interface ScopeConflict {
  readonly agents: readonly [string, string];
  readonly paths: readonly [string, string];
  /** `equal`: the same path; `contains`: the first path is an ancestor of the second. */
  readonly relation: 'equal' | 'contains';
}

export interface ConflictsOutcome {
  readonly active: readonly string[];
  readonly conflicts: readonly ScopeConflict[];
}

/** The path itself and each of its ancestors, `.` (the whole repository) last. */
function selfAndAncestors(path: string): string[] {
  if (path === '.') return ['.'];
  const out = [path];
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) out.push(path.slice(0, i));
  out.push('.');
  return out;
}

/**
 * `conflicts`: pairs of active agents (queued, working, idle, blocked) whose write scopes
 * overlap — the same canonical path, or one an ancestor of the other by whole components
 * (`src/a` and `src/ab` are disjoint). Read scopes never conflict.
 */
export function scopeConflicts(agents: readonly AgentState[]): ConflictsOutcome {
  checkDistinctAgents(agents);
  const active = agents.filter((agent) => ACTIVE_STATES.has(agent.state));
  const writers = new Map<string, string[]>();
  for (const agent of active) {
    for (const scope of agent.scopes) {
      if (scope.access !== 'write') continue;
      const list = writers.get(scope.path);
      if (list === undefined) writers.set(scope.path, [agent.agent_id]);
      else list.push(agent.agent_id);
    }
  }
  const conflicts: ScopeConflict[] = [];
  for (const agent of active) {
    for (const scope of agent.scopes) {
      if (scope.access !== 'write') continue;
      for (const ancestor of selfAndAncestors(scope.path)) {
        for (const other of writers.get(ancestor) ?? []) {
          if (other === agent.agent_id) continue;
          if (ancestor === scope.path) {
            // Report an equal pair once, in input order.
            if (active.findIndex((a) => a.agent_id === other) > active.indexOf(agent))
              conflicts.push({ agents: [agent.agent_id, other], paths: [scope.path, scope.path], relation: 'equal' });
          } else {
            conflicts.push({ agents: [other, agent.agent_id], paths: [ancestor, scope.path], relation: 'contains' });
          }
        }
      }
    }
  }
  return { active: active.map((agent) => agent.agent_id), conflicts };
}

export interface OperationResult {
  readonly operation: AgentStateOperation;
  readonly value: JsonValue;
  /** 0, or 1 when the operation reports a blocking answer (conflicts found, no agent eligible). */
  readonly exit: 0 | 1;
}

function isOperation(name: string): name is AgentStateOperation {
  return (AGENT_STATE_OPERATIONS as readonly string[]).includes(name);
}

/**
 * Run one operation on its strict JSON input (the bytes of a file, stdin, or an MCP argument):
 * size check, strict parse, schema, the operation's rules, the typed answer.
 */
export function callAgentStateOperation(operation: string, input: Uint8Array): OperationResult {
  if (!isOperation(operation)) {
    throw new AgentscmError('USAGE', `unknown agent-state operation ${JSON.stringify(operation.slice(0, 64))}`, {
      hint: `use one of ${AGENT_STATE_OPERATIONS.join(', ')}`,
    });
  }
  const max = MAX_AGENT_STATE_INPUT_BYTES;
  switch (operation) {
    case 'create':
      return {
        operation,
        value: createAgentState(agentStateCreateDecoder.decode(input, max)) as unknown as JsonValue,
        exit: 0,
      };
    case 'validate':
      return {
        operation,
        value: validateAgentState(agentStateDecoder.decode(input, max)) as unknown as JsonValue,
        exit: 0,
      };
    case 'reconcile':
      return {
        operation,
        value: reconcileAgentStates(agentStateReconcileDecoder.decode(input, max).observations) as unknown as JsonValue,
        exit: 0,
      };
    case 'eligible': {
      const { agents, require } = agentStateEligibleDecoder.decode(input, max);
      const outcome = eligibleAgents(agents, require);
      return { operation, value: outcome as unknown as JsonValue, exit: outcome.eligible.length === 0 ? 1 : 0 };
    }
    case 'conflicts': {
      const outcome = scopeConflicts(agentStateConflictsDecoder.decode(input, max).agents);
      return { operation, value: outcome as unknown as JsonValue, exit: outcome.conflicts.length === 0 ? 0 : 1 };
    }
  }
}
