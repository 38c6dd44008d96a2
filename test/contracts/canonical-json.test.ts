import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';

import { domainDigest, DOMAINS, mutationDomain } from '../../src/contracts/digest.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import {
  encodeCanonical,
  encodeCanonicalText,
  formatJson,
  quoteJsonString,
} from '../../src/contracts/json/canonical-json.js';
import { U64_MAX, type JsonValue } from '../../src/contracts/json/json-value.js';
import { asParsed, parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { sha256Hex } from '../../src/crypto/sha256.js';

const ESCAPES: readonly [string, string][] = [
  ['"', '"\\""'],
  ['\\', '"\\\\"'],
  ['\b', '"\\b"'],
  ['\t', '"\\t"'],
  ['\n', '"\\n"'],
  ['\f', '"\\f"'],
  ['\r', '"\\r"'],
  ['\u0000', '"\\u0000"'],
  ['\u0001', '"\\u0001"'],
  ['\u000b', '"\\u000b"'],
  ['\u001f', '"\\u001f"'],
  ['/', '"/"'],
  ['\u007f', '"\u007f"'],
  ['\u2028', '"\u2028"'],
  ['\u2029', '"\u2029"'],
  ['😀', '"😀"'],
  ['naïve', '"naïve"'],
  ['\u00e9', '"\u00e9"'],
  ['e\u0301', '"e\u0301"'],
  ['<script>&', '"<script>&"'],
];

for (const [input, expected] of ESCAPES) {
  test(`quoteJsonString ${JSON.stringify(input)} → ${expected}`, () => {
    assert.equal(quoteJsonString(input), expected);
  });
}

test('the compact encoder writes every code point exactly as quoteJsonString (each BMP code unit outside the surrogates, and a pair)', () => {
  const mismatches: number[] = [];
  for (let code = 0; code <= 0xffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const text = `a${String.fromCharCode(code)}b`;
    if (
      encodeCanonicalText(text) !== quoteJsonString(text) ||
      encodeCanonicalText({ [text]: 0 }) !== `{${quoteJsonString(text)}:0}`
    )
      mismatches.push(code);
  }
  assert.deepEqual(mismatches, []);
  assert.equal(encodeCanonicalText('\ud83d\ude00'), quoteJsonString('\ud83d\ude00'));
});

test('control characters use lowercase hex (\\u001f not \\u001F)', () => {
  assert.equal(encodeCanonicalText('\u001a\u001b'), '"\\u001a\\u001b"');
});

test('non-ASCII is raw UTF-8, not escaped; no normalisation happens', () => {
  const bytes = encodeCanonical(['\u2028', '😀', 'e\u0301', '\u00e9']);
  assert.equal(
    Buffer.from(bytes).toString('hex'),
    Buffer.from('["\u2028","😀","e\u0301","\u00e9"]', 'utf8').toString('hex'),
  );
  assert.ok(Buffer.from(bytes).includes(Buffer.from([0xe2, 0x80, 0xa8])));
  assert.ok(Buffer.from(bytes).includes(Buffer.from([0xf0, 0x9f, 0x98, 0x80])));
});

test('lone surrogates cannot be encoded', () => {
  assert.throws(
    () => encodeCanonical('\ud800'),
    (e: unknown) => e instanceof AgentscmError && e.code === 'JSON_LONE_SURROGATE',
  );
  assert.throws(
    () => encodeCanonical({ ['\udc00']: 1 }),
    (e: unknown) => e instanceof AgentscmError && e.code === 'JSON_LONE_SURROGATE',
  );
});

test('integers: 0, safe numbers, 2^53+1 and u64 max exactly; negative, fractional, unsafe and > u64 refused', () => {
  assert.equal(
    encodeCanonicalText([0, 1, Number.MAX_SAFE_INTEGER, 9007199254740993n, U64_MAX]),
    '[0,1,9007199254740991,9007199254740993,18446744073709551615]',
  );
  for (const bad of [-1, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, -1n, U64_MAX + 1n]) {
    assert.throws(
      () => encodeCanonical([bad]),
      (e: unknown) => e instanceof AgentscmError && e.code === 'JSON_NUMBER_INVALID',
      String(bad),
    );
  }
});

test('compact output, declared key order kept (never sorted), null written, empty containers', () => {
  const value: JsonValue = { z: 1, a: null, m: { y: true, b: false }, e: [], o: {} };
  assert.equal(encodeCanonicalText(value), '{"z":1,"a":null,"m":{"y":true,"b":false},"e":[],"o":{}}');
});

test('undefined is refused: every declared field must be written', () => {
  assert.throws(
    () => encodeCanonical({ a: undefined } as unknown as JsonValue),
    (e: unknown) => e instanceof AgentscmError && e.code === 'INTERNAL',
  );
});

test('no BOM, no trailing newline', () => {
  const bytes = Buffer.from(encodeCanonical({ a: 1 }));
  assert.notEqual(bytes[0], 0xef);
  assert.notEqual(bytes[bytes.length - 1], 0x0a);
});

test('round trip: strict parse then canonical encode reproduces canonical bytes', () => {
  const canonical =
    '{"version":1,"fence":18446744073709551615,"s":"a\\"\\\\\\b\\t\\n\\f\\r\\u0000/\u007f\u2028😀","arr":[null,true,false,{}],"n":9007199254740993}';
  const bytes = Buffer.from(canonical, 'utf8');
  assert.equal(Buffer.from(encodeCanonical(parseStrictJson(bytes, { maxBytes: 4096 }))).toString('utf8'), canonical);
  // Non-canonical input (whitespace, \u escapes of printable characters, escaped /) becomes canonical.
  const loose = Buffer.from(' { "a" : "\\u0041\\/\\u00e9" , "b" : [ 1 ] } ');
  assert.equal(encodeCanonicalText(parseStrictJson(loose, { maxBytes: 4096 })), '{"a":"A/é","b":[1]}');
});

const jsonValue: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => s.isWellFormed()),
    fc.bigInt({ min: 0n, max: U64_MAX }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

test('property: parse(encode(v)) re-encodes to the same bytes', () => {
  fc.assert(
    fc.property(jsonValue, (value) => {
      const bytes = encodeCanonical(value);
      const again = encodeCanonical(parseStrictJson(bytes, { maxBytes: 1 << 20 }));
      assert.deepEqual(Buffer.from(again), Buffer.from(bytes));
    }),
    { numRuns: 300 },
  );
});

test('property: asParsed(v) equals parse(encode(v)) — integer types included — without changing v', () => {
  const integer = fc.oneof(
    fc.bigInt({ min: 0n, max: U64_MAX }),
    fc.bigInt({ min: 9007199254740980n, max: 9007199254741000n }),
    fc.nat(),
  );
  const value: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.string({ maxLength: 8 }),
      integer,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constant('__proto__')), tie('value'), { maxKeys: 4 }),
    ),
  })).value;
  fc.assert(
    fc.property(value, (v) => {
      const before = encodeCanonicalText(v);
      assert.deepStrictEqual(asParsed(v), parseStrictJson(encodeCanonical(v), { maxBytes: 1 << 20 }));
      assert.equal(encodeCanonicalText(v), before);
    }),
    { numRuns: 300 },
  );
  assert.deepStrictEqual(asParsed({ a: [9007199254740991n, 9007199254740992n, 3] }), {
    a: [9007199254740991, 9007199254740992n, 3],
  });
});

