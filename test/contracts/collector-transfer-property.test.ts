/**
 * Properties of the collector transfer envelope v1 (fast-check): for random headers (every u64
 * up to the maximum, random ids and digests) and random record bytes, decoding an encoded
 * envelope gives back the header and the exact record bytes; and a single changed byte anywhere
 * in an envelope — magic, length, header, signature or records — is refused by the verifying
 * reader, over every byte of the vector envelope and over random envelopes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';

import {
  encodeTransferEnvelope,
  transferRecordEntry,
  verifyTransferEnvelope,
  type TransferHeader,
} from '../../src/contracts/collector/transfer.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import { isJsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { generateKeyPair, verificationKeyId } from '../../src/crypto/ed25519.js';
import { REPO_ROOT } from '../helpers/cli.js';

const key = generateKeyPair();
const keyId = verificationKeyId(key.publicKey);

const u64 = fc.bigInt(0n, 18446744073709551615n);
const positiveU64 = fc.bigInt(1n, 18446744073709551615n);
const id = fc.stringMatching(/^[A-Za-z0-9._-]{1,128}$/);
const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
const hex32 = fc.stringMatching(/^[0-9a-f]{32}$/);
const recordBytes = fc.uint8Array({ minLength: 1, maxLength: 600 });

interface Case {
  readonly header: TransferHeader;
  readonly records: readonly Uint8Array[];
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    audience: hex32,
    repository_id: hex32,
    collector_profile_id: hex64,
    task_id: id,
    task_digest: hex64,
    attempt_id: id,
    attempt_digest: hex64,
    execution_operation_id: id,
    fence: positiveU64,
    origin: fc.record({ owner_id: id, agent_id: id, grant_id: id, grant_generation: u64 }),
    executor: fc.record({ registration_id: id, executor_id: id, registration_epoch: u64 }),
    request_digest: hex64,
    collector: fc.record({
      agentscm_version: fc.stringMatching(/^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/),
      runtime_identity_digest: hex64,
    }),
    upload_request_id: id,
    request: recordBytes,
    record: recordBytes,
  })
  // fast-check builds records without a prototype; the decoder's objects have Object's.
  .map(({ request, record, executor, origin, collector, ...fields }) => ({
    header: {
      version: 1 as const,
      ...fields,
      origin: { ...origin },
      collector: { ...collector },
      executor: { ...executor, verification_key_id: keyId },
      records: [transferRecordEntry('execution_request', request), transferRecordEntry('execution_record', record)],
    },
    records: [request, record],
  }));

/** The code of the refusal, or a failure when the changed envelope was accepted. */
function refusedCode(bytes: Uint8Array, publicKey: Uint8Array): string {
  try {
    verifyTransferEnvelope(bytes, publicKey);
  } catch (error) {
    if (error instanceof AgentscmError) return error.code;
    throw error;
  }
  return 'accepted';
}

const REFUSALS = new Set([
  'TRANSFER_MAGIC_INVALID',
  'TRANSFER_HEADER_TOO_LARGE',
  'TRANSFER_TOO_LARGE',
  'TRANSFER_TRUNCATED',
  'TRANSFER_TRAILING_BYTES',
  'TRANSFER_HEADER_INVALID',
  'TRANSFER_HEADER_NOT_CANONICAL',
  'TRANSFER_RECORDS_INVALID',
  'TRANSFER_SIGNATURE_INVALID',
  'TRANSFER_RECORD_DIGEST_MISMATCH',
]);

test('decode(encode(header, records)) gives the same header and the exact record bytes', () => {
  fc.assert(
    fc.property(caseArb, ({ header, records }) => {
      const envelope = encodeTransferEnvelope(header, records, key.privateKey);
      const read = verifyTransferEnvelope(envelope, key.publicKey);
      assert.deepEqual(read.header, header);
      assert.deepEqual(
        read.records.map((r) => Buffer.from(r.bytes)),
        records.map((r) => Buffer.from(r)),
      );
      assert.equal(read.length, envelope.byteLength);
      assert.equal(
        encodeTransferEnvelope(
          read.header,
          read.records.map((r) => r.bytes),
          key.privateKey,
        ).equals(envelope),
        true,
      );
    }),
    { numRuns: 150 },
  );
});

test('one changed byte anywhere in a random envelope is refused with a transfer code', () => {
  fc.assert(
    fc.property(caseArb, fc.nat(), fc.integer({ min: 1, max: 255 }), ({ header, records }, position, mask) => {
      const envelope = encodeTransferEnvelope(header, records, key.privateKey);
      const changed = Buffer.from(envelope);
      const at = position % changed.byteLength;
      changed[at] = (changed[at] as number) ^ mask;
      const code = refusedCode(changed, key.publicKey);
      assert.ok(REFUSALS.has(code), `byte ${at} ^ ${mask}: ${code}`);
    }),
    { numRuns: 300 },
  );
});

test('every single-byte change of the vector envelope is refused', () => {
  const vector = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'collector-v1.json')), {
    maxBytes: 1 << 20,
  });
  assert.ok(isJsonObject(vector));
  const envelope = Buffer.from(vector.envelope_hex as string, 'hex');
  const publicKey = Buffer.from(vector.public_key_hex as string, 'hex');
  const seen = new Set<string>();
  for (let at = 0; at < envelope.byteLength; at++) {
    for (const mask of [0x01, 0x80]) {
      const changed = Buffer.from(envelope);
      changed[at] = (changed[at] as number) ^ mask;
      const code = refusedCode(changed, publicKey);
      assert.ok(REFUSALS.has(code), `byte ${at} ^ ${mask}: ${code}`);
      seen.add(code);
    }
  }
  // The sweep reaches the magic, length, header, signature and record checks.
  for (const code of [
    'TRANSFER_MAGIC_INVALID',
    'TRANSFER_HEADER_TOO_LARGE',
    'TRANSFER_TRUNCATED',
    'TRANSFER_HEADER_INVALID',
    'TRANSFER_SIGNATURE_INVALID',
    'TRANSFER_RECORD_DIGEST_MISMATCH',
  ]) {
    assert.ok(seen.has(code), `${code} in ${[...seen].join(' ')}`);
  }
});
