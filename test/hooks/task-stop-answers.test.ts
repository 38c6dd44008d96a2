/**
 * The agent-owned Stop hook's answer validation, read-only guarantee, counter and client shapes
 * (docs/stop-hooks.md "Agent-owned mode"): malformed, oversize and other-revision answers from a
 * fake loopback service (the only fakes here) block as malformed_response; the store's and the
 * workspace's files stay byte-identical with no new file but the counter (and SQLite's reader
 * sidecars); a missing store or a workspace of another schema blocks and nothing is created or
 * migrated; 8 blocks in a row end continuation without asking the hub; every Codex input is
 * accepted and every output conforms to Codex's output schema; Claude Code payloads with and
 * without stop_hook_active.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import test from 'node:test';
import { Ajv } from 'ajv';
import Database from 'better-sqlite3';

import { MAX_QUALIFICATION_RESPONSE_BYTES, QUALIFICATION_TIMEOUT_MS } from '../../src/hooks/qualification-client.js';
import { MAX_STOP_CONTINUATIONS, STOP_COUNTER_DIR } from '../../src/hooks/stop/counter.js';
import { TASK_STOP_NEXT_ACTIONS } from '../../src/hooks/task-stop.js';
import { nativePaths } from '../../src/native/store.js';
import { workspaceStatePaths } from '../../src/workspace/state-dir.js';
import { REPO_ROOT } from '../helpers/cli.js';
import {
  blockOf,
  claudePayload,
  codexPayload,
  makeStopWorld,
  qualifyWorld,
  runHook,
  startFakeService,
  type StopWorld,
} from '../support/task-stop.js';
import { sha256 } from '../support/tasks.js';

const EXTERNAL = join(REPO_ROOT, 'docs', 'schemas', 'external', 'codex-hooks');
const ajv = new Ajv({ strict: false, allowUnionTypes: true });
const validInput = ajv.compile(
  JSON.parse(readFileSync(join(EXTERNAL, 'stop.command.input.schema.json'), 'utf8')) as object,
);
const validOutput = ajv.compile(
  JSON.parse(readFileSync(join(EXTERNAL, 'stop.command.output.schema.json'), 'utf8')) as object,
);

const MALFORMED = {
  failures: [{ task_id: 'stop_hook', code: 'malformed_response' }],
  next_action: TASK_STOP_NEXT_ACTIONS.none,
  next: { operation: 'none' },
};

function envelope(result: unknown): string {
  return JSON.stringify({ capability: 'agentscm.agent-workflow-tasks/v1', schema_version: 1, result });
}

/** A well-formed qualified answer for `revision` (the fake service returns variations of it). */
function qualifiedAnswer(revision: string): Record<string, unknown> {
  return {
    qualified: true,
    subject_current: true,
    receipt_digest: 'e'.repeat(64),
    revision,
    tasks: [],
    failures: [],
    next: { operation: 'none' },
  };
}

function unqualified(revision: string, extra: Record<string, unknown>): Record<string, unknown> {
  return { ...qualifiedAnswer(revision), qualified: false, receipt_digest: null, ...extra };
}

