/**
 * The agent-state contract (docs/agent-state.md): the envelope's strict decoding and rules, the
 * builder, reconcile by authority, eligibility and write-scope conflicts.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import {
  callAgentStateOperation,
  createAgentState,
  eligibleAgents,
  reconcileAgentStates,
  scopeConflicts,
} from '../../src/agent-state/operations.js';
import {
  agentStateDecoder,
  AUTHORITIES,
  CAPABILITIES,
  MAX_AGENT_STATE_INPUT_BYTES,
  MAX_AGENTS,
  MAX_OBSERVATIONS,
  MAX_SCOPES,
  type AgentState,
  type AgentStateCreateInput,
  type Authority,
} from '../../src/contracts/agent-state.js';
import { encodeCanonicalText } from '../../src/contracts/json/canonical-json.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import { codeOf } from '../helpers/errors.js';

function build(overrides: Partial<AgentStateCreateInput> = {}): AgentState {
  return createAgentState({
    agent_id: 'builder',
    backend: 'codex',
    task_id: 'task-1',
    state: 'working',
    state_source: 'native',
    ...overrides,
  });
}

function bytes(value: unknown): Uint8Array {
  return Buffer.from(encodeCanonicalText(value as JsonValue));
}

function call(operation: string, value: unknown): { value: Record<string, unknown>; exit: number } {
  const result = callAgentStateOperation(operation, bytes(value));
  return { value: result.value as Record<string, unknown>, exit: result.exit };
}

test('create completes the capability matrix: every undeclared capability is unknown', () => {
  const state = build({
    scopes: [{ path: 'skills/agent_state', access: 'write' }],
    capabilities: { send_message: 'native', mutate_workspace: 'native' },
  });
  assert.deepEqual(Object.keys(state.capabilities), [...CAPABILITIES]);
  assert.equal(state.capabilities.send_message, 'native');
  assert.equal(state.capabilities.resume, 'unknown');
  assert.equal(state.version, 1n);
  assert.equal(state.revision, 0n);
  // The built envelope decodes under the published schema.
  assert.doesNotThrow(() => agentStateDecoder.decode(bytes(state), 1 << 20));
});

test('create reads the builder arguments as the spec example names them', () => {
  const { value } = call('create', {
    agent_id: 'builder',
    backend: 'codex',
    task_id: 'task-1',
    state: 'working',
    state_source: 'native',
    scopes: [{ path: 'skills/agent_state', access: 'write' }],
    capabilities: { send_message: 'native', mutate_workspace: 'native' },
  });
  assert.equal(value.agent_id, 'builder');
  assert.deepEqual(value.scopes, [{ path: 'skills/agent_state', access: 'write' }]);
});

test('bad envelopes are refused with stable codes', () => {
  const good = build();
  const variants: [string, unknown, string][] = [
    [
      'unknown capability',
      { ...good, capabilities: { ...good.capabilities, teleport: 'native' } },
      'SCHEMA_UNKNOWN_FIELD',
    ],
    ['incomplete matrix', { ...good, capabilities: { resume: 'native' } }, 'SCHEMA_MISSING_FIELD'],
    ['unknown state', { ...good, state: 'sleeping' }, 'SCHEMA_TYPE'],
    ['unknown authority', { ...good, state_source: 'rumour' }, 'SCHEMA_TYPE'],
    ['version 2', { ...good, version: 2 }, 'SCHEMA_VERSION_UNSUPPORTED'],
    ['blocked without reason', { ...good, state: 'blocked' }, 'AGENT_STATE_INVALID'],
    ['reason without blocked', { ...good, blocked_reason: 'conflict' }, 'AGENT_STATE_INVALID'],
    [
      'result while working',
      {
        ...good,
        result: {
          outcome: 'succeeded',
          exit_code: 0,
          signal: null,
          changed_paths: [],
          scope_violations: [],
          summary: '',
        },
      },
      'AGENT_STATE_INVALID',
    ],
    [
      'duplicate scope',
      {
        ...good,
        scopes: [
          { path: 'src', access: 'read' },
          { path: 'src', access: 'write' },
        ],
      },
      'AGENT_STATE_INVALID',
    ],
    ['scope with ..', { ...good, scopes: [{ path: 'src/../etc', access: 'write' }] }, 'PATH_INVALID'],
    ['scope with trailing /', { ...good, scopes: [{ path: 'src/', access: 'write' }] }, 'PATH_INVALID'],
    ['absolute scope', { ...good, scopes: [{ path: '/etc', access: 'write' }] }, 'PATH_INVALID'],
    ['bad access', { ...good, scopes: [{ path: 'src', access: 'execute' }] }, 'SCHEMA_TYPE'],
    ['bad agent id', { ...good, agent_id: 'a b' }, 'ID_INVALID'],
  ];
  for (const [name, value, code] of variants)
    assert.equal(
      codeOf(() => callAgentStateOperation('validate', bytes(value))),
      code,
      name,
    );
  assert.equal(
    codeOf(() => callAgentStateOperation('validate', Buffer.from('{"version":1,"version":1}'))),
    'JSON_DUPLICATE_KEY',
  );
  assert.equal(
    codeOf(() => callAgentStateOperation('teleport', bytes({}))),
    'USAGE',
  );
  assert.deepEqual(call('validate', good).value, { valid: true, state: good });
});

test('scopes: at most 64 per envelope (64 accepted, 65 refused)', () => {
  const scopes = (n: number): { path: string; access: 'write' }[] =>
    Array.from({ length: n }, (_, i) => ({ path: `d${i}`, access: 'write' }));
  assert.equal(
    codeOf(() => callAgentStateOperation('validate', bytes(build({ scopes: scopes(MAX_SCOPES) })))),
    'ok',
  );
  assert.equal(
    codeOf(() => callAgentStateOperation('validate', bytes({ ...build(), scopes: scopes(MAX_SCOPES + 1) }))),
    'SCHEMA_BOUND',
  );
});

test('reconcile: for every pair of authorities, the stronger one wins in either order and whatever the revisions', () => {
  for (const strong of AUTHORITIES) {
    for (const weak of AUTHORITIES) {
      if (AUTHORITIES.indexOf(strong) >= AUTHORITIES.indexOf(weak)) continue;
      const strongObs = build({ state: 'working', state_source: strong, revision: 1n });
      // The weaker source reports a later revision and a different state: it still loses.
      const weakObs = build({
        state: 'failed',
        state_source: weak,
        revision: 99n,
        result: {
          outcome: 'failed',
          exit_code: 1,
          signal: null,
          changed_paths: [],
          scope_violations: [],
          summary: 'x',
        },
      });
      for (const order of [
        [strongObs, weakObs],
        [weakObs, strongObs],
      ]) {
        const outcome = reconcileAgentStates(order);
        assert.equal(outcome.state.state, 'working', `${strong} over ${weak}`);
        assert.equal(outcome.state.state_source, strong);
        assert.equal(outcome.overruled.length, 1);
        assert.equal(outcome.overruled[0]?.reason, 'weaker_source');
      }
    }
  }
});

test('reconcile: among equal sources the higher revision wins; equal revisions that disagree conflict', () => {
  const older = build({ state: 'working', revision: 1n });
  const newer = build({ state: 'idle', revision: 2n });
  assert.equal(reconcileAgentStates([newer, older]).state.state, 'idle');
  assert.equal(reconcileAgentStates([older, newer]).state.state, 'idle');
  assert.equal(reconcileAgentStates([older, newer]).overruled[0]?.reason, 'older_revision');
  assert.equal(reconcileAgentStates([older, older]).overruled[0]?.reason, 'same_observation');
  assert.equal(
    codeOf(() =>
      reconcileAgentStates([build({ state: 'working', revision: 3n }), build({ state: 'idle', revision: 3n })]),
    ),
    'AGENT_STATE_CONFLICT',
  );
  assert.equal(
    codeOf(() => reconcileAgentStates([build(), build({ agent_id: 'other' })])),
    'AGENT_STATE_MISMATCH',
  );
  assert.equal(
    codeOf(() => reconcileAgentStates([build(), build({ backend: 'claude-code' })])),
    'AGENT_STATE_MISMATCH',
  );
  assert.equal(
    codeOf(() => reconcileAgentStates([build(), build({ task_id: 'task-2' })])),
    'AGENT_STATE_MISMATCH',
  );
});

test('reconcile: each capability keeps its strongest declaration; unknown never erases one', () => {
  const native = build({ state_source: 'native', capabilities: { resume: 'terminal' } });
  const adapter = build({ state_source: 'adapter', capabilities: { resume: 'adapter', fork: 'terminal' } });
  const merged = reconcileAgentStates([native, adapter]).state;
  assert.equal(merged.capabilities.resume, 'adapter');
  assert.equal(merged.capabilities.fork, 'terminal');
  assert.equal(merged.capabilities.send_message, 'unknown');
});

test('reconcile: 64 observations accepted, 65 refused', () => {
  const obs = (n: number): AgentState[] => Array.from({ length: n }, (_, i) => build({ revision: BigInt(i) }));
  assert.equal(call('reconcile', { observations: obs(MAX_OBSERVATIONS) }).value.winner, MAX_OBSERVATIONS - 1);
  assert.equal(
    codeOf(() => call('reconcile', { observations: obs(MAX_OBSERVATIONS + 1) })),
    'SCHEMA_BOUND',
  );
  assert.equal(
    codeOf(() => call('reconcile', { observations: [] })),
    'SCHEMA_BOUND',
  );
});

test('eligible: unknown capabilities never satisfy a requirement; any declared authority does', () => {
  const agents = (AUTHORITIES as readonly Authority[]).map((authority, i) =>
    build({ agent_id: `a${i}`, capabilities: { resume: authority, fork: 'native' } }),
  );
  const outcome = eligibleAgents(agents, { resume: true, fork: true });
  assert.deepEqual(outcome.eligible, ['a0', 'a1', 'a2']);
  assert.deepEqual(outcome.ineligible, [{ agent_id: 'a3', missing: ['resume'] }]);
  // A capability nobody declared: no one is eligible, and the CLI answer exits 1.
  const none = call('eligible', { agents, require: { switch_model: true } });
  assert.deepEqual(none.value.eligible, []);
  assert.equal(none.exit, 1);
  assert.equal(
    codeOf(() => call('eligible', { agents, require: { switch_model: false } })),
    'SCHEMA_TYPE',
  );
  assert.equal(
    codeOf(() => call('eligible', { agents, require: { teleport: true } })),
    'SCHEMA_UNKNOWN_FIELD',
  );
  assert.equal(
    codeOf(() => call('eligible', { agents: [agents[0], agents[0]], require: {} })),
    'AGENT_STATE_INVALID',
  );
});

function writer(agent_id: string, paths: string[], state: AgentState['state'] = 'working'): AgentState {
  return build({
    agent_id,
    state,
    ...(state === 'blocked' ? { blocked_reason: 'dependency' } : {}),
    scopes: paths.map((path) => ({ path, access: 'write' })),
  });
}

test('conflicts: prefix, equal, disjoint and sibling names by whole components', () => {
  const cases: [string, string, 'equal' | 'contains' | null][] = [
    ['src', 'src/a', 'contains'],
    ['src/a', 'src/a', 'equal'],
    ['src/a', 'docs', null],
    ['src/a', 'src/ab', null],
    ['src/ab', 'src/a', null],
    ['src/a-b', 'src/a', null],
    ['.', 'docs/x', 'contains'],
    ['a/b/c', 'a', 'contains'],
  ];
  for (const [left, right, relation] of cases) {
    const { conflicts } = scopeConflicts([writer('x', [left]), writer('y', [right])]);
    if (relation === null) assert.deepEqual(conflicts, [], `${left} vs ${right}`);
    else {
      assert.equal(conflicts.length, 1, `${left} vs ${right}`);
      assert.equal(conflicts[0]?.relation, relation);
      const ancestorFirst = relation === 'contains' && left.length > right.length && left !== '.';
      assert.deepEqual(conflicts[0]?.agents, ancestorFirst ? ['y', 'x'] : ['x', 'y']);
    }
  }
});

test('conflicts: only active agents and only write scopes', () => {
  for (const state of ['completed', 'failed', 'cancelled'] as const)
    assert.deepEqual(scopeConflicts([writer('x', ['src']), writer('y', ['src'], state)]).conflicts, []);
  for (const state of ['queued', 'idle', 'blocked'] as const)
    assert.equal(scopeConflicts([writer('x', ['src']), writer('y', ['src'], state)]).conflicts.length, 1, state);
  const reader = build({ agent_id: 'r', scopes: [{ path: 'src', access: 'read' }] });
  assert.deepEqual(scopeConflicts([writer('x', ['src']), reader]).conflicts, []);
  // One agent's own nested scopes do not conflict with each other.
  assert.deepEqual(scopeConflicts([writer('x', ['src', 'src/a'])]).conflicts, []);
  const cli = call('conflicts', { agents: [writer('x', ['src']), writer('y', ['src/a'])] });
  assert.equal(cli.exit, 1);
  assert.deepEqual(cli.value.conflicts, [{ agents: ['x', 'y'], paths: ['src', 'src/a'], relation: 'contains' }]);
});

test('conflicts: 256 agents accepted, 257 refused', () => {
  const agents = (n: number): AgentState[] => Array.from({ length: n }, (_, i) => writer(`a${i}`, [`d${i}`]));
  assert.deepEqual(call('conflicts', { agents: agents(MAX_AGENTS) }).value.conflicts, []);
  assert.equal(
    codeOf(() => call('conflicts', { agents: agents(MAX_AGENTS + 1) })),
    'SCHEMA_BOUND',
  );
});

test('input: 4 MiB accepted, one byte more refused before parsing', () => {
  const body = Buffer.from(encodeCanonicalText({ agents: [] }));
  const padded = (size: number): Buffer => Buffer.concat([body, Buffer.alloc(size - body.length, 0x20)]);
  assert.equal(MAX_AGENT_STATE_INPUT_BYTES, 4 * 1024 * 1024);
  assert.equal(
    codeOf(() => callAgentStateOperation('conflicts', padded(MAX_AGENT_STATE_INPUT_BYTES))),
    'ok',
  );
  assert.equal(
    codeOf(() => callAgentStateOperation('conflicts', padded(MAX_AGENT_STATE_INPUT_BYTES + 1))),
    'INPUT_TOO_LARGE',
  );
});
