/**
 * examples/agent-tasks/: the committed request bodies are exactly what the generator makes from
 * its fixed demo store, each decodes with its operation's strict decoder, and sent in order
 * through the real CLI (bin/dev.js, a real store, the grant's token file) each gets the answer
 * the README lists. Then `agent-task call` filling: a body without `agent` and `executor` plus
 * --executor is the same request as the committed one (its identical retry answers byte for
 * byte), and a flag that contradicts the body is TASK_INPUT_CONFLICT with nothing claimed.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  buildDemoStore,
  DEMO,
  EXAMPLES_DIR,
  generateExamples,
  type DemoStore,
} from '../../examples/agent-tasks/generate.js';
import { instructionRequestDecoder } from '../../src/contracts/instruction-entrypoint.js';
import { referenceFetchRequestDecoder } from '../../src/contracts/named-reference.js';
import type { TaskDecoder } from '../../src/contracts/task/common.js';
import { recoveredRequestOf, taskRecoveryRequestDecoder } from '../../src/contracts/task/operations.js';
import {
  taskClaimRequestDecoder,
  taskMutationRequestDecoder,
  taskStatusRequestDecoder,
} from '../../src/contracts/task/requests.js';
import { taskResultAssertionDecoder } from '../../src/contracts/task/result.js';
import { revokeRegistration } from '../../src/native/executor-registry.js';
import { openAuthority } from '../../src/native/store.js';
import {
  collectorClaimRequestDecoder,
  collectorDescriptorRequestDecoder,
  collectorFinalizeRequestDecoder,
} from '../../src/tasks/facade.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

/** The walk of the README, in order: file, operation, and what its answer says. */
const WALK: readonly {
  file: string;
  operation: string;
  member: string;
  value: string | ((store: DemoStore) => string);
}[] = [
  { file: 'instructions.json', operation: 'instructions', member: 'status', value: 'entrypoint' },
  { file: 'reference.json', operation: 'reference', member: 'status', value: 'available' },
  { file: 'claim.json', operation: 'claim', member: 'status', value: 'claimed' },
  { file: 'heartbeat.json', operation: 'heartbeat', member: 'status', value: 'renewed' },
  { file: 'result.json', operation: 'result', member: 'status', value: 'retained' },
  { file: 'status.json', operation: 'status', member: 'state', value: 'finished' },
  { file: 'recovery.json', operation: 'recovery', member: 'disposition', value: 'confirmed' },
  { file: 'claim-executor.json', operation: 'claim', member: 'status', value: 'claimed' },
  { file: 'cancel.json', operation: 'cancel', member: 'status', value: 'cancelled' },
  { file: 'reconcile.json', operation: 'reconcile', member: 'status', value: 'reconciled' },
  { file: 'collector-claim.json', operation: 'collector_claim', member: 'status', value: 'collector_claimed' },
  {
    file: 'collector-descriptor.json',
    operation: 'collector_descriptor',
    member: 'collector_profile_id',
    value: (store) => store.collectorProfileId,
  },
  { file: 'collector-finalize.json', operation: 'collector_finalize', member: 'status', value: 'incomplete' },
];

function expected(step: (typeof WALK)[number], store: DemoStore): string {
  return typeof step.value === 'string' ? step.value : step.value(store);
}

const DECODERS: Readonly<Record<string, TaskDecoder<unknown>>> = {
  instructions: instructionRequestDecoder,
  reference: referenceFetchRequestDecoder,
  claim: taskClaimRequestDecoder,
  heartbeat: taskMutationRequestDecoder,
  cancel: taskMutationRequestDecoder,
  reconcile: taskMutationRequestDecoder,
  result: taskResultAssertionDecoder,
  status: taskStatusRequestDecoder,
  recovery: taskRecoveryRequestDecoder,
  collector_claim: collectorClaimRequestDecoder,
  collector_descriptor: collectorDescriptorRequestDecoder,
  collector_finalize: collectorFinalizeRequestDecoder,
};

function committed(file: string): Buffer {
  return readFileSync(join(EXAMPLES_DIR, file));
}

function demoStore(dir: string): DemoStore {
  return buildDemoStore(join(dir, 'agentscm-data'), join(dir, 'agent-1.token'));
}

