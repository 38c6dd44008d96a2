/**
 * Strict decoding of every agent-task v1 type: a valid value round-trips; unknown fields at the
 * top and nested, a missing field and an unsupported version are refused with their own codes;
 * every bound is accepted at its limit and refused one past it.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import {
  entrypointToJson,
  instructionEntrypointDecoder,
  instructionEntrypointResponseDecoder,
  instructionRequestDecoder,
} from '../../src/contracts/instruction-entrypoint.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import {
  REFERENCE_MAX_BYTES,
  referenceFetchRequestDecoder,
  referenceFetchResponseDecoder,
  schemaMismatch,
} from '../../src/contracts/named-reference.js';
import { attemptToJson, workflowTaskAttemptDecoder } from '../../src/contracts/task/attempt.js';
import { capabilitiesResponse, capabilitiesResponseDecoder } from '../../src/contracts/task/capabilities.js';
import type { TaskDecoder } from '../../src/contracts/task/common.js';
import {
  buildRecoveryEnvelope,
  recoveryEnvelopeToJson,
  taskRecoveryEnvelopeDecoder,
} from '../../src/contracts/task/recovery.js';
import {
  claimRequestToJson,
  mutationRequestToJson,
  statusRequestToJson,
  taskClaimRequestDecoder,
  taskMutationRequestDecoder,
  taskStatusRequestDecoder,
} from '../../src/contracts/task/requests.js';
import { assertionToJson, MAX_ASSERTION_BYTES, taskResultAssertionDecoder } from '../../src/contracts/task/result.js';
import { subjectToJson, workflowTaskSubjectDecoder } from '../../src/contracts/task/subject.js';
import { taskToJson, workflowTaskDecoder } from '../../src/contracts/task/task.js';
import { codeOf } from '../helpers/errors.js';
import {
  hex64,
  PASSING_ROWS,
  row,
  sampleAssertion,
  sampleAttempt,
  sampleClaim,
  sampleMutation,
  sampleSubject,
  sampleTask,
} from '../support/task-contracts.js';

const task = sampleTask();
const claim = sampleClaim(task);
const attempt = sampleAttempt(task, claim);
const assertion = sampleAssertion(task, attempt, PASSING_ROWS);

const clone = (value: JsonObject): JsonObject => structuredClone(value);
function decodeCode<T>(decoder: TaskDecoder<T>, value: JsonValue): string {
  return codeOf(() => decoder.decode(encodeCanonical(value)));
}
function at(value: JsonObject, path: readonly (string | number)[]): JsonObject {
  let node: JsonValue = value;
  for (const key of path) node = (node as Record<string | number, JsonValue>)[key] as JsonValue;
  return node as JsonObject;
}

interface Case {
  readonly name: string;
  readonly decoder: TaskDecoder<unknown>;
  readonly value: JsonObject;
  /** A nested object path where an unknown field must be refused too. */
  readonly nested?: readonly (string | number)[];
  readonly versionField?: string;
}

const recovery = buildRecoveryEnvelope(
  {
    request_id: 'claim-1',
    request_kind: 'claim',
    task_id: task.task_id,
    task_digest: hex64('1'),
    attempt_id: 'a-1',
    attempt_digest: hex64('2'),
    execution_operation_id: 'op-1',
  },
  {
    observed_state: 'replaced',
    confirmed_effects: [],
    unresolved_effects: ['execution_may_still_run'],
    supersession: { old_fence: 3n, new_fence: 4n },
    fence: 3n,
  },
);

