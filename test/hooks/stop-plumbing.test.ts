/**
 * The Stop hook plumbing shared by every Stop hook: payload decoding (Codex: exactly its input
 * schema; Claude Code with and without stop_hook_active), the 8-continuation counter on a real
 * data directory, and the output shapes (Codex answers checked against Codex's own output
 * schema, read from the copy under docs/schemas/external/).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { Ajv } from 'ajv';

import { stopCounterFile } from '../../src/hooks/stop/counter.js';
import { guardStop } from '../../src/hooks/stop/guard.js';
import { renderStopOutput, type StopDecision } from '../../src/hooks/stop/output.js';
import { decodeStopPayload } from '../../src/hooks/stop/payload.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const EXTERNAL = join(REPO_ROOT, 'docs', 'schemas', 'external', 'codex-hooks');
const schema = (name: string): object => JSON.parse(readFileSync(join(EXTERNAL, name), 'utf8')) as object;
const ajv = new Ajv({ strict: false, allowUnionTypes: true });
const validInput = ajv.compile(schema('stop.command.input.schema.json'));
const validOutput = ajv.compile(schema('stop.command.output.schema.json'));

const bytes = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/** Every combination the Codex input schema allows for its enum, nullable and boolean fields. */
function codexInputs(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const permission_mode of ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions']) {
    for (const nullable of [null, '', 'text with "quotes" and \u00e9']) {
      for (const stop_hook_active of [true, false]) {
        out.push({
          cwd: '/repo',
          hook_event_name: 'Stop',
          last_assistant_message: nullable,
          model: 'gpt-5',
          permission_mode,
          session_id: 's-1',
          stop_hook_active,
          transcript_path: nullable,
          turn_id: 't-1',
        });
      }
    }
  }
  return out;
}

test('every input valid under the Codex input schema is accepted; anything else is HOOK_PAYLOAD_INVALID', () => {
  const inputs = codexInputs();
  assert.equal(inputs.length, 30);
  for (const input of inputs) {
    assert.ok(validInput(input), 'the fixture conforms to the schema');
    const payload = decodeStopPayload('codex', bytes(input));
    assert.deepEqual(payload, { client: 'codex', session_id: 's-1', stop_hook_active: input.stop_hook_active });
  }
  const base = inputs[0] as Record<string, unknown>;
  const { stop_hook_active: _dropped, ...withoutActive } = base;
  const invalid: [string, Buffer][] = [
    ['missing stop_hook_active', bytes(withoutActive)],
    ['unknown field', bytes({ ...base, extra: 1 })],
    ['wrong event', bytes({ ...base, hook_event_name: 'PreToolUse' })],
    ['unknown permission mode', bytes({ ...base, permission_mode: 'yolo' })],
    ['duplicate key', Buffer.from('{"session_id":"a","session_id":"b"}')],
    ['not JSON', Buffer.from('stop')],
    ['an array', bytes([base])],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d])],
  ];
  for (const [name, input] of invalid) {
    assert.throws(
      () => decodeStopPayload('codex', input),
      (e: Error & { code?: string }) => e.code === 'HOOK_PAYLOAD_INVALID',
      name,
    );
  }
});

test('Claude Code payloads with and without stop_hook_active; extra client fields are ignored; a wrong shape is refused', () => {
  const base = {
    session_id: 'abc',
    transcript_path: '/home/u/.claude/t.jsonl',
    cwd: '/repo',
    hook_event_name: 'Stop',
    permission_mode: 'default',
  };
  assert.deepEqual(decodeStopPayload('claude-code', bytes(base)), {
    client: 'claude-code',
    session_id: 'abc',
    stop_hook_active: false,
  });
  assert.deepEqual(decodeStopPayload('claude-code', bytes({ ...base, stop_hook_active: true })), {
    client: 'claude-code',
    session_id: 'abc',
    stop_hook_active: true,
  });
  assert.deepEqual(decodeStopPayload('claude-code', bytes({ ...base, stop_hook_active: false })), {
    client: 'claude-code',
    session_id: 'abc',
    stop_hook_active: false,
  });
  for (const bad of [
    { ...base, stop_hook_active: 'yes' },
    { ...base, session_id: 7 },
    { ...base, hook_event_name: 'SubagentStop' },
    { cwd: '/repo', hook_event_name: 'Stop' },
    { ...base, cwd: 3 },
  ]) {
    assert.throws(
      () => decodeStopPayload('claude-code', bytes(bad)),
      (e: Error & { code?: string }) => e.code === 'HOOK_PAYLOAD_INVALID',
      JSON.stringify(bad),
    );
  }
});

const BLOCK: StopDecision = {
  decision: 'block',
  feedback: {
    lines: ['step "tests" failed: exit status 1', '  last output: FAIL'],
    failures: [{ task_id: 'tests', code: 'step_failed' }],
    next_action: 'Fix it, then finish again.',
    next: { operation: 'checkpoint' },
  },
};