test('malformed answers from a fake service block as malformed_response with next none: bad JSON, wrong envelope, next.operation outside the enum, task_id presence, bad ids and codes, 33 failures, non-hex64 digests, another revision', async (t) => {
  const world = await makeStopWorld(t);
  const revision = world.ev.store.revision;
  const failure = { task_id: 'task-1', code: 'task_pending' };
  const bodies: [string, string][] = [
    ['not JSON', '{"capability":'],
    [
      'duplicate key',
      `{"capability":"agentscm.agent-workflow-tasks/v1","schema_version":1,"schema_version":1,"result":${JSON.stringify(qualifiedAnswer(revision))}}`,
    ],
    [
      'another capability',
      JSON.stringify({ capability: 'other/v1', schema_version: 1, result: qualifiedAnswer(revision) }),
    ],
    [
      'another schema version',
      JSON.stringify({
        capability: 'agentscm.agent-workflow-tasks/v1',
        schema_version: 2,
        result: qualifiedAnswer(revision),
      }),
    ],
    [
      'an extra envelope field',
      JSON.stringify({
        capability: 'agentscm.agent-workflow-tasks/v1',
        schema_version: 1,
        result: qualifiedAnswer(revision),
        extra: true,
      }),
    ],
    [
      'next.operation claim',
      envelope(unqualified(revision, { failures: [failure], next: { operation: 'claim', task_id: 'task-1' } })),
    ],
    [
      'collector_claim without task_id',
      envelope(unqualified(revision, { failures: [failure], next: { operation: 'collector_claim' } })),
    ],
    [
      'reconcile without task_id',
      envelope(unqualified(revision, { failures: [failure], next: { operation: 'reconcile' } })),
    ],
    [
      'none with a task_id',
      envelope(unqualified(revision, { failures: [failure], next: { operation: 'none', task_id: 'task-1' } })),
    ],
    [
      'a task_id outside the id pattern',
      envelope(
        unqualified(revision, { failures: [failure], next: { operation: 'collector_claim', task_id: 'task 1' } }),
      ),
    ],
    [
      'a failure code of 129 characters',
      envelope(unqualified(revision, { failures: [{ task_id: 'task-1', code: 'c'.repeat(129) }] })),
    ],
    [
      'a failure code with a character outside [A-Za-z0-9._-]',
      envelope(unqualified(revision, { failures: [{ task_id: 'task-1', code: 'made up' }] })),
    ],
    ['an empty failure code', envelope(unqualified(revision, { failures: [{ task_id: 'task-1', code: '' }] }))],
    [
      '33 failures',
      envelope(
        unqualified(revision, {
          failures: Array.from({ length: 33 }, (_v, i) => ({ task_id: `task-${i}`, code: 'task_pending' })),
        }),
      ),
    ],
    ['an uppercase receipt digest', envelope({ ...qualifiedAnswer(revision), receipt_digest: 'E'.repeat(64) })],
    ['a short revision', envelope(qualifiedAnswer(revision.slice(0, 63)))],
    ['qualified with failures', envelope({ ...qualifiedAnswer(revision), failures: [failure] })],
    ['a qualified answer for another revision', envelope(qualifiedAnswer('f'.repeat(64)))],
  ];
  for (const [what, body] of bodies) {
    const endpoint = await startFakeService(t, { body });
    const result = await runHook(world, { input: { endpoint }, payload: claudePayload(`s-${what}`) });
    assert.equal(result.exitCode, 0, what);
    assert.deepEqual(blockOf(result).json, MALFORMED, what);
  }
  // Control: the same fake with a well-formed qualified answer for this revision would pass, so
  // each refusal above is the validation's.
  const control = await startFakeService(t, { body: envelope(qualifiedAnswer(revision)) });
  assert.deepEqual(await runHook(world, { input: { endpoint: control } }), { stdout: '', stderr: '', exitCode: 0 });
});

test('a failure code this hook does not know, from a newer hub, is accepted when id-shaped (up to 128 characters) and shown as its code (issue #25 item 15)', async (t) => {
  const world = await makeStopWorld(t);
  const revision = world.ev.store.revision;
  const longest = `x.${'n'.repeat(124)}-9`;
  assert.equal(longest.length, 128);
  const failures = [
    { task_id: 'task-1', code: 'quota_exhausted.v2' },
    { task_id: 'task-2', code: longest },
    { task_id: 'task-3', code: 'task_pending' },
  ];
  const endpoint = await startFakeService(t, {
    body: envelope(unqualified(revision, { failures, next: { operation: 'collector_claim', task_id: 'task-3' } })),
  });
  const block = blockOf(await runHook(world, { input: { endpoint } }));
  assert.deepEqual(block.json, {
    failures,
    next_action: TASK_STOP_NEXT_ACTIONS.collector_claim,
    next: { operation: 'collector_claim', task_id: 'task-3' },
  });
  assert.match(block.reason, /is not qualified yet \(3 failures\)/);
  assert.match(block.reason, /^failure of task task-1: quota_exhausted\.v2$/m);
  assert.match(block.reason, new RegExp(`^failure of task task-2: ${longest}$`, 'm'));
});

test('an oversize answer is refused: a declared length past the bound before any byte is read, a chunked one while streaming', async (t) => {
  const world = await makeStopWorld(t);
  // Declares 100 MiB and sends almost nothing: buffering it would wait for the timeout.
  const declared = await startFakeService(t, {
    body: '{"capability":',
    headers: { 'content-length': String(100 * 1024 * 1024) },
    chunked: true,
  });
  const started = Date.now();
  const first = await runHook(world, { input: { endpoint: declared, timeoutMs: 20_000 } });
  assert.ok(Date.now() - started < 10_000, 'refused without waiting for the body');
  assert.deepEqual(blockOf(first).json, MALFORMED);
  const streamed = await startFakeService(t, {
    body: Buffer.alloc(MAX_QUALIFICATION_RESPONSE_BYTES + 1, 0x20),
    chunked: true,
  });
  assert.deepEqual(
    blockOf(await runHook(world, { input: { endpoint: streamed }, payload: claudePayload('s-2') })).json,
    MALFORMED,
  );
});

