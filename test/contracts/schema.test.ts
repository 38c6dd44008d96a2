import assert from 'node:assert/strict';
import test from 'node:test';

import { AgentscmError, type ErrorCode } from '../../src/contracts/errors.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import { defineDecoder, metaSchemaProblems } from '../../src/contracts/json/schema.js';

interface Sample {
  version: number;
  count: bigint;
  name: string;
  note?: string;
  tags?: string[];
  small?: number;
  nested?: { level2: { level3: { leaf: string } } };
  maybe?: { x: number } | null;
  labels?: Record<string, string>;
  lease_ms?: bigint;
  owner?: string;
}

const SAMPLE = defineDecoder<Sample>(
  'test.sample.v1',
  {
    type: 'object',
    properties: {
      version: { type: 'integer', minimum: 0, maximum: 1000 },
      count: { u64: true },
      name: { type: 'string', minLength: 1, maxLength: 4 },
      note: { type: 'string', maxUtf8Bytes: 6 },
      tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 3 },
      small: { type: 'integer', minimum: 0, maximum: 10 },
      nested: {
        type: 'object',
        properties: {
          level2: {
            type: 'object',
            properties: {
              level3: {
                type: 'object',
                properties: { leaf: { type: 'string', maxLength: 8 } },
                required: ['leaf'],
                additionalProperties: false,
              },
            },
            required: ['level3'],
            additionalProperties: false,
          },
        },
        required: ['level2'],
        additionalProperties: false,
      },
      maybe: {
        type: ['object', 'null'],
        properties: { x: { type: 'integer', maximum: 5 } },
        required: ['x'],
        additionalProperties: false,
      },
      labels: {
        type: 'object',
        patternProperties: { '^[a-z]{1,8}$': { type: 'string', maxLength: 8 } },
        maxProperties: 2,
        additionalProperties: false,
      },
      lease_ms: { u64: { minimum: '1', maximum: '86400000' } },
      owner: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._-]{1,128}$', idKind: 'id' },
    },
    required: ['version', 'count', 'name'],
    additionalProperties: false,
  },
  { versionField: 'version', supportedVersions: [1] },
);

const BASE = '"version":1,"count":7,"name":"ab"';