test('formatJson pretty-prints with the same escaping and exact integers', () => {
  assert.equal(
    formatJson({ a: [U64_MAX], b: {}, c: '\u2028' }),
    '{\n  "a": [\n    18446744073709551615\n  ],\n  "b": {},\n  "c": "\u2028"\n}',
  );
});

test('domain digest = SHA-256(domain ‖ 0x00 ‖ u64be(len) ‖ bytes)', () => {
  const bytes = Buffer.from('{"a":1}');
  const length = Buffer.alloc(8);
  length.writeBigUInt64BE(BigInt(bytes.length));
  const manual = sha256Hex(Buffer.concat([Buffer.from(DOMAINS.task, 'ascii'), Buffer.from([0]), length, bytes]));
  assert.equal(domainDigest(DOMAINS.task, bytes), manual);
  assert.match(manual, /^[0-9a-f]{64}$/);
  assert.notEqual(domainDigest(DOMAINS.attempt, bytes), manual);
  assert.equal(mutationDomain('heartbeat'), 'agentscm.agent-workflow-mutation.v1.heartbeat');
  assert.notEqual(domainDigest(mutationDomain('heartbeat'), bytes), domainDigest(mutationDomain('cancel'), bytes));
  // The length prefix separates (domain, bytes) pairs that concatenate to the same stream.
  assert.equal(
    domainDigest(DOMAINS.task, new Uint8Array()),
    sha256Hex(Buffer.concat([Buffer.from(DOMAINS.task), Buffer.alloc(9)])),
  );
});

test('the domain table matches docs/wire.md "Canonical encoding and digests"', () => {
  assert.deepEqual(DOMAINS, {
    observation: 'agentscm.agent-workflow-observation.v1',
    task: 'agentscm.agent-workflow-task.v1',
    attempt: 'agentscm.agent-workflow-attempt.v1',
    result: 'agentscm.agent-workflow-result.v1',
    collectorTransfer: 'agentscm.collector-transfer.v1',
    collectorProfile: 'agentscm.collector-profile.v1',
    receipt: 'agentscm.workflow-receipt.v2',
    revision: 'agentscm.revision.v2',
    tree: 'agentscm.tree.v1',
    reviewContext: 'agentscm.review-context.v1',
    plan: 'agentscm.skill-workflow-plan.v1',
    review: 'agentscm.review.v1',
    reviewRequest: 'agentscm.review-request.v1',
    reviewTicket: 'agentscm.review-ticket.v1',
    reviewRecord: 'agentscm.review-record.v1',
  });
});