test('a service that never answers is a failed request once the time limit passes (service_request_failed, next none)', async (t) => {
  const world = await makeStopWorld(t);
  const silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    silent.closeAllConnections();
    silent.close();
  });
  const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const started = Date.now();
  const block = blockOf(await runHook(world, { input: { endpoint, timeoutMs: 500 } }));
  assert.ok(Date.now() - started < 10_000, 'the call ended at its limit');
  assert.deepEqual(block.json, {
    failures: [{ task_id: 'stop_hook', code: 'service_request_failed' }],
    next_action: TASK_STOP_NEXT_ACTIONS.none,
    next: { operation: 'none' },
  });
  assert.equal(QUALIFICATION_TIMEOUT_MS, 30_000);
});

test('error statuses: 401 and 403 are token_rejected, 404, 409 and 503 are service_request_failed; no server text reaches the feedback', async (t) => {
  const world = await makeStopWorld(t);
  for (const [status, code] of [
    [401, 'token_rejected'],
    [403, 'token_rejected'],
    [404, 'service_request_failed'],
    [409, 'service_request_failed'],
    [503, 'service_request_failed'],
  ] as const) {
    const endpoint = await startFakeService(t, {
      status,
      body: JSON.stringify({ error: { code: 'SERVER_SECRET_CODE', message: 'server text /srv/secret/path' } }),
    });
    const block = blockOf(await runHook(world, { input: { endpoint }, payload: claudePayload(`s-${status}`) }));
    assert.deepEqual(block.json.failures, [{ task_id: 'stop_hook', code }], String(status));
    assert.deepEqual(block.json.next, { operation: 'none' });
    assert.ok(!block.reason.includes('SERVER_SECRET_CODE') && !block.reason.includes('/srv/secret'), block.reason);
  }
});

/**
 * Every file under a directory with the SHA-256 of its bytes; SQLite's -shm index and an empty
 * -wal are left out (a reader of a WAL database may recreate them).
 */
function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string): void => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!name.endsWith('-shm') && !(name.endsWith('-wal') && statSync(path).size === 0))
        out[relative(dir, path)] = sha256(readFileSync(path));
    }
  };
  walk(dir);
  return out;
}

function withoutCounter(files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).filter(([path]) => !path.startsWith(`${STOP_COUNTER_DIR}/`)));
}

test('read-only: a pass and a block leave every file of the store and the workspace byte-identical; the only new file is the counter', async (t) => {
  const world = await makeStopWorld(t);
  // A block first (unqualified): the counter is the one new file.
  const storeBefore = filesOf(world.dataDir);
  const workspaceBefore = filesOf(world.workspace);
  blockOf(await runHook(world));
  const storeAfter = filesOf(world.dataDir);
  assert.deepEqual(withoutCounter(storeAfter), storeBefore);
  assert.deepEqual(
    Object.keys(storeAfter).filter((path) => path.startsWith(`${STOP_COUNTER_DIR}/`)).length,
    1,
    'exactly one counter file',
  );
  assert.deepEqual(filesOf(world.workspace), workspaceBefore);

  qualifyWorld(world);
  const qualifiedStore = filesOf(world.dataDir);
  const qualifiedWorkspace = filesOf(world.workspace);
  assert.deepEqual(await runHook(world), { stdout: '', stderr: '', exitCode: 0 });
  assert.deepEqual(withoutCounter(filesOf(world.dataDir)), withoutCounter(qualifiedStore));
  assert.deepEqual(filesOf(world.workspace), qualifiedWorkspace);
});

test('a store without its lock file blocks as local_store_unavailable and nothing is created', async (t) => {
  const world = await makeStopWorld(t);
  const lock = nativePaths(world.dataDir).lock;
  renameSync(lock, `${lock}.aside`);
  const block = blockOf(await runHook(world));
  assert.deepEqual(block.json.failures, [{ task_id: 'stop_hook', code: 'local_store_unavailable' }]);
  assert.equal(existsSync(lock), false, 'the lock file was not created');
  assert.ok(!block.reason.includes(world.dir), block.reason);
});