const CASES: readonly Case[] = [
  { name: 'subject', decoder: workflowTaskSubjectDecoder, value: subjectToJson(sampleSubject()) },
  { name: 'task', decoder: workflowTaskDecoder, value: taskToJson(task), nested: ['subject'] },
  {
    name: 'entrypoint',
    decoder: instructionEntrypointDecoder,
    value: entrypointToJson(task.entrypoint),
    nested: ['criteria', 0],
    versionField: 'schema_version',
  },
  { name: 'attempt', decoder: workflowTaskAttemptDecoder, value: attemptToJson(attempt), nested: ['executor'] },
  { name: 'claim', decoder: taskClaimRequestDecoder, value: claimRequestToJson(claim), nested: ['agent'] },
  {
    name: 'mutation',
    decoder: taskMutationRequestDecoder,
    value: mutationRequestToJson(sampleMutation(task, attempt, 'cancel')),
    nested: ['executor'],
  },
  {
    name: 'status',
    decoder: taskStatusRequestDecoder,
    value: statusRequestToJson({
      version: 1,
      task_id: 't',
      task_digest: hex64('1'),
      attempt_id: 'a',
      attempt_digest: hex64('2'),
    }),
  },
  {
    name: 'assertion',
    decoder: taskResultAssertionDecoder,
    value: assertionToJson(assertion),
    nested: ['criteria', 1],
  },
  {
    name: 'reference request',
    decoder: referenceFetchRequestDecoder,
    value: {
      version: 1,
      task_id: 't',
      task_digest: hex64('1'),
      name: 'guide',
      expected_sha256: hex64('2'),
      expected_schema_version: 1,
      agent: { owner_id: 'o', agent_id: 'a' },
    },
    nested: ['agent'],
  },
  {
    name: 'instructions request',
    decoder: instructionRequestDecoder,
    value: { version: 1, task_id: 't', supported_schema_versions: [1, 2] },
  },
  {
    name: 'recovery envelope',
    decoder: taskRecoveryEnvelopeDecoder,
    value: recoveryEnvelopeToJson(recovery),
    nested: ['supersession'],
  },
];

for (const c of CASES) {
  test(`${c.name}: a valid value decodes and re-encodes to the same bytes`, () => {
    const bytes = encodeCanonical(c.value);
    const decoded = c.decoder.decode(bytes);
    assert.deepEqual(encodeCanonical(decoded as JsonValue), bytes);
  });

  test(`${c.name}: unknown fields (top${c.nested ? ' and nested' : ''}), a missing field and an unsupported version are refused`, () => {
    const extra = clone(c.value);
    extra.unexpected = 1;
    assert.equal(decodeCode(c.decoder, extra), 'SCHEMA_UNKNOWN_FIELD');
    if (c.nested !== undefined) {
      const nested = clone(c.value);
      at(nested, c.nested).unexpected = 'x';
      assert.equal(decodeCode(c.decoder, nested), 'SCHEMA_UNKNOWN_FIELD');
    }
    const keys = Object.keys(c.value);
    const missing = clone(c.value);
    delete missing[keys[keys.length - 1] ?? ''];
    assert.equal(decodeCode(c.decoder, missing), 'SCHEMA_MISSING_FIELD');
    const field = c.versionField ?? 'version';
    const v2 = clone(c.value);
    v2[field] = 2;
    v2.field_of_version_two = true;
    assert.equal(decodeCode(c.decoder, v2), 'SCHEMA_VERSION_UNSUPPORTED');
  });

  test(`${c.name}: input one byte over the decoder limit is refused before parsing`, () => {
    const bytes = Buffer.alloc(c.decoder.maxBytes + 1, 0x20);
    assert.equal(
      codeOf(() => c.decoder.decode(bytes)),
      'INPUT_TOO_LARGE',
    );
  });
}

test('ids: 128 characters accepted, 129 refused; digests must be 64 lowercase hex', () => {
  const value = clone(claimRequestToJson(claim));
  value.request_id = 'r'.repeat(128);
  assert.equal(decodeCode(taskClaimRequestDecoder, value), 'ok');
  value.request_id = 'r'.repeat(129);
  assert.equal(decodeCode(taskClaimRequestDecoder, value), 'SCHEMA_BOUND');
  value.request_id = 'has space';
  assert.equal(decodeCode(taskClaimRequestDecoder, value), 'ID_INVALID');
  const upper = clone(claimRequestToJson(claim));
  upper.task_digest = 'A'.repeat(64);
  assert.equal(decodeCode(taskClaimRequestDecoder, upper), 'ID_INVALID');
});