function decodeError(text: string, maxBytes = 4096): AgentscmError {
  try {
    SAMPLE.decode(Buffer.from(text, 'utf8'), maxBytes);
  } catch (error) {
    assert.ok(error instanceof AgentscmError, `expected AgentscmError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${text} to be refused`);
}

const REFUSALS: readonly { name: string; body: string; code: ErrorCode; pointer: string }[] = [
  { name: 'unknown top-level field', body: `{${BASE},"extra":1}`, code: 'SCHEMA_UNKNOWN_FIELD', pointer: '/extra' },
  {
    name: 'unknown field at depth 3',
    body: `{${BASE},"nested":{"level2":{"level3":{"leaf":"a","sneaky":true}}}}`,
    code: 'SCHEMA_UNKNOWN_FIELD',
    pointer: '/nested/level2/level3/sneaky',
  },
  {
    name: 'unknown field inside a nullable object',
    body: `{${BASE},"maybe":{"x":1,"y":2}}`,
    code: 'SCHEMA_UNKNOWN_FIELD',
    pointer: '/maybe/y',
  },
  {
    name: 'map key outside its pattern',
    body: `{${BASE},"labels":{"Upper":"a"}}`,
    code: 'SCHEMA_UNKNOWN_FIELD',
    pointer: '/labels/Upper',
  },
  { name: 'missing top-level field', body: '{"version":1,"count":7}', code: 'SCHEMA_MISSING_FIELD', pointer: '/name' },
  {
    name: 'missing nested field',
    body: `{${BASE},"nested":{"level2":{"level3":{}}}}`,
    code: 'SCHEMA_MISSING_FIELD',
    pointer: '/nested/level2/level3/leaf',
  },
  { name: 'string where an integer belongs', body: `{${BASE},"small":"3"}`, code: 'SCHEMA_TYPE', pointer: '/small' },
  {
    name: 'string where a u64 belongs',
    body: '{"version":1,"count":"7","name":"ab"}',
    code: 'SCHEMA_TYPE',
    pointer: '/count',
  },
  {
    name: 'null where a u64 belongs',
    body: '{"version":1,"count":null,"name":"ab"}',
    code: 'SCHEMA_TYPE',
    pointer: '/count',
  },
  { name: 'array where an object belongs', body: `{${BASE},"nested":[]}`, code: 'SCHEMA_TYPE', pointer: '/nested' },
  { name: 'top-level array', body: '[1]', code: 'SCHEMA_TYPE', pointer: '/' },
  {
    name: 'string where a nullable object belongs',
    body: `{${BASE},"maybe":"x"}`,
    code: 'SCHEMA_TYPE',
    pointer: '/maybe',
  },
  {
    name: 'bigint in a non-u64 integer field',
    body: `{${BASE},"small":18446744073709551615}`,
    code: 'SCHEMA_TYPE',
    pointer: '/small',
  },
  { name: 'id field breaking its pattern', body: `{${BASE},"owner":"a b"}`, code: 'ID_INVALID', pointer: '/owner' },
  {
    name: 'maxLength one past',
    body: '{"version":1,"count":7,"name":"abcde"}',
    code: 'SCHEMA_BOUND',
    pointer: '/name',
  },
  { name: 'minLength one below', body: '{"version":1,"count":7,"name":""}', code: 'SCHEMA_BOUND', pointer: '/name' },
  { name: 'maxItems one past', body: `{${BASE},"tags":["a","b","c","d"]}`, code: 'SCHEMA_BOUND', pointer: '/tags' },
  { name: 'item maxLength one past', body: `{${BASE},"tags":["123456789"]}`, code: 'SCHEMA_BOUND', pointer: '/tags/0' },
  {
    name: 'maxUtf8Bytes one past (3 two-byte chars + 1)',
    body: `{${BASE},"note":"ééé1"}`,
    code: 'SCHEMA_BOUND',
    pointer: '/note',
  },
  { name: 'maximum one past', body: `{${BASE},"small":11}`, code: 'SCHEMA_BOUND', pointer: '/small' },
  {
    name: 'maxProperties one past',
    body: `{${BASE},"labels":{"a":"1","b":"2","c":"3"}}`,
    code: 'SCHEMA_BOUND',
    pointer: '/labels',
  },
  { name: 'u64 minimum one below', body: `{${BASE},"lease_ms":0}`, code: 'SCHEMA_BOUND', pointer: '/lease_ms' },
  { name: 'u64 maximum one past', body: `{${BASE},"lease_ms":86400001}`, code: 'SCHEMA_BOUND', pointer: '/lease_ms' },
  {
    name: 'nested bound inside nullable object',
    body: `{${BASE},"maybe":{"x":6}}`,
    code: 'SCHEMA_BOUND',
    pointer: '/maybe/x',
  },
  {
    name: 'unsupported version',
    body: '{"version":2,"count":7,"name":"ab"}',
    code: 'SCHEMA_VERSION_UNSUPPORTED',
    pointer: '/version',
  },
  { name: 'missing version', body: '{"count":7,"name":"ab"}', code: 'SCHEMA_MISSING_FIELD', pointer: '/version' },
  {
    name: 'unsupported version is reported before unknown fields',
    body: '{"version":9,"whatever":{"x":1}}',
    code: 'SCHEMA_VERSION_UNSUPPORTED',
    pointer: '/version',
  },
  { name: 'string version', body: '{"version":"1","count":7,"name":"ab"}', code: 'SCHEMA_TYPE', pointer: '/version' },
  {
    name: 'huge version',
    body: '{"version":18446744073709551615,"count":7,"name":"ab"}',
    code: 'SCHEMA_VERSION_UNSUPPORTED',
    pointer: '/version',
  },
  {
    name: 'parser refusals come first: duplicate key',
    body: '{"version":1,"version":1,"count":7,"name":"ab"}',
    code: 'JSON_DUPLICATE_KEY',
    pointer: '/version',
  },
];

for (const row of REFUSALS) {
  test(`decode refuses ${row.name} with ${row.code}`, () => {
    const error = decodeError(row.body);
    assert.equal(error.code, row.code, error.message);
    assert.equal(error.exitCode, 2);
    assert.equal(error.details?.pointer, row.pointer, error.message);
    assert.ok(error.message.includes(row.pointer), `message names the pointer: ${error.message}`);
  });
}

test('bounds at the limit are accepted', () => {
  const value = SAMPLE.decode(
    Buffer.from(
      `{"version":1,"count":7,"name":"abcd","note":"ééé","tags":["a","b","12345678"],"small":10,"labels":{"a":"1","b":"2"},"lease_ms":86400000,"owner":"${'x'.repeat(128)}","maybe":{"x":5}}`,
    ),
    4096,
  );
  assert.equal(value.name, 'abcd');
  assert.equal(value.lease_ms, 86400000n);
  assert.equal(value.small, 10);
  assert.equal(typeof value.small, 'number');
});

test('u64 fields come out as bigint, exact up to 18446744073709551615', () => {
  assert.equal(SAMPLE.decode(Buffer.from('{"version":1,"count":0,"name":"a"}'), 100).count, 0n);
  assert.equal(
    SAMPLE.decode(Buffer.from('{"version":1,"count":9007199254740993,"name":"a"}'), 100).count,
    9007199254740993n,
  );
  const max = SAMPLE.decode(Buffer.from('{"version":1,"count":18446744073709551615,"name":"a"}'), 100);
  assert.equal(max.count, 18446744073709551615n);
  assert.equal(typeof max.version, 'number');
  assert.equal(decodeError('{"version":1,"count":18446744073709551616,"name":"a"}').code, 'JSON_NUMBER_INVALID');
});

test('decode checks the byte size before parsing', () => {
  const body = Buffer.from('{"version":1,"count":7,"name":"ab"}');
  assert.equal(SAMPLE.decode(body, body.length).name, 'ab');
  assert.equal(decodeError(body.toString(), body.length - 1).code, 'INPUT_TOO_LARGE');
});

test('validate accepts an already parsed value, normalises u64 and leaves the input untouched', () => {
  const input: JsonValue = { version: 1, count: 5, name: 'ab', lease_ms: 10 };
  const out = SAMPLE.validate(input);
  assert.equal(out.count, 5n);
  assert.equal(out.lease_ms, 10n);
  assert.equal(input.count, 5);
  assert.throws(
    () => SAMPLE.validate({ version: 1, count: -1, name: 'ab' }),
    (e: unknown) => e instanceof AgentscmError && e.code === 'SCHEMA_BOUND',
  );
  assert.throws(
    () => SAMPLE.validate({ version: 1, count: 1.5, name: 'ab' }),
    (e: unknown) => e instanceof AgentscmError && e.code === 'SCHEMA_TYPE',
  );
  assert.throws(
    () => SAMPLE.validate({ version: 1, count: 2 ** 60, name: 'ab' }),
    (e: unknown) => e instanceof AgentscmError && e.code === 'SCHEMA_TYPE',
  );
  assert.throws(
    () => SAMPLE.validate({ version: 1, count: 18446744073709551616n, name: 'ab' }),
    (e: unknown) => e instanceof AgentscmError && e.code === 'SCHEMA_BOUND',
  );
});

test('a u64 inside arrays is normalised element by element', () => {
  const list = defineDecoder<{ fences: bigint[] }>('test.u64-list.v1', {
    type: 'object',
    properties: { fences: { type: 'array', items: { u64: true }, maxItems: 4 } },
    required: ['fences'],
    additionalProperties: false,
  });
  assert.deepEqual(list.decode(Buffer.from('{"fences":[1,18446744073709551615,0]}'), 100).fences, [
    1n,
    18446744073709551615n,
    0n,
  ]);
});

const BAD_SCHEMAS: readonly { name: string; schema: object; message: RegExp }[] = [
  {
    name: 'top-level object without additionalProperties: false',
    schema: { type: 'object', properties: {} },
    message: /\/: object schema without "additionalProperties": false/,
  },
  {
    name: 'nested object without additionalProperties: false',
    schema: {
      type: 'object',
      properties: {
        a: { type: 'array', maxItems: 1, items: { type: 'object', properties: { b: { type: 'integer' } } } },
      },
      additionalProperties: false,
    },
    message: /\/properties\/a\/items: object schema/,
  },
  {
    name: 'object inside anyOf without additionalProperties: false',
    schema: {
      type: 'object',
      properties: { a: { anyOf: [{ type: 'null' }, { type: 'object' }] } },
      additionalProperties: false,
    },
    message: /anyOf\/1: object schema/,
  },
  {
    name: 'additionalProperties: true',
    schema: { type: 'object', additionalProperties: true },
    message: /additionalProperties/,
  },
  {
    name: 'array without maxItems',
    schema: {
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'integer' } } },
      additionalProperties: false,
    },
    message: /array schema without maxItems/,
  },
  {
    name: 'string without a length bound',
    schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
    message: /string schema without maxLength/,
  },
  {
    name: 'map without maxProperties',
    schema: { type: 'object', patternProperties: { '^a$': { type: 'integer' } }, additionalProperties: false },
    message: /maxProperties/,
  },
  {
    name: 'string whose pattern is unanchored',
    schema: {
      type: 'object',
      properties: { a: { type: 'string', pattern: '[a-z]{1,3}' } },
      additionalProperties: false,
    },
    message: /string schema without maxLength/,
  },
  {
    name: 'string whose pattern is unbounded',
    schema: { type: 'object', properties: { a: { type: 'string', pattern: '^[a-z]+$' } }, additionalProperties: false },
    message: /string schema without maxLength/,
  },
  {
    name: 'string whose pattern has an open range',
    schema: {
      type: 'object',
      properties: { a: { type: 'string', pattern: '^[a-z]{2,}$' } },
      additionalProperties: false,
    },
    message: /string schema without maxLength/,
  },
  { name: 'u64 at the top level', schema: { u64: true }, message: /top-level/ },
  {
    name: 'a keyword ajv strict mode does not know',
    schema: { type: 'object', properties: { a: { type: 'integer', maximun: 3 } }, additionalProperties: false },
    message: /strict mode/,
  },
  {
    name: 'a bound without its type (ajv strictTypes)',
    schema: { type: 'object', properties: { a: { maxLength: 3 } }, additionalProperties: false },
    message: /strict mode/,
  },
];

