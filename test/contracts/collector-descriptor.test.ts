/**
 * The collector descriptor (docs/wire.md "Collector descriptor"): canonical bytes in declared order,
 * an exact round trip (the largest u64 fence included), and strict decoding that refuses
 * unknown and missing fields at every depth, other versions, bad identifiers, a zero fence, a
 * recipe that is not a valid CommandRecipe, duplicate keys and oversize input, each with its code.
 * The bindings are those of test/vectors/collector-v1.json, so the descriptor names the same
 * task, attempt, profile, origin and executor as the vector's transfer header.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  collectorDescriptorToJson,
  decodeCollectorDescriptor,
  encodeCollectorDescriptor,
  MAX_COLLECTOR_DESCRIPTOR_BYTES,
  validateCollectorDescriptor,
  type CollectorDescriptor,
} from '../../src/contracts/collector/descriptor.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject, U64_MAX, type JsonObject, type JsonValue } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';

const vector = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'collector-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(vector));
const header = vector.transfer_header as JsonObject;
const profile = vector.collector_profile as JsonObject;

/** The descriptor the authority would answer for the vector's claim. */
function sampleJson(): JsonObject {
  return {
    version: 1,
    authority_id: header.audience as string,
    repository_id: header.repository_id as string,
    workflow_profile: profile.workflow_profile as string,
    collector_profile_id: header.collector_profile_id as string,
    task: { task_id: header.task_id as string, task_digest: header.task_digest as string },
    attempt: {
      attempt_id: header.attempt_id as string,
      attempt_digest: header.attempt_digest as string,
      fence: header.fence as bigint,
      execution_operation_id: header.execution_operation_id as string,
      lease_expires_at_ms: 1_800_000_000_000n,
    },
    subject: {
      change_id: 'fix-1',
      change_version: 4n,
      revision: '4'.repeat(64),
      context_digest: '5'.repeat(64),
      policy_epoch: 7n,
      target: 'main',
      requirement_digest: '6'.repeat(64),
    },
    origin: structuredClone(header.origin as JsonObject),
    executor: structuredClone(header.executor as JsonObject),
    recipe: structuredClone(profile.recipe as JsonObject),
    runtime_identity_digest: profile.runtime_identity_digest as string,
    upload_request_id: header.upload_request_id as string,
  };
}

const sample: CollectorDescriptor = validateCollectorDescriptor(sampleJson());

function decodeCode(value: JsonValue): string {
  return codeOf(() => decodeCollectorDescriptor(encodeCanonical(value)));
}

function edited(edit: (value: JsonObject) => void): JsonObject {
  const value = sampleJson();
  edit(value);
  return value;
}

test('the canonical bytes list the fields in the declared order of docs/wire.md', () => {
  const text = encodeCollectorDescriptor(sample).toString('utf8');
  const order = [
    '"version":1',
    '"authority_id":',
    '"repository_id":',
    '"workflow_profile":',
    '"collector_profile_id":',
    '"task":{"task_id":',
    '"task_digest":',
    '"attempt":{"attempt_id":',
    '"attempt_digest":',
    '"fence":18446744073709551615,',
    '"execution_operation_id":',
    '"lease_expires_at_ms":1800000000000}',
    '"subject":{"change_id":"fix-1","change_version":4,"revision":',
    '"context_digest":',
    '"policy_epoch":7,"target":"main","requirement_digest":',
    '"origin":{"owner_id":"alice","agent_id":"agent-1","grant_id":"g-1","grant_generation":2}',
    '"executor":{"registration_id":"reg-9","executor_id":"ci-box","registration_epoch":3,"verification_key_id":',
    '"recipe":{"version":1,"image":"local/busybox:1","argv":["/bin/sh","-c","make test"]',
    '"runtime_identity_digest":',
    '"upload_request_id":"up-1"}',
  ];
  let from = 0;
  for (const piece of order) {
    const at = text.indexOf(piece, from);
    assert.ok(at >= from, `${piece} after offset ${from} in ${text}`);
    from = at + piece.length;
  }
  assert.equal(from, text.length);
});

test('the recipe inside the descriptor has the canonical bytes of the profile vector', () => {
  const recipeText = encodeCanonical(collectorDescriptorToJson(sample).recipe as JsonValue).toString('utf8');
  const profileText = vector.collector_profile_canonical_utf8 as string;
  assert.ok(profileText.includes(`"recipe":${recipeText},`), recipeText);
});

