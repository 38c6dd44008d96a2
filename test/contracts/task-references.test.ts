/**
 * Named reference answers (docs/agent-task-contract.md "Types"): available only for the exact
 * stored digest, within 128 KiB and UTF-8; limit decided from the stored size before reading;
 * instructions answer an entrypoint or an explicit schema mismatch.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import {
  instructionEntrypointResponseDecoder,
  instructionsResponse,
} from '../../src/contracts/instruction-entrypoint.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import {
  REFERENCE_MAX_BYTES,
  referenceFetchResponseDecoder,
  referenceLimit,
  referenceResponseForBody,
} from '../../src/contracts/named-reference.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { sampleTask } from '../support/task-contracts.js';

const body = Buffer.from('# Guide\nnaïve — ok\n');
const reference = { name: 'guide', sha256: sha256Hex(body), path: 'docs/guide.md' };
const request = { name: 'guide', expected_sha256: reference.sha256 };

const roundTrip = (value: unknown) => referenceFetchResponseDecoder.decode(encodeCanonical(value as JsonValue));

test('available: exact digest, UTF-8 body, byte length', () => {
  const answer = referenceResponseForBody(reference, request, body);
  assert.deepEqual(answer, {
    status: 'available',
    name: 'guide',
    sha256: reference.sha256,
    byte_length: body.byteLength,
    content: body.toString('utf8'),
  });
  assert.deepEqual(roundTrip(answer), answer);
});

test('a request for another digest, a changed body or a non-UTF-8 body is denied, never partial', () => {
  assert.deepEqual(referenceResponseForBody(reference, { ...request, expected_sha256: '0'.repeat(64) }, body), {
    status: 'denied',
    name: 'guide',
    code: 'digest_mismatch',
  });
  assert.deepEqual(referenceResponseForBody(reference, request, Buffer.from('# Guide\nchanged\n')), {
    status: 'denied',
    name: 'guide',
    code: 'digest_mismatch',
  });
  const binary = Buffer.from([0xff, 0xfe, 0x00]);
  assert.deepEqual(
    referenceResponseForBody(
      { ...reference, sha256: sha256Hex(binary) },
      { ...request, expected_sha256: sha256Hex(binary) },
      binary,
    ),
    {
      status: 'denied',
      name: 'guide',
      code: 'not_utf8',
    },
  );
});

test('128 KiB is available, one byte more is limit (decided from the stored size before reading)', () => {
  const full = Buffer.alloc(REFERENCE_MAX_BYTES, 0x61);
  const at = { ...reference, sha256: sha256Hex(full) };
  assert.equal(referenceResponseForBody(at, { ...request, expected_sha256: at.sha256 }, full).status, 'available');
  assert.equal(referenceLimit('guide', REFERENCE_MAX_BYTES), null);
  const limit = referenceLimit('guide', REFERENCE_MAX_BYTES + 1);
  assert.deepEqual(limit, {
    status: 'limit',
    name: 'guide',
    byte_length: REFERENCE_MAX_BYTES + 1,
    limit_bytes: REFERENCE_MAX_BYTES,
  });
  assert.deepEqual(roundTrip(limit), limit);
  assert.equal(referenceLimit('guide', 1n << 62n)?.status, 'limit');
});

test('instructions: entrypoint for a caller offering 1, explicit mismatch otherwise', () => {
  const { entrypoint } = sampleTask();
  assert.deepEqual(instructionsResponse(entrypoint, [2, 1]), { status: 'entrypoint', entrypoint });
  const mismatch = instructionsResponse(entrypoint, [2, 3]);
  assert.equal(mismatch.status, 'schema_mismatch');
  assert.ok(mismatch.status === 'schema_mismatch');
  assert.deepEqual(mismatch.supported_schema_versions, [2, 3]);
  assert.deepEqual(mismatch.server_schema_versions, [1]);
  assert.equal(mismatch.required_schema_version, 1);
  assert.equal(
    instructionEntrypointResponseDecoder.decode(encodeCanonical(mismatch as unknown as JsonValue)).status,
    'schema_mismatch',
  );
});