for (const [index, row] of BAD_SCHEMAS.entries()) {
  test(`defineDecoder refuses a schema with ${row.name}`, () => {
    // Definition-time rules throw from defineDecoder; ajv strict-mode failures throw when the
    // schema compiles (on first use, or compile(), which the registry test runs for every schema).
    assert.throws(
      () => defineDecoder(`test.bad${index}.v1`, row.schema).compile(),
      (e: unknown) => e instanceof Error && !(e instanceof AgentscmError) && row.message.test(e.message),
    );
  });
}

test('defineDecoder refuses a bad id and a version field without supported versions', () => {
  const ok = { type: 'object', additionalProperties: false };
  assert.throws(() => defineDecoder('bad id', ok), /decoder id/);
  assert.throws(() => defineDecoder('x'.repeat(129), ok), /decoder id/);
  assert.doesNotThrow(() => defineDecoder('x'.repeat(128), ok));
  assert.doesNotThrow(() => defineDecoder('agent-task/claim-request', ok));
  for (const bad of ['../x', 'a/../b', 'a//b', '/a', 'a/', '.hidden', 'a/.b', 'a\\b']) {
    assert.throws(() => defineDecoder(bad, ok), /decoder id/, bad);
  }
  assert.throws(
    () => defineDecoder('test.v', ok, { versionField: 'version', supportedVersions: [] }),
    /supportedVersions/,
  );
});

