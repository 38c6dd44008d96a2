import assert from 'node:assert/strict';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import {
  DIGEST_SCHEMA,
  ID_SCHEMA,
  isDigestHex,
  isId,
  REPOSITORY_ID_SCHEMA,
  SIGNATURE_SCHEMA,
  U64_SCHEMA,
  validateDigestHex,
  validateId,
  validateRepositoryId,
  validateSignatureHex,
} from '../../src/contracts/ids.js';
import { defineDecoder } from '../../src/contracts/json/schema.js';

const isIdInvalid = (e: unknown): boolean => e instanceof AgentscmError && e.code === 'ID_INVALID' && e.exitCode === 2;

const CASES: readonly {
  name: string;
  check: (v: unknown, what?: string) => string;
  good: readonly string[];
  bad: readonly unknown[];
}[] = [
  {
    name: 'validateId',
    check: validateId,
    good: ['a', 'A-z_0.9', '...', 'x'.repeat(128)],
    bad: ['', 'x'.repeat(129), 'a b', 'a/b', 'a:b', 'é', 'a\u0000', 'a\n', 42, null],
  },
  {
    name: 'validateRepositoryId',
    check: validateRepositoryId,
    good: ['0123456789abcdef0123456789abcdef'],
    bad: [
      '0123456789abcdef0123456789abcde',
      '0123456789abcdef0123456789abcdef0',
      '0123456789ABCDEF0123456789abcdef',
      'g123456789abcdef0123456789abcdef',
      '',
    ],
  },
  {
    name: 'validateDigestHex',
    check: validateDigestHex,
    good: ['a'.repeat(64), '0123456789abcdef'.repeat(4)],
    bad: ['a'.repeat(63), 'a'.repeat(65), 'A'.repeat(64), `${'a'.repeat(63)}\n`, ''],
  },
  {
    name: 'validateSignatureHex',
    check: validateSignatureHex,
    good: ['f'.repeat(128)],
    bad: ['f'.repeat(127), 'f'.repeat(129), 'F'.repeat(128)],
  },
];

for (const row of CASES) {
  test(`${row.name} accepts the valid forms and refuses the rest with ID_INVALID`, () => {
    for (const value of row.good) assert.equal(row.check(value, 'thing'), value);
    for (const value of row.bad) {
      assert.throws(
        () => row.check(value, 'the thing'),
        (e: unknown) => isIdInvalid(e) && (e as Error).message.startsWith('the thing '),
        JSON.stringify(value),
      );
    }
  });
}

test('isId and isDigestHex agree with the validators', () => {
  assert.ok(isId('x'.repeat(128)));
  assert.ok(!isId('x'.repeat(129)));
  assert.ok(isDigestHex('0'.repeat(64)));
  assert.ok(!isDigestHex('0'.repeat(65)));
});

test('the schema fragments give ID_INVALID for a malformed id and SCHEMA_BOUND for a wrong length', () => {
  const decoder = defineDecoder<{ id: string; repo: string; digest: string; sig: string; n: bigint }>('test.ids.v1', {
    type: 'object',
    properties: {
      id: ID_SCHEMA,
      repo: REPOSITORY_ID_SCHEMA,
      digest: DIGEST_SCHEMA,
      sig: SIGNATURE_SCHEMA,
      n: U64_SCHEMA,
    },
    required: ['id', 'repo', 'digest', 'sig', 'n'],
    additionalProperties: false,
  });
  const good = { id: 'x'.repeat(128), repo: 'a'.repeat(32), digest: 'b'.repeat(64), sig: 'c'.repeat(128), n: 3 };
  assert.equal(decoder.validate(good).n, 3n);
  const cases: readonly [Record<string, unknown>, string, string][] = [
    [{ id: 'x'.repeat(129) }, 'SCHEMA_BOUND', '/id'],
    [{ id: 'a b' }, 'ID_INVALID', '/id'],
    [{ repo: 'A'.repeat(32) }, 'ID_INVALID', '/repo'],
    [{ digest: 'b'.repeat(63) }, 'SCHEMA_BOUND', '/digest'],
    [{ digest: 'B'.repeat(64) }, 'ID_INVALID', '/digest'],
    [{ sig: 'z'.repeat(128) }, 'ID_INVALID', '/sig'],
  ];
  for (const [patch, code, pointer] of cases) {
    assert.throws(
      () => decoder.validate({ ...good, ...patch }),
      (e: unknown) => e instanceof AgentscmError && e.code === code && e.details?.pointer === pointer,
      JSON.stringify(patch),
    );
  }
});