test('lease: 1 ms and 24 h accepted; 0 and 24 h + 1 ms refused', () => {
  const value = clone(claimRequestToJson(claim));
  for (const [lease, code] of [
    [1n, 'ok'],
    [86_400_000n, 'ok'],
    [0n, 'SCHEMA_BOUND'],
    [86_400_001n, 'SCHEMA_BOUND'],
  ] as const) {
    value.requested_lease_ms = lease;
    assert.equal(decodeCode(taskClaimRequestDecoder, value), code, `lease ${lease}`);
  }
  const a = clone(attemptToJson(attempt));
  a.lease_ms = 86_400_001n;
  assert.equal(decodeCode(workflowTaskAttemptDecoder, a), 'SCHEMA_BOUND');
});

test('fences: 0 refused, the largest u64 accepted exactly, one past it refused by the parser', () => {
  const value = clone(mutationRequestToJson(sampleMutation(task, attempt)));
  value.fence = 0n;
  assert.equal(decodeCode(taskMutationRequestDecoder, value), 'SCHEMA_BOUND');
  value.fence = 18446744073709551615n;
  const decoded = taskMutationRequestDecoder.decode(encodeCanonical(value));
  assert.equal(decoded.fence, 18446744073709551615n);
  const text = Buffer.from(encodeCanonical(value))
    .toString('utf8')
    .replace('18446744073709551615', '18446744073709551616');
  assert.equal(
    codeOf(() => taskMutationRequestDecoder.decode(Buffer.from(text))),
    'JSON_NUMBER_INVALID',
  );
});

test('mutation: action must be heartbeat, cancel or reconcile; reason at most 1024 UTF-8 bytes', () => {
  const value = clone(mutationRequestToJson(sampleMutation(task, attempt)));
  value.action = 'claim';
  assert.equal(decodeCode(taskMutationRequestDecoder, value), 'SCHEMA_TYPE');
  value.action = 'reconcile';
  value.reason = 'é'.repeat(512);
  assert.equal(decodeCode(taskMutationRequestDecoder, value), 'ok');
  value.reason = `${'é'.repeat(512)}x`;
  assert.equal(decodeCode(taskMutationRequestDecoder, value), 'SCHEMA_BOUND');
});

function assertionWith(edit: (value: JsonObject) => void): JsonObject {
  const value = clone(assertionToJson(assertion));
  edit(value);
  return value;
}
const rows = (value: JsonObject): JsonObject[] => value.criteria as JsonObject[];

test('assertion: 64 criteria accepted, 65 refused', () => {
  const many = (n: number) =>
    assertionWith(
      (v) =>
        (v.criteria = Array.from({ length: n }, (_, i) => ({
          criterion: `c${i}`,
          outcome: 'passed',
          findings: [],
          evidence_digests: [],
        }))),
    );
  assert.equal(decodeCode(taskResultAssertionDecoder, many(64)), 'ok');
  assert.equal(decodeCode(taskResultAssertionDecoder, many(65)), 'SCHEMA_BOUND');
  assert.equal(decodeCode(taskResultAssertionDecoder, many(0)), 'SCHEMA_BOUND');
});

test('assertion: 32 findings and 32 evidence digests accepted, 33 refused', () => {
  const findings = (n: number) =>
    assertionWith((v) => ((rows(v)[0] as JsonObject).findings = Array.from({ length: n }, (_, i) => `f${i}`)));
  assert.equal(decodeCode(taskResultAssertionDecoder, findings(32)), 'ok');
  assert.equal(decodeCode(taskResultAssertionDecoder, findings(33)), 'SCHEMA_BOUND');
  const evidence = (n: number) =>
    assertionWith((v) => ((rows(v)[0] as JsonObject).evidence_digests = Array.from({ length: n }, () => hex64('0'))));
  assert.equal(decodeCode(taskResultAssertionDecoder, evidence(32)), 'ok');
  assert.equal(decodeCode(taskResultAssertionDecoder, evidence(33)), 'SCHEMA_BOUND');
});

