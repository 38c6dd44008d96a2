/**
 * Receipt v2 (docs/wire.md "Receipt v2") against test/vectors/collector-v1.json (computed
 * independently; read with the exact-integer parser because the collector row's fence is the
 * largest u64): canonical bytes and digest reproduced byte for byte, the transfer_digest of the
 * collector row equal to the SHA-256 of the vector envelope, an exact round trip, and every rule
 * beyond the schema refused with RECEIPT_INVALID.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { transferDigest } from '../../src/contracts/collector/transfer.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject, U64_MAX, type JsonObject, type JsonValue } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import {
  decodeReceiptV2,
  encodeReceiptV2,
  MAX_RECEIPT_TASKS,
  receiptOutcomeOf,
  receiptTaskKind,
  receiptV2Digest,
  receiptV2ToJson,
  validateReceiptV2,
  type WorkflowReceiptV2,
} from '../../src/contracts/receipt/receipt-v2.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';

const vector = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'collector-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(vector));
const canonicalText = vector.receipt_canonical_utf8 as string;
const receipt: WorkflowReceiptV2 = validateReceiptV2(vector.receipt as JsonValue);

function sampleJson(): JsonObject {
  return structuredClone((vector as JsonObject).receipt as JsonObject);
}

function edited(edit: (value: JsonObject, tasks: JsonObject[]) => void): JsonValue {
  const value = sampleJson();
  edit(value, value.tasks as JsonObject[]);
  return value;
}

function decodeCode(value: JsonValue): string {
  return codeOf(() => decodeReceiptV2(encodeCanonical(value)));
}

test('the canonical bytes and the digest of the vector receipt are reproduced', () => {
  assert.equal(encodeReceiptV2(receipt).toString('utf8'), canonicalText);
  assert.equal(receiptV2Digest(receipt), vector.receipt_digest);
});

test("the collector row's transfer_digest is the plain SHA-256 of the vector envelope", () => {
  const row = receipt.tasks[1];
  assert.ok(row !== undefined && receiptTaskKind(row) === 'collector');
  assert.equal(
    'transfer_digest' in row ? row.transfer_digest : null,
    transferDigest(Buffer.from(vector.envelope_hex as string, 'hex')),
  );
  assert.equal('fence' in row ? row.fence : null, U64_MAX);
  assert.equal(receiptTaskKind(receipt.tasks[0] as WorkflowReceiptV2['tasks'][number]), 'source_paths');
});

test('decode(encode(r)) equals r, and input in another key order re-encodes canonically', () => {
  const bytes = encodeReceiptV2(receipt);
  const decoded = decodeReceiptV2(bytes);
  assert.deepEqual(decoded, receipt);
  assert.ok(encodeReceiptV2(decoded).equals(bytes));
  const reversed = (value: JsonValue): JsonValue => {
    if (Array.isArray(value)) return value.map(reversed);
    if (!isJsonObject(value)) return value;
    const out: JsonObject = {};
    for (const key of Object.keys(value).reverse()) out[key] = reversed(value[key] as JsonValue);
    return out;
  };
  const shuffled = encodeCanonical(reversed(receiptV2ToJson(receipt)));
  assert.ok(!shuffled.equals(bytes));
  assert.ok(encodeReceiptV2(decodeReceiptV2(shuffled)).equals(bytes));
  assert.equal(receiptV2Digest(decodeReceiptV2(shuffled)), vector.receipt_digest);
});

test('a plain row and an omitted optional step give completed_with_omissions', () => {
  const value = edited((v, tasks) => {
    v.state = 'completed_with_omissions';
    tasks.push({
      task_id: 't-lint',
      task_digest: 'a'.repeat(64),
      step_id: 'lint',
      required: false,
      outcome: 'skipped',
    });
  });
  const decoded = validateReceiptV2(value);
  assert.equal(receiptTaskKind(decoded.tasks[2] as WorkflowReceiptV2['tasks'][number]), 'plain');
  assert.match(
    encodeReceiptV2(decoded).toString('utf8'),
    /\{"task_id":"t-lint","task_digest":"a{64}","step_id":"lint","required":false,"outcome":"skipped"\}\]\}$/,
  );
});

test('schema refusals: version, unknown field, missing field, state, outcome, bounds', () => {
  const cases: [string, JsonValue, string][] = [
    ['version 1', edited((v) => (v.version = 1)), 'SCHEMA_VERSION_UNSUPPORTED'],
    ['unknown top field', edited((v) => (v.receipt_url = 'x')), 'SCHEMA_UNKNOWN_FIELD'],
    ['unknown row field', edited((_v, t) => ((t[0] as JsonObject).run_id = 'r')), 'SCHEMA_UNKNOWN_FIELD'],
    [
      'unknown origin field',
      edited((_v, t) => (((t[1] as JsonObject).origin as JsonObject).scope = 'agent')),
      'SCHEMA_UNKNOWN_FIELD',
    ],
    ['missing plan_digest', edited((v) => delete (v.subject as JsonObject).plan_digest), 'SCHEMA_MISSING_FIELD'],
    ['missing outcome', edited((_v, t) => delete (t[0] as JsonObject).outcome), 'SCHEMA_MISSING_FIELD'],
    ['state failed', edited((v) => (v.state = 'failed')), 'SCHEMA_TYPE'],
    ['outcome not_claimed', edited((_v, t) => ((t[0] as JsonObject).outcome = 'not_claimed')), 'SCHEMA_TYPE'],
    ['no tasks', edited((v) => (v.tasks = [])), 'SCHEMA_BOUND'],
    ['fence 0', edited((_v, t) => ((t[1] as JsonObject).fence = 0)), 'SCHEMA_BOUND'],
    ['bad authority', edited((v) => (v.authority_id = 'x'.repeat(32))), 'ID_INVALID'],
  ];
  for (const [name, value, code] of cases) assert.equal(decodeCode(value), code, name);
  const many = edited((v) => {
    v.tasks = Array.from({ length: MAX_RECEIPT_TASKS + 1 }, (_, i) => ({
      task_id: `t-${i}`,
      task_digest: 'b'.repeat(64),
      step_id: `s-${i}`,
      required: true,
      outcome: 'passed',
    }));
  });
  assert.equal(decodeCode(many), 'SCHEMA_BOUND');
});

test('rules beyond the schema are refused with RECEIPT_INVALID', () => {
  const cases: [string, JsonValue][] = [
    ['collector row without its origin', edited((_v, t) => delete (t[1] as JsonObject).origin)],
    ['collector row without its fence', edited((_v, t) => delete (t[1] as JsonObject).fence)],
    [
      'collector evidence and result_digest together',
      edited((_v, t) => ((t[1] as JsonObject).result_digest = '9'.repeat(64))),
    ],
    [
      'a result_digest on a source_paths task that did not pass',
      edited((v, t) => {
        v.state = 'completed_with_omissions';
        (t[0] as JsonObject).required = false;
        (t[0] as JsonObject).outcome = 'failed';
      }),
    ],
    [
      'a transfer on a skipped task',
      edited((v, t) => {
        v.state = 'completed_with_omissions';
        (t[1] as JsonObject).required = false;
        (t[1] as JsonObject).outcome = 'skipped';
      }),
    ],
    [
      'a required task that did not pass',
      edited((v, t) => {
        v.state = 'completed_with_omissions';
        t.push({ task_id: 't-x', task_digest: 'c'.repeat(64), step_id: 'x', required: true, outcome: 'uncertain' });
      }),
    ],
    [
      'completed with an omission',
      edited((_v, t) =>
        t.push({ task_id: 't-x', task_digest: 'c'.repeat(64), step_id: 'x', required: false, outcome: 'unavailable' }),
      ),
    ],
    ['completed_with_omissions without one', edited((v) => (v.state = 'completed_with_omissions'))],
    ['a task listed twice', edited((_v, t) => t.push({ ...(t[0] as JsonObject), step_id: 'other' }))],
    ['a step listed twice', edited((_v, t) => t.push({ ...(t[0] as JsonObject), task_id: 't-other' }))],
  ];
  for (const [name, value] of cases) assert.equal(decodeCode(value), 'RECEIPT_INVALID', name);
});

test('an optional collector task that did not pass still names its transfer (the receipt names every transfer)', () => {
  for (const outcome of ['failed', 'unavailable', 'uncertain']) {
    const value = edited((v, t) => {
      v.state = 'completed_with_omissions';
      (t[1] as JsonObject).required = false;
      (t[1] as JsonObject).outcome = outcome;
    });
    const decoded = decodeReceiptV2(encodeCanonical(value));
    const row = decoded.tasks[1];
    assert.ok(row !== undefined && receiptTaskKind(row) === 'collector', outcome);
    assert.equal(row.outcome, outcome);
  }
  // A record's outcome as a row names it: a review's incomplete is a failed step, as in a server run.
  assert.deepEqual(['passed', 'failed', 'incomplete', 'unavailable', 'uncertain'].map(receiptOutcomeOf), [
    'passed',
    'failed',
    'failed',
    'unavailable',
    'uncertain',
  ]);
  assert.equal(
    codeOf(() => receiptOutcomeOf('skipped')),
    'RECEIPT_INVALID',
  );
});

test('validate does not modify the value it is given', () => {
  const value = sampleJson();
  const before = structuredClone(value);
  validateReceiptV2(value);
  assert.deepEqual(value, before);
});