function callArgs(store: DemoStore, operation: string, extra: readonly string[]): string[] {
  return [
    '--data-dir',
    store.dataDir,
    'agent-task',
    'call',
    operation,
    '--token-file',
    store.tokenFile,
    '--change',
    DEMO.change,
    '--context',
    store.contextDigest,
    ...extra,
    '--json',
  ];
}

function errorCode(result: CliResult): unknown {
  return (jsonOf(result).error as { code?: unknown } | undefined)?.code;
}

/** A committed body without its agent and executor members, as a user may send it with --executor. */
function withoutBindings(file: string): string {
  const body = JSON.parse(committed(file).toString('utf8')) as Record<string, unknown>;
  delete body.agent;
  delete body.executor;
  return JSON.stringify(body);
}

test('the committed examples are exactly what the generator writes, and each decodes strictly', (t) => {
  const out = tempDir(t);
  const written = generateExamples(out).sort();
  const inFolder = readdirSync(EXAMPLES_DIR)
    .filter((name) => name !== 'generate.ts')
    .sort();
  assert.deepEqual(
    inFolder,
    written,
    'examples/agent-tasks/ holds exactly the generated files (run npm run examples:agent-tasks)',
  );
  for (const file of written) {
    assert.ok(
      readFileSync(join(out, file)).equals(committed(file)),
      `${file} differs from what the generator writes; run npm run examples:agent-tasks`,
    );
  }
  assert.deepEqual(WALK.map((step) => step.file).sort(), written.filter((file) => file.endsWith('.json')).sort());
  for (const step of WALK) {
    const decoder = DECODERS[step.operation];
    assert.ok(decoder !== undefined, step.operation);
    const decoded = decoder.decode(committed(step.file));
    if (step.operation === 'recovery') recoveredRequestOf(decoded as Parameters<typeof recoveredRequestOf>[0]);
    if (step.operation === 'heartbeat' || step.operation === 'cancel' || step.operation === 'reconcile')
      assert.equal((decoded as { action: string }).action, step.operation);
  }
});

test('sent in order through agent-task call against a fresh demo store, each example gets the answer the README lists', async (t) => {
  const store = demoStore(tempDir(t));
  const readme = committed('README.md').toString('utf8');
  for (const step of WALK) {
    assert.ok(
      readme.includes(`[\`${step.file}\`](${step.file}) |`) &&
        readme.includes(`\`${step.member}: ${expected(step, store)}\``),
      `the README lists ${step.file}`,
    );
    if (step.operation === 'collector_claim') {
      const install = await runCli([
        '--data-dir',
        store.dataDir,
        'agent-task',
        'profile',
        'install',
        store.profileFile,
        '--json',
      ]);
      assert.equal(install.code, 0, install.stderr);
      assert.equal(jsonOf(install).collector_profile_id, store.collectorProfileId);
    }
    const result = await runCli(callArgs(store, step.operation, ['--input', join(EXAMPLES_DIR, step.file)]));
    assert.equal(result.code, 0, `${step.file}: ${result.stderr}`);
    assert.equal(jsonOf(result)[step.member], expected(step, store), `${step.file}: ${result.stdout}`);
  }
});