test('assertion: a finding of 4096 UTF-8 bytes is accepted, 4097 refused; NUL refused', () => {
  const finding = (text: string) => assertionWith((v) => ((rows(v)[0] as JsonObject).findings = [text]));
  assert.equal(decodeCode(taskResultAssertionDecoder, finding('\u{1F600}'.repeat(1024))), 'ok');
  assert.equal(decodeCode(taskResultAssertionDecoder, finding(`${'\u{1F600}'.repeat(1024)}a`)), 'SCHEMA_BOUND');
  assert.equal(decodeCode(taskResultAssertionDecoder, finding('a\u0000b')), 'SCHEMA_TYPE');
});

test('assertion: exactly 256 KiB of input accepted, one byte more refused', () => {
  const text = Buffer.from(encodeCanonical(assertionToJson(assertion)));
  const padded = Buffer.concat([text, Buffer.alloc(MAX_ASSERTION_BYTES - text.byteLength, 0x20)]);
  assert.equal(padded.byteLength, MAX_ASSERTION_BYTES);
  assert.equal(
    codeOf(() => taskResultAssertionDecoder.decode(padded)),
    'ok',
  );
  assert.equal(
    codeOf(() => taskResultAssertionDecoder.decode(Buffer.concat([padded, Buffer.from(' ')]))),
    'INPUT_TOO_LARGE',
  );
});

test('assertion: a value built in code whose encoding exceeds 256 KiB is refused', () => {
  const big = assertionWith(
    (v) =>
      (v.criteria = Array.from({ length: 64 }, (_, i) => ({
        criterion: `c${i}`,
        outcome: 'failed',
        findings: ['x'.repeat(4096)],
        evidence_digests: [],
      }))),
  );
  assert.equal(
    codeOf(() => taskResultAssertionDecoder.validate(big)),
    'INPUT_TOO_LARGE',
  );
});

test('assertion: duplicate rows, collector trust class and class/executor mismatches are refused', () => {
  assert.equal(
    decodeCode(
      taskResultAssertionDecoder,
      assertionWith((v) => rows(v).push(clone(rows(v)[0] as JsonObject))),
    ),
    'CRITERION_DUPLICATE',
  );
  assert.equal(
    decodeCode(
      taskResultAssertionDecoder,
      assertionWith((v) => (v.trust_class = 'authority_validated_collector_dependency')),
    ),
    'SCHEMA_TYPE',
  );
  assert.equal(
    decodeCode(
      taskResultAssertionDecoder,
      assertionWith((v) => (v.trust_class = 'agent_assertion')),
    ),
    'TRUST_CLASS_INVALID',
  );
  assert.equal(
    decodeCode(
      taskResultAssertionDecoder,
      assertionWith((v) => (v.executor = null)),
    ),
    'TRUST_CLASS_INVALID',
  );
  assert.equal(
    decodeCode(
      taskResultAssertionDecoder,
      assertionWith((v) => {
        v.trust_class = 'agent_assertion';
        v.executor = null;
      }),
    ),
    'ok',
  );
  assert.equal(
    decodeCode(
      taskResultAssertionDecoder,
      assertionWith((v) => ((rows(v)[0] as JsonObject).outcome = 'skipped')),
    ),
    'SCHEMA_TYPE',
  );
});