test('decode(encode(d)) equals d, with the u64 maximum fence exact', () => {
  const bytes = encodeCollectorDescriptor(sample);
  const decoded = decodeCollectorDescriptor(bytes);
  assert.deepEqual(decoded, sample);
  assert.equal(decoded.attempt.fence, U64_MAX);
  assert.ok(encodeCollectorDescriptor(decoded).equals(bytes));
});

test('a descriptor in another key order decodes to the same value and re-encodes canonically', () => {
  const value = sampleJson();
  const reversed: JsonObject = {};
  for (const key of Object.keys(value).reverse()) reversed[key] = value[key] as JsonValue;
  const decoded = decodeCollectorDescriptor(encodeCanonical(reversed));
  assert.ok(encodeCollectorDescriptor(decoded).equals(encodeCollectorDescriptor(sample)));
});

test('an unknown field is refused at the top and in every nested object', () => {
  for (const path of [
    [],
    ['task'],
    ['attempt'],
    ['subject'],
    ['origin'],
    ['executor'],
    ['recipe'],
    ['recipe', 'limits'],
  ]) {
    const value = edited((v) => {
      let node = v;
      for (const key of path) node = node[key] as JsonObject;
      node.extra = 1;
    });
    assert.equal(decodeCode(value), 'SCHEMA_UNKNOWN_FIELD', path.join('/'));
  }
});

test('every declared field is required, at the top and nested', () => {
  const top = Object.keys(sampleJson());
  for (const key of top) {
    const value = edited((v) => {
      delete v[key];
    });
    assert.equal(decodeCode(value), 'SCHEMA_MISSING_FIELD', key);
  }
  for (const [parent, key] of [
    ['task', 'task_digest'],
    ['attempt', 'lease_expires_at_ms'],
    ['subject', 'requirement_digest'],
    ['origin', 'grant_generation'],
    ['executor', 'verification_key_id'],
    ['recipe', 'environment'],
  ] as const) {
    const value = edited((v) => {
      delete (v[parent] as JsonObject)[key];
    });
    assert.equal(decodeCode(value), 'SCHEMA_MISSING_FIELD', `${parent}/${key}`);
  }
});

test('other versions, bad identifiers, a zero fence and an invalid recipe are refused with their codes', () => {
  const cases: [string, (v: JsonObject) => void, string][] = [
    ['version 2', (v) => (v.version = 2), 'SCHEMA_VERSION_UNSUPPORTED'],
    ['authority_id not 32 hex', (v) => (v.authority_id = 'FEDCBA9876543210FEDCBA9876543210'), 'ID_INVALID'],
    ['collector_profile_id short', (v) => (v.collector_profile_id = 'ab'), 'SCHEMA_BOUND'],
    ['upload_request_id with a slash', (v) => (v.upload_request_id = 'up/1'), 'ID_INVALID'],
    ['fence 0', (v) => ((v.attempt as JsonObject).fence = 0), 'SCHEMA_BOUND'],
    ['grant_generation a string', (v) => ((v.origin as JsonObject).grant_generation = 'x'), 'SCHEMA_TYPE'],
    ['recipe version 2', (v) => ((v.recipe as JsonObject).version = 2), 'SCHEMA_TYPE'],
    ['recipe workdir escapes', (v) => ((v.recipe as JsonObject).workdir = '../up'), 'PATH_INVALID'],
    ['recipe argv empty', (v) => ((v.recipe as JsonObject).argv = []), 'SCHEMA_BOUND'],
  ];
  for (const [name, edit, code] of cases) assert.equal(decodeCode(edited(edit)), code, name);
});

test('duplicate keys and oversize input are refused before schema validation', () => {
  const text = encodeCollectorDescriptor(sample).toString('utf8').replace('"version":1,', '"version":1,"version":1,');
  assert.equal(
    codeOf(() => decodeCollectorDescriptor(Buffer.from(text))),
    'JSON_DUPLICATE_KEY',
  );
  const oversize = Buffer.alloc(MAX_COLLECTOR_DESCRIPTOR_BYTES + 1, 0x20);
  assert.equal(
    codeOf(() => decodeCollectorDescriptor(oversize)),
    'INPUT_TOO_LARGE',
  );
});

test('validate does not modify the value it is given', () => {
  const value = sampleJson();
  const before = structuredClone(value);
  validateCollectorDescriptor(value);
  assert.deepEqual(value, before);
});
