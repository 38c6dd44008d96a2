/** `agentscm agent-state create|validate|reconcile|eligible|conflicts` as a user runs them: stdin or FILE, --json, exit codes. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const BUILDER = {
  agent_id: 'builder',
  backend: 'codex',
  task_id: 'task-1',
  state: 'working',
  state_source: 'native',
  scopes: [{ path: 'skills/agent_state', access: 'write' }],
  capabilities: { send_message: 'native', mutate_workspace: 'native' },
};

test('create from stdin, then validate and conflicts from files, with --json and exit codes', async (t) => {
  const dir = tempDir(t);
  const created = await runCli(['agent-state', 'create', '--json'], { input: JSON.stringify(BUILDER) });
  assert.equal(created.code, 0, created.stderr);
  const state = jsonOf<{ capabilities: Record<string, string>; revision: number }>(created);
  assert.equal(state.capabilities.resume, 'unknown');
  const file = join(dir, 'state.json');
  writeFileSync(file, created.stdout);
  const valid = await runCli(['agent-state', 'validate', file, '--json']);
  assert.equal(valid.code, 0, valid.stderr);
  assert.equal(jsonOf(valid).valid, true);

  const other = { ...state, agent_id: 'reviewer', scopes: [{ path: 'skills', access: 'write' }] };
  const agents = join(dir, 'agents.json');
  writeFileSync(agents, JSON.stringify({ agents: [state, other] }));
  const conflicts = await runCli(['agent-state', 'conflicts', agents, '--json']);
  assert.equal(conflicts.code, 1, conflicts.stderr);
  assert.deepEqual(jsonOf(conflicts).conflicts, [
    { agents: ['reviewer', 'builder'], paths: ['skills', 'skills/agent_state'], relation: 'contains' },
  ]);

  const eligible = await runCli(['agent-state', 'eligible', '-', '--json'], {
    input: JSON.stringify({ agents: [state, other], require: { send_message: true } }),
  });
  assert.equal(eligible.code, 0, eligible.stderr);
  assert.deepEqual(jsonOf(eligible).eligible, ['builder', 'reviewer']);
});

test('invalid input exits 2 with a stable code on stderr and in --json', async () => {
  const bad = await runCli(['agent-state', 'create', '--json'], {
    input: JSON.stringify({ ...BUILDER, capabilities: { teleport: 'native' } }),
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^error\[SCHEMA_UNKNOWN_FIELD\]/);
  assert.equal(jsonOf<{ error: { code: string } }>(bad).error.code, 'SCHEMA_UNKNOWN_FIELD');
  const conflict = await runCli(['agent-state', 'reconcile'], {
    input: JSON.stringify({
      observations: [{ ...BUILDER, state: 'idle' }, BUILDER].map((o) => ({
        version: 1,
        ...o,
        blocked_reason: null,
        capabilities: {
          resume: 'unknown',
          fork: 'unknown',
          read_transcript: 'unknown',
          send_message: 'native',
          switch_model: 'unknown',
          mutate_workspace: 'native',
        },
        revision: 4,
        result: null,
      })),
    }),
  });
  assert.equal(conflict.code, 3);
  assert.match(conflict.stderr, /^error\[AGENT_STATE_CONFLICT\]/);
});