test('entrypoint: 1..64 criteria, unique; 0..32 references with canonical paths and unique names', () => {
  const entry = (edit: (v: JsonObject) => void) => {
    const value = clone(entrypointToJson(task.entrypoint));
    edit(value);
    return value;
  };
  const criteria = (n: number) =>
    entry(
      (v) =>
        (v.criteria = Array.from({ length: n }, (_, i) => ({
          criterion: `c${i}`,
          required: true,
          controller_only: false,
          description: '',
        }))),
    );
  assert.equal(decodeCode(instructionEntrypointDecoder, criteria(1)), 'ok');
  assert.equal(decodeCode(instructionEntrypointDecoder, criteria(64)), 'ok');
  assert.equal(decodeCode(instructionEntrypointDecoder, criteria(0)), 'SCHEMA_BOUND');
  assert.equal(decodeCode(instructionEntrypointDecoder, criteria(65)), 'SCHEMA_BOUND');
  assert.equal(
    decodeCode(
      instructionEntrypointDecoder,
      entry((v) => (v.criteria as JsonObject[]).push(clone((v.criteria as JsonObject[])[0] as JsonObject))),
    ),
    'SCHEMA_TYPE',
  );
  const refs = (n: number) =>
    entry(
      (v) =>
        (v.references = Array.from({ length: n }, (_, i) => ({
          name: `r${i}`,
          sha256: hex64('1'),
          path: `docs/r${i}.md`,
        }))),
    );
  assert.equal(decodeCode(instructionEntrypointDecoder, refs(32)), 'ok');
  assert.equal(decodeCode(instructionEntrypointDecoder, refs(33)), 'SCHEMA_BOUND');
  for (const path of ['../etc/passwd', '/abs', 'a//b', 'a/./b', 'a\\b', 'c:/x', 'a\u007fb', 'a\u0000b']) {
    assert.equal(
      decodeCode(
        instructionEntrypointDecoder,
        entry((v) => (((v.references as JsonObject[])[0] as JsonObject).path = path)),
      ),
      'PATH_INVALID',
      path,
    );
  }
  assert.equal(
    decodeCode(
      instructionEntrypointDecoder,
      entry((v) => (((v.references as JsonObject[])[0] as JsonObject).path = 'a'.repeat(512))),
    ),
    'ok',
  );
  assert.equal(
    decodeCode(
      instructionEntrypointDecoder,
      entry((v) => (((v.references as JsonObject[])[0] as JsonObject).path = 'a'.repeat(513))),
    ),
    'SCHEMA_BOUND',
  );
  assert.equal(
    decodeCode(
      instructionEntrypointDecoder,
      entry((v) => (v.progression = 'auto')),
    ),
    'SCHEMA_TYPE',
  );
  assert.equal(
    decodeCode(
      instructionEntrypointDecoder,
      entry((v) => (v.summary = 'é'.repeat(2048))),
    ),
    'ok',
  );
  assert.equal(
    decodeCode(
      instructionEntrypointDecoder,
      entry((v) => (v.summary = `${'é'.repeat(2048)}x`)),
    ),
    'SCHEMA_BOUND',
  );
});

test('task: needs at most 32 and unique; the entrypoint names the same task and step', () => {
  const withTask = (edit: (v: JsonObject) => void) => {
    const value = clone(taskToJson(task));
    edit(value);
    return value;
  };
  assert.equal(
    decodeCode(
      workflowTaskDecoder,
      withTask((v) => (v.needs = Array.from({ length: 32 }, (_, i) => `s${i}`))),
    ),
    'ok',
  );
  assert.equal(
    decodeCode(
      workflowTaskDecoder,
      withTask((v) => (v.needs = Array.from({ length: 33 }, (_, i) => `s${i}`))),
    ),
    'SCHEMA_BOUND',
  );
  assert.equal(
    decodeCode(
      workflowTaskDecoder,
      withTask((v) => (v.needs = ['a', 'a'])),
    ),
    'SCHEMA_TYPE',
  );
  assert.equal(
    decodeCode(
      workflowTaskDecoder,
      withTask((v) => ((v.entrypoint as JsonObject).task_id = 'other')),
    ),
    'TASK_BINDING_MISMATCH',
  );
  assert.equal(
    decodeCode(
      workflowTaskDecoder,
      withTask((v) => ((v.entrypoint as JsonObject).step_id = 'other')),
    ),
    'TASK_BINDING_MISMATCH',
  );
  assert.equal(
    decodeCode(
      workflowTaskDecoder,
      withTask((v) => ((v.entrypoint as JsonObject).criteria = [])),
    ),
    'SCHEMA_BOUND',
  );
});