test('a missing data directory is never created: the block cannot be counted, so the hook exits 1 with HOOK_COUNTER_UNAVAILABLE', async (t) => {
  const world = await makeStopWorld(t);
  renameSync(world.dataDir, `${world.dataDir}.aside`);
  const result = await runHook(world);
  assert.equal(result.exitCode, 1);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^error\[HOOK_COUNTER_UNAVAILABLE\]/);
  assert.equal(existsSync(world.dataDir), false, 'the data directory was not created');
});

test('a workspace database of another schema version blocks as workspace_unavailable and is not migrated', async (t) => {
  const world = await makeStopWorld(t);
  const db = workspaceStatePaths(world.workspace).db;
  const raw = new Database(db);
  raw.pragma('user_version = 99');
  raw.close();
  const before = readFileSync(db);
  const block = blockOf(await runHook(world));
  assert.deepEqual(block.json, {
    failures: [{ task_id: 'stop_hook', code: 'workspace_unavailable' }],
    next_action: TASK_STOP_NEXT_ACTIONS.none,
    next: { operation: 'none' },
  });
  assert.ok(readFileSync(db).equals(before), 'the workspace database is byte-identical');
});

test('counter: 8 blocks in a row, then a continuation passes without asking the hub; a fresh stop (stop_hook_active absent or false) starts again', async (t) => {
  const world = await makeStopWorld(t);
  const asked = (): number => world.log.length;
  blockOf(await runHook(world, { payload: claudePayload('s-count') }));
  for (let i = 1; i < MAX_STOP_CONTINUATIONS; i += 1)
    blockOf(await runHook(world, { payload: claudePayload('s-count', true) }));
  assert.equal(asked(), MAX_STOP_CONTINUATIONS, 'each block asked the hub once');
  const exhausted = await runHook(world, { payload: claudePayload('s-count', true) });
  assert.equal(exhausted.stdout, '');
  assert.equal(exhausted.exitCode, 0);
  assert.match(exhausted.stderr, /continuation ends here/);
  assert.equal(asked(), MAX_STOP_CONTINUATIONS, 'the exhausted continuation did not ask the hub');
  // Without stop_hook_active (older payloads) the stop is fresh: asked and blocked again.
  blockOf(await runHook(world, { payload: claudePayload('s-count') }));
  assert.equal(asked(), MAX_STOP_CONTINUATIONS + 1);
  blockOf(await runHook(world, { payload: claudePayload('s-count', false) }));
  assert.equal(asked(), MAX_STOP_CONTINUATIONS + 2);
});

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
          session_id: `s-${out.length}`,
          stop_hook_active,
          transcript_path: nullable,
          turn_id: 't-1',
        });
      }
    }
  }
  return out;
}

async function codexOutputs(world: StopWorld): Promise<unknown[]> {
  const outputs: unknown[] = [];
  for (const input of codexInputs()) {
    assert.ok(validInput(input), 'the input conforms to the Codex input schema');
    const result = await runHook(world, { client: 'codex', payload: Buffer.from(JSON.stringify(input)) });
    assert.equal(result.exitCode, 0, result.stderr);
    const output = JSON.parse(result.stdout) as unknown;
    assert.ok(validOutput(output), `the output conforms to the Codex output schema: ${result.stdout}`);
    outputs.push(output);
  }
  return outputs;
}

test('Codex: every input valid under its input schema is accepted; every block and every pass conforms to its output schema', async (t) => {
  const world = await makeStopWorld(t);
  const blocks = await codexOutputs(world);
  assert.ok(blocks.every((output) => (output as { decision?: string }).decision === 'block'));
  qualifyWorld(world);
  const passes = await codexOutputs(world);
  assert.ok(passes.every((output) => JSON.stringify(output) === '{}'));
  const invalid = await runHook(world, {
    client: 'codex',
    payload: Buffer.from(JSON.stringify({ ...codexInputs()[0], extra: 1 })),
  });
  assert.equal(invalid.exitCode, 1);
  assert.equal(invalid.stdout, '');
  assert.match(invalid.stderr, /^error\[HOOK_PAYLOAD_INVALID\]/);
  // Claude Code ignores fields that are not its own: a payload with Codex's extra fields is accepted.
  assert.deepEqual(await runHook(world, { client: 'claude-code', payload: codexPayload() }), {
    stdout: '',
    stderr: '',
    exitCode: 0,
  });
});