test('--executor and an omitted agent fill the request: the same request as the full body, and a contradicting flag is TASK_INPUT_CONFLICT', async (t) => {
  const store = demoStore(tempDir(t));
  // claim.json holds "executor": null (an agent's own attempt): --executor contradicts it.
  const conflict = await runCli(
    callArgs(store, 'claim', ['--input', join(EXAMPLES_DIR, 'claim.json'), '--executor', store.registrationId]),
  );
  assert.equal(conflict.code, 2, conflict.stderr);
  assert.equal(errorCode(conflict), 'TASK_INPUT_CONFLICT');
  // Nothing was claimed: the committed claim still claims fence 1.
  const claim = await runCli(callArgs(store, 'claim', ['--input', join(EXAMPLES_DIR, 'claim.json')]));
  assert.equal(claim.code, 0, claim.stderr);
  assert.equal((jsonOf(claim).attempt as { fence: number }).fence, 1);
  // The lint claim without agent and executor, filled from the grant and --executor ...
  const filled = await runCli(callArgs(store, 'claim', ['--input', '-', '--executor', store.registrationId]), {
    input: withoutBindings('claim-executor.json'),
  });
  assert.equal(filled.code, 0, filled.stderr);
  assert.equal(jsonOf(filled).status, 'claimed');
  assert.deepEqual((jsonOf(filled).attempt as { agent: unknown }).agent, DEMO.actor);
  // ... is the committed body's request: its identical retry returns the retained answer byte for byte.
  const full = await runCli(callArgs(store, 'claim', ['--input', join(EXAMPLES_DIR, 'claim-executor.json')]));
  assert.equal(full.code, 0, full.stderr);
  assert.equal(full.stdout, filled.stdout);
  // A heartbeat without agent and executor is filled the same way and renews the executor's attempt.
  const heartbeat = await runCli(callArgs(store, 'heartbeat', ['--input', '-', '--executor', store.registrationId]), {
    input: JSON.stringify({
      ...JSON.parse(withoutBindings('cancel.json')),
      request_id: 'demo-heartbeat-2',
      action: 'heartbeat',
      reason: null,
    }),
  });
  assert.equal(heartbeat.code, 0, heartbeat.stderr);
  assert.equal(jsonOf(heartbeat).status, 'renewed');
  // Without --executor an omitted executor stays missing: the strict decoder names it.
  const missing = await runCli(callArgs(store, 'cancel', ['--input', '-']), { input: withoutBindings('cancel.json') });
  assert.equal(missing.code, 2);
  assert.equal(errorCode(missing), 'SCHEMA_MISSING_FIELD');
  // --executor on an operation whose request has no executor, and an unknown registration.
  const status = await runCli(
    callArgs(store, 'status', ['--input', join(EXAMPLES_DIR, 'status.json'), '--executor', store.registrationId]),
  );
  assert.equal(status.code, 2);
  assert.equal(errorCode(status), 'USAGE');
  const unknown = await runCli(
    callArgs(store, 'cancel', ['--input', '-', '--executor', 'reg-00000000000000000000000000000000']),
    { input: withoutBindings('cancel.json') },
  );
  assert.equal(unknown.code, 2);
  assert.equal(errorCode(unknown), 'REGISTRATION_NOT_FOUND');
  // The committed cancel still applies: the refusals changed nothing.
  const cancel = await runCli(callArgs(store, 'cancel', ['--input', join(EXAMPLES_DIR, 'cancel.json')]));
  assert.equal(cancel.code, 0, cancel.stderr);
  assert.equal(jsonOf(cancel).status, 'cancelled');
  // The collector operations get their agent filled too, and never an executor from a flag.
  const finalize = await runCli(callArgs(store, 'collector_finalize', ['--input', '-']), { input: '{"version":1}' });
  assert.equal(finalize.code, 0, finalize.stderr);
  assert.equal(jsonOf(finalize).status, 'incomplete');
  const collectorClaim = await runCli(
    callArgs(store, 'collector_claim', [
      '--input',
      join(EXAMPLES_DIR, 'collector-claim.json'),
      '--executor',
      store.registrationId,
    ]),
  );
  assert.equal(collectorClaim.code, 2);
  assert.equal(errorCode(collectorClaim), 'USAGE');
});

test('--executor of a revoked registration is REGISTRATION_NOT_CURRENT, and a malformed body is refused by its decoder before the token file is read', async (t) => {
  const dir = tempDir(t);
  const store = demoStore(dir);
  const malformed = await runCli(
    [
      '--data-dir',
      store.dataDir,
      'agent-task',
      'call',
      'claim',
      '--token-file',
      join(dir, 'no-such.token'),
      '--input',
      '-',
      '--executor',
      store.registrationId,
      '--json',
    ],
    {
      input: `{"version":${' '.repeat(20_000)}`,
    },
  );
  // The claim decoder's own order: its 16 KiB bound before the syntax, and no token file read.
  assert.equal(malformed.code, 2);
  assert.equal(errorCode(malformed), 'INPUT_TOO_LARGE');
  const auth = openAuthority(store.dataDir, { mode: 'write' });
  try {
    revokeRegistration(auth, store.registrationId, 'the example key is published');
  } finally {
    auth.close();
  }
  const revoked = await runCli(callArgs(store, 'claim', ['--input', '-', '--executor', store.registrationId]), {
    input: withoutBindings('claim-executor.json'),
  });
  assert.equal(revoked.code, 3, revoked.stderr);
  assert.equal(errorCode(revoked), 'REGISTRATION_NOT_CURRENT');
  // Named as the flag's registration, before the request is run.
  assert.match(
    revoked.stderr,
    /^error\[REGISTRATION_NOT_CURRENT\]: --executor reg-[0-9a-f]{32}: registration .* is revoked/,
  );
});