// With several response shapes (oneOf) the reported code is the deepest branch failure, so the
// refusals below accept any schema code; what matters is that nothing else decodes.
test('reference responses: every outcome decodes; available content at 128 KiB, not one byte more', () => {
  const content = 'x'.repeat(REFERENCE_MAX_BYTES);
  const ok = (value: JsonObject) => decodeCode(referenceFetchResponseDecoder, value);
  assert.equal(
    ok({ status: 'available', name: 'g', sha256: hex64('1'), byte_length: REFERENCE_MAX_BYTES, content }),
    'ok',
  );
  assert.equal(
    ok({
      status: 'available',
      name: 'g',
      sha256: hex64('1'),
      byte_length: REFERENCE_MAX_BYTES + 1,
      content: `${content}x`,
    }),
    'SCHEMA_BOUND',
  );
  assert.match(
    ok({ status: 'available', name: 'g', sha256: hex64('1'), byte_length: 3, content: 'ab' }),
    /^SCHEMA_(TYPE|MISSING_FIELD|UNKNOWN_FIELD)$/,
  );
  assert.equal(ok({ status: 'missing', name: 'g' }), 'ok');
  assert.equal(ok({ status: 'denied', name: 'g', code: 'not_authorized' }), 'ok');
  assert.equal(ok({ status: 'uncertain', name: 'g', code: 'store_busy' }), 'ok');
  assert.equal(
    ok({ status: 'limit', name: 'g', byte_length: REFERENCE_MAX_BYTES + 1, limit_bytes: REFERENCE_MAX_BYTES }),
    'ok',
  );
  assert.match(
    ok({ status: 'limit', name: 'g', byte_length: REFERENCE_MAX_BYTES, limit_bytes: REFERENCE_MAX_BYTES }),
    /^SCHEMA_(TYPE|MISSING_FIELD|UNKNOWN_FIELD)$/,
  );
  assert.match(ok({ status: 'partial', name: 'g' }), /^SCHEMA_(TYPE|MISSING_FIELD|UNKNOWN_FIELD)$/);
  assert.match(ok({ status: 'missing', name: 'g', content: '' }), /^SCHEMA_(TYPE|MISSING_FIELD|UNKNOWN_FIELD)$/);
  const mismatch = schemaMismatch([2, 3], 1, [1]);
  assert.equal(ok(mismatch as unknown as JsonObject), 'ok');
  assert.deepEqual(mismatch.supported_schema_versions, [2, 3]);
});

test('instructions response: entrypoint or schema mismatch, nothing else', () => {
  const entry = { status: 'entrypoint', entrypoint: entrypointToJson(task.entrypoint) };
  assert.equal(decodeCode(instructionEntrypointResponseDecoder, entry), 'ok');
  assert.equal(
    decodeCode(instructionEntrypointResponseDecoder, schemaMismatch([2], 1, [1]) as unknown as JsonObject),
    'ok',
  );
  assert.match(
    decodeCode(instructionEntrypointResponseDecoder, { status: 'entrypoint', entrypoint: null }),
    /^SCHEMA_(TYPE|MISSING_FIELD|UNKNOWN_FIELD)$/,
  );
  assert.match(
    decodeCode(instructionEntrypointResponseDecoder, { status: 'empty' }),
    /^SCHEMA_(TYPE|MISSING_FIELD|UNKNOWN_FIELD)$/,
  );
});

test('capabilities: fixed capability, schema versions [1], sorted operations', () => {
  const answer = capabilitiesResponse(['status', 'claim', 'capabilities']);
  assert.deepEqual(answer, {
    capability: 'agentscm.agent-workflow-tasks/v1',
    supported_schema_versions: [1],
    operations: ['capabilities', 'claim', 'status'],
  });
  assert.equal(decodeCode(capabilitiesResponseDecoder, answer as unknown as JsonObject), 'ok');
  const sorted = capabilitiesResponse().operations;
  assert.deepEqual([...sorted], [...sorted].sort());
});

test('row helper rows are independent objects', () => {
  assert.notEqual(row('a', 'passed'), row('a', 'passed'));
});
