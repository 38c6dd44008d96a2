/**
 * Properties of observation signing over random assertions (fast-check): the signing text is the
 * independent reference encoding (JSON.stringify for strings, exact decimal for u64), decode of
 * the encoding gives the same digest, signatures round-trip, and any changed finding breaks them.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';

import {
  observationDigest,
  observationSigningBytes,
  signObservation,
  verifyObservation,
} from '../../src/contracts/collector/observation.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import {
  assertionToJson,
  taskResultAssertionDecoder,
  type CriterionResult,
  type TaskResultAssertion,
} from '../../src/contracts/task/result.js';
import { generateKeyPair, verificationKeyId } from '../../src/crypto/ed25519.js';

const key = generateKeyPair();
const keyId = verificationKeyId(key.publicKey);

const finding = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\u0000'));
const u64 = fc.bigInt(1n, 18446744073709551615n);
const rowArb = (criterion: string): fc.Arbitrary<CriterionResult> =>
  fc.record({
    criterion: fc.constant(criterion),
    outcome: fc.constantFrom('passed', 'failed', 'not_claimed', 'uncertain'),
    findings: fc.array(finding, { maxLength: 4 }),
    evidence_digests: fc.array(fc.stringMatching(/^[0-9a-f]{64}$/), { maxLength: 2 }),
  });

const assertionArb: fc.Arbitrary<TaskResultAssertion> = fc
  .record({
    fence: u64,
    epoch: u64,
    outcome: fc.constantFrom('passed', 'failed', 'uncertain'),
    rows: fc.tuple(rowArb('a'), rowArb('b')),
  })
  .map(({ fence, epoch, outcome, rows }) => ({
    version: 1,
    task_id: 'task-1',
    task_digest: '1'.repeat(64),
    attempt_id: 'attempt-1',
    attempt_digest: '2'.repeat(64),
    request_id: 'req-1',
    execution_operation_id: 'op-1',
    agent: { owner_id: 'alice', agent_id: 'codex' },
    executor: { registration_id: 'reg-1', executor_id: 'box', registration_epoch: epoch, verification_key_id: keyId },
    fence,
    trust_class: 'registered_executor_observation',
    outcome,
    criteria: rows,
    executor_provenance: null,
  }));

/** Reference text: JSON.stringify escapes exactly as the spec for well-formed strings; u64 written as exact decimal. */
function referenceText(a: TaskResultAssertion): string {
  const marker = '\u0000u64:';
  const text = JSON.stringify(assertionToJson(a, null), (_k, v: unknown) =>
    typeof v === 'bigint' ? `${marker}${v.toString()}` : v,
  );
  return text.replace(/"\\u0000u64:([0-9]+)"/g, '$1');
}

test('signing bytes equal the reference encoding for random findings and u64 values', () => {
  fc.assert(
    fc.property(assertionArb, (a) => {
      assert.equal(Buffer.from(observationSigningBytes(a)).toString('utf8'), referenceText(a));
    }),
    { numRuns: 200 },
  );
});

test('decode(encode(assertion)) keeps the digest; signatures verify and a changed finding breaks them', () => {
  fc.assert(
    fc.property(assertionArb, finding, (a, extra) => {
      const decoded = taskResultAssertionDecoder.decode(encodeCanonical(assertionToJson(a)));
      assert.equal(observationDigest(decoded), observationDigest(a));
      const signed = signObservation(decoded, key.privateKey);
      assert.equal(verifyObservation(signed, key.publicKey).observation_digest, observationDigest(a));
      const [first, second] = signed.criteria;
      assert.ok(first !== undefined && second !== undefined);
      const changed: TaskResultAssertion = {
        ...signed,
        criteria: [{ ...first, findings: [...first.findings, extra] }, second],
      };
      assert.throws(
        () => verifyObservation(changed, key.publicKey),
        (error: unknown) => error instanceof AgentscmError && error.code === 'SIGNATURE_INVALID',
      );
    }),
    { numRuns: 60 },
  );
});
