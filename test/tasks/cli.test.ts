/**
 * `agentscm agent-task call` end to end, as a user runs it: real CLI processes against a real
 * data directory, acting as the actor of a grant's token file — capabilities, next, claim from a file, heartbeat from stdin, exit codes of
 * refusals, byte-identical retries, and a SIGKILL between the journal commit and the response
 * (test pause hook task:after-journal-commit) followed by the identical retry.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { tokenFileFor } from '../support/grants.js';
import {
  call,
  claimedOf,
  claimRequest,
  mutationRequest,
  recoveryRequest,
  statusRequest,
  taskRef,
} from '../support/task-requests.js';
import { CHANGE_ID, context, FakeClock, makeTaskStore, type TaskStore } from '../support/tasks.js';

const ALICE = { owner_id: 'alice', agent_id: 'a1' };
// Real processes on a loaded machine: leases long enough never to expire during the test.
const HOUR = 3_600_000n;

function subjectFlags(store: TaskStore): string[] {
  return ['--change', CHANGE_ID, '--context', store.contextDigest];
}

function writeJson(dir: string, name: string, value: JsonValue): string {
  const file = join(dir, name);
  writeFileSync(file, formatJson(value));
  return file;
}

test('agent-task call: capabilities, next, claim, heartbeat from stdin, byte-identical retries and exit codes', async (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const TOKEN = tokenFileFor(dir, dir, ALICE);
  const base = ['--data-dir', dir, 'agent-task', 'call'];
  const capabilities = await runCli([...base, 'capabilities', '--token-file', TOKEN, '--json']);
  assert.equal(capabilities.code, 0, capabilities.stderr);
  assert.deepEqual(jsonOf(capabilities), {
    capability: 'agentscm.agent-workflow-tasks/v1',
    supported_schema_versions: [1],
    operations: [
      'cancel',
      'capabilities',
      'claim',
      'collector_claim',
      'collector_descriptor',
      'collector_finalize',
      'heartbeat',
      'instructions',
      'next',
      'qualification',
      'reconcile',
      'recovery',
      'reference',
      'requirements',
      'result',
      'status',
      'subject',
    ],
  });
  const next = await runCli([...base, 'next', '--token-file', TOKEN, ...subjectFlags(store), '--json']);
  assert.equal(next.code, 0, next.stderr);
  const step = jsonOf(next).next as JsonObject;
  assert.equal(step.operation, 'claim');
  const task = { task_id: step.task_id as string, task_digest: step.task_digest as string };
  const claimFile = writeJson(dir, 'claim.json', claimRequest(ALICE, task, 'claim-1', 'op-1', { leaseMs: HOUR }));
  const claim = await runCli([
    ...base,
    'claim',
    '--token-file',
    TOKEN,
    ...subjectFlags(store),
    '--input',
    claimFile,
    '--json',
  ]);
  assert.equal(claim.code, 0, claim.stderr);
  const again = await runCli([
    ...base,
    'claim',
    '--token-file',
    TOKEN,
    ...subjectFlags(store),
    '--input',
    claimFile,
    '--json',
  ]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, claim.stdout);
  const claimed = claimedOf(jsonOf(claim));
  const heartbeat = await runCli([...base, 'heartbeat', '--token-file', TOKEN, '--input', '-', '--json'], {
    input: formatJson(mutationRequest(ALICE, claimed, 'heartbeat', 'hb-1')),
  });
  assert.equal(heartbeat.code, 0, heartbeat.stderr);
  assert.equal(jsonOf(heartbeat).status, 'renewed');
  // Changed bytes under the same request id: conflict, exit 3, one JSON error document.
  const conflict = await runCli([
    ...base,
    'claim',
    '--token-file',
    TOKEN,
    ...subjectFlags(store),
    '--input',
    writeJson(dir, 'c2.json', claimRequest(ALICE, task, 'claim-1', 'op-2', { leaseMs: HOUR })),
    '--json',
  ]);
  assert.equal(conflict.code, 3);
  assert.equal((jsonOf(conflict).error as JsonObject).code, 'TASK_REQUEST_CONFLICT');
  assert.match(conflict.stderr, /^error\[TASK_REQUEST_CONFLICT\]/);
  // The request's actor is not the authenticated one: exit 2.
  const foreign = await runCli(
    [
      ...base,
      'heartbeat',
      '--token-file',
      tokenFileFor(dir, dir, { owner_id: 'bob', agent_id: 'b1' }),
      '--input',
      '-',
      '--json',
    ],
    { input: formatJson(mutationRequest(ALICE, claimed, 'heartbeat', 'hb-2')) },
  );
  assert.equal(foreign.code, 2);
  assert.equal((jsonOf(foreign).error as JsonObject).code, 'TASK_ACTOR_MISMATCH');
  // Unknown operation, a token file without a token, unknown field: exit 2.
  assert.equal((await runCli([...base, 'frobnicate', '--token-file', TOKEN, '--json'])).code, 2);
  const noToken = writeJson(dir, 'not-a-token', 'alice');
  chmodSync(noToken, 0o600);
  const malformed = await runCli([...base, 'capabilities', '--token-file', noToken, '--json']);
  assert.equal(malformed.code, 2);
  assert.equal((jsonOf(malformed).error as JsonObject).code, 'GRANT_TOKEN_INVALID');
  const unknownField = await runCli([...base, 'status', '--token-file', TOKEN, '--input', '-', '--json'], {
    input: JSON.stringify({ ...statusRequest(claimed), fence: 1 }),
  });
  assert.equal(unknownField.code, 2);
  assert.equal((jsonOf(unknownField).error as JsonObject).code, 'SCHEMA_UNKNOWN_FIELD');
  // Human mode prints the same document first (then one line per *_at_ms instant).
  const human = await runCli([...base, 'status', '--token-file', TOKEN, '--input', '-'], {
    input: formatJson(statusRequest(claimed)),
  });
  assert.equal(human.code, 0, human.stderr);
  const documentEnd = human.stdout.indexOf('\n}\n') + 2;
  assert.ok(documentEnd > 2, human.stdout);
  assert.equal((JSON.parse(human.stdout.slice(0, documentEnd)) as JsonObject).state, 'leased');
  // A missing store: exit 4, nothing created.
  const empty = tempDir(t);
  const missing = await runCli([
    '--data-dir',
    empty,
    'agent-task',
    'call',
    'next',
    '--token-file',
    TOKEN,
    '--change',
    'c',
    '--context',
    'a'.repeat(64),
    '--json',
  ]);
  assert.equal(missing.code, 4);
});

test('SIGKILL between the journal commit and the response: the identical retry returns the retained outcome', async (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const TOKEN = tokenFileFor(dir, dir, ALICE);
  const ctx = context(store, ALICE, new FakeClock());
  const task = taskRef(call(ctx, 'requirements'), 'lint');
  const claimFile = writeJson(dir, 'claim.json', claimRequest(ALICE, task, 'claim-1', 'op-1', { leaseMs: HOUR }));
  const args = [
    ...cliEntryArgv(),
    '--data-dir',
    dir,
    'agent-task',
    'call',
    'claim',
    '--token-file',
    TOKEN,
    ...subjectFlags(store),
    '--input',
    claimFile,
    '--json',
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, AGENTSCM_TEST_PAUSE_AT: 'task:after-journal-commit' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const killed = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('agentscm-test-paused:task:after-journal-commit')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve(signal));
  });
  assert.equal(killed, 'SIGKILL');
  assert.equal(stdout, '', 'the killed claim answered nothing');
  // The commit survived the kill; recovery confirms it without replaying anything.
  const recovery = await runCli(
    ['--data-dir', dir, 'agent-task', 'call', 'recovery', '--token-file', TOKEN, '--input', '-', '--json'],
    {
      input: formatJson(recoveryRequest('claim', claimRequest(ALICE, task, 'claim-1', 'op-1', { leaseMs: HOUR }))),
    },
  );
  assert.equal(recovery.code, 0, recovery.stderr);
  assert.equal(jsonOf(recovery).disposition, 'confirmed');
  const retry = await runCli([
    '--data-dir',
    dir,
    'agent-task',
    'call',
    'claim',
    '--token-file',
    TOKEN,
    ...subjectFlags(store),
    '--input',
    claimFile,
    '--json',
  ]);
  assert.equal(retry.code, 0, retry.stderr);
  const answer = jsonOf(retry);
  assert.equal(answer.status, 'claimed');
  assert.equal(answer.fence, 1);
  assert.equal((answer.attempt as JsonObject).execution_operation_id, 'op-1');
  assert.equal(jsonOf(recovery).attempt_id, (answer.attempt as JsonObject).attempt_id);
  const second = await runCli([
    '--data-dir',
    dir,
    'agent-task',
    'call',
    'claim',
    '--token-file',
    TOKEN,
    ...subjectFlags(store),
    '--input',
    claimFile,
    '--json',
  ]);
  assert.equal(second.stdout, retry.stdout);
  // Exactly one attempt exists: the retry did not claim again.
  const status = call(ctx, 'status', statusRequest(claimedOf(answer as JsonObject)));
  assert.equal(status.state, 'leased');
  const other = await runCli([
    '--data-dir',
    dir,
    'agent-task',
    'call',
    'claim',
    '--token-file',
    TOKEN,
    ...subjectFlags(store),
    '--input',
    writeJson(dir, 'c3.json', claimRequest(ALICE, task, 'claim-3', 'op-3', { leaseMs: HOUR })),
    '--json',
  ]);
  assert.equal(other.code, 3);
  assert.equal((jsonOf(other).error as JsonObject).code, 'TASK_ALREADY_CLAIMED');
});