test('an anchored pattern with bounded repetition bounds a string without maxLength', () => {
  const hex = defineDecoder<{ d: string }>('test.hex.v1', {
    type: 'object',
    properties: { d: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
    required: ['d'],
    additionalProperties: false,
  });
  assert.equal(hex.decode(Buffer.from(`{"d":"${'a'.repeat(64)}"}`), 100).d, 'a'.repeat(64));
  assert.throws(
    () => hex.decode(Buffer.from(`{"d":"${'a'.repeat(65)}"}`), 100),
    (e: unknown) => e instanceof AgentscmError && e.code === 'SCHEMA_TYPE',
  );
});

test('supported versions may be bigint and several', () => {
  const multi = defineDecoder<{ version: bigint }>(
    'test.multi.v1',
    { type: 'object', properties: { version: { u64: true } }, required: ['version'], additionalProperties: false },
    { versionField: 'version', supportedVersions: [1, 18446744073709551615n] },
  );
  assert.equal(multi.decode(Buffer.from('{"version":18446744073709551615}'), 100).version, 18446744073709551615n);
  assert.equal(multi.decode(Buffer.from('{"version":1}'), 100).version, 1n);
  assert.throws(
    () => multi.decode(Buffer.from('{"version":2}'), 100),
    (e: unknown) =>
      e instanceof AgentscmError && e.code === 'SCHEMA_VERSION_UNSUPPORTED' && e.message.includes('/version'),
  );
});

test('maxDepth option reaches the parser', () => {
  const shallow = defineDecoder(
    'test.shallow.v1',
    {
      type: 'object',
      properties: {
        a: {
          type: 'object',
          properties: { b: { type: 'object', additionalProperties: false } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    { maxDepth: 2 },
  );
  assert.doesNotThrow(() => shallow.decode(Buffer.from('{"a":{}}'), 100));
  assert.throws(
    () => shallow.decode(Buffer.from('{"a":{"b":{}}}'), 100),
    (e: unknown) => e instanceof AgentscmError && e.code === 'JSON_TOO_DEEP',
  );
});

test('metaSchemaProblems finds what the draft-07 and custom keyword meta-schemas refuse', () => {
  const ok = {
    type: 'object',
    properties: { n: { u64: { maximum: '10' } }, s: { type: 'string', maxUtf8Bytes: 4, idKind: 'id' } },
    additionalProperties: false,
  };
  assert.equal(metaSchemaProblems(ok), null);
  assert.match(metaSchemaProblems({ ...ok, properties: { n: { u64: { maximum: 'ten' } } } }) ?? '', /pattern|match/);
  assert.match(metaSchemaProblems({ ...ok, properties: { s: { type: 'string', maxUtf8Bytes: -1 } } }) ?? '', />= 0/);
  assert.match(
    metaSchemaProblems({ ...ok, properties: { s: { type: 'string', maxLength: 4, idKind: 'nickname' } } }) ?? '',
    /allowed values/,
  );
  assert.match(metaSchemaProblems({ ...ok, maxProperties: -2 }) ?? '', />= 0/);
});