test('outputs: Claude Code block object / empty pass; Codex answers validate against its output schema; TEXT ends with the one JSON line', () => {
  const claude = renderStopOutput('claude-code', BLOCK);
  assert.equal(claude.exitCode, 0);
  const parsed = JSON.parse(claude.stdout) as { decision: string; reason: string };
  assert.deepEqual(Object.keys(parsed), ['decision', 'reason']);
  assert.equal(parsed.decision, 'block');
  const lines = parsed.reason.split('\n');
  assert.deepEqual(JSON.parse(lines[lines.length - 1] ?? ''), {
    failures: [{ task_id: 'tests', code: 'step_failed' }],
    next_action: 'Fix it, then finish again.',
    next: { operation: 'checkpoint' },
  });
  assert.equal(lines[0], 'step "tests" failed: exit status 1');
  assert.deepEqual(renderStopOutput('claude-code', { decision: 'pass' }), { stdout: '', exitCode: 0 });
  for (const decision of [BLOCK, { decision: 'pass' } as const]) {
    const codex = renderStopOutput('codex', decision);
    assert.equal(codex.exitCode, 0);
    assert.ok(validOutput(JSON.parse(codex.stdout)), JSON.stringify(validOutput.errors));
  }
  const many = renderStopOutput('claude-code', {
    decision: 'block',
    feedback: {
      ...BLOCK.feedback,
      failures: Array.from({ length: 40 }, (_, i) => ({ task_id: `t ${i}`, code: 'a/b' })),
      next: { operation: 'reconcile', task_id: 't-1' },
    },
  });
  const last = JSON.parse((JSON.parse(many.stdout) as { reason: string }).reason.split('\n').at(-1) ?? '') as {
    failures: { task_id: string; code: string }[];
    next: unknown;
  };
  assert.equal(last.failures.length, 32, 'at most 32 failures');
  assert.deepEqual(last.failures[0], { task_id: 't_0', code: 'a_b' }, 'ids and codes keep to [A-Za-z0-9._-]');
  assert.deepEqual(last.next, { operation: 'reconcile', task_id: 't-1' });
});

const claudeStop = (active?: boolean): Buffer =>
  bytes({
    session_id: 'sess',
    transcript_path: null,
    cwd: '/repo',
    hook_event_name: 'Stop',
    ...(active === undefined ? {} : { stop_hook_active: active }),
  });

test('the counter: 8 blocks in a row, then continuation ends without running the work; a fresh stop starts again; a pass forgets', async (t) => {
  const dataDir = tempDir(t);
  let calls = 0;
  const work = (): Promise<StopDecision> => {
    calls += 1;
    return Promise.resolve(BLOCK);
  };
  const first = await guardStop({
    client: 'claude-code',
    store: { dataDir },
    change: 'c1',
    payload: claudeStop(),
    work,
  });
  assert.equal(first.exitCode, 0);
  assert.equal(JSON.parse(first.stdout).decision, 'block');
  for (let i = 2; i <= 8; i += 1) {
    const next = await guardStop({
      client: 'claude-code',
      store: { dataDir },
      change: 'c1',
      payload: claudeStop(true),
      work,
    });
    assert.equal(JSON.parse(next.stdout).decision, 'block', `block ${i}`);
  }
  assert.equal(calls, 8);
  const file = stopCounterFile(
    { dataDir },
    { client: 'claude-code', session_id: 'sess', stop_hook_active: true },
    'c1',
  );
  assert.equal(readFileSync(file, 'utf8'), '8\n');
  const ended = await guardStop({
    client: 'claude-code',
    store: { dataDir },
    change: 'c1',
    payload: claudeStop(true),
    work,
  });
  assert.deepEqual({ stdout: ended.stdout, exitCode: ended.exitCode }, { stdout: '', exitCode: 0 });
  assert.match(ended.stderr, /8 times in a row/);
  assert.equal(calls, 8, 'an exhausted counter does not run the work');
  assert.equal(existsSync(file), false);
  // Another Change of the same session has its own count; a fresh stop starts from 0.
  await guardStop({ client: 'claude-code', store: { dataDir }, change: 'c2', payload: claudeStop(false), work });
  assert.equal(calls, 9);
  const passed = await guardStop({
    client: 'codex',
    store: { dataDir },
    change: 'c1',
    payload: bytes(codexInputs()[1]),
    work: () => Promise.resolve({ decision: 'pass' }),
  });
  assert.deepEqual(passed, { stdout: '{}\n', stderr: '', exitCode: 0 });
  assert.deepEqual(readdirSync(dataDir), ['agent-stop'], 'the counter is the only thing created');
});

test('malformed stdin and an unreadable or unwritable counter exit 1 (non-blocking) without running the work', async (t) => {
  const dataDir = tempDir(t);
  let calls = 0;
  const work = (): Promise<StopDecision> => {
    calls += 1;
    return Promise.resolve(BLOCK);
  };
  const malformed = await guardStop({
    client: 'claude-code',
    store: { dataDir },
    change: 'c1',
    payload: Buffer.from('{"session_id":'),
    work,
  });
  assert.equal(malformed.exitCode, 1);
  assert.equal(malformed.stdout, '');
  assert.match(malformed.stderr, /^error\[HOOK_PAYLOAD_INVALID\]/);
  const file = stopCounterFile(
    { dataDir },
    { client: 'claude-code', session_id: 'sess', stop_hook_active: true },
    'c1',
  );
  mkdirSync(join(dataDir, 'agent-stop'));
  writeFileSync(file, 'eight\n');
  const unreadable = await guardStop({
    client: 'claude-code',
    store: { dataDir },
    change: 'c1',
    payload: claudeStop(true),
    work,
  });
  assert.equal(unreadable.exitCode, 1);
  assert.equal(unreadable.stdout, '');
  assert.match(unreadable.stderr, /^error\[HOOK_COUNTER_UNAVAILABLE\]/);
  assert.equal(calls, 0);
  // A data directory that does not exist is never created for the counter.
  const missing = join(dataDir, 'nope');
  const unwritable = await guardStop({
    client: 'claude-code',
    store: { dataDir: missing },
    change: 'c1',
    payload: claudeStop(),
    work,
  });
  assert.equal(unwritable.exitCode, 1);
  assert.match(unwritable.stderr, /^error\[HOOK_COUNTER_UNAVAILABLE\]/);
  assert.equal(existsSync(missing), false);
});
