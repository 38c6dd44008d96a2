import assert from 'node:assert/strict';
import test from 'node:test';

import { AgentscmError, type ErrorCode } from '../../src/contracts/errors.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';

const LIMIT = 1 << 20;

function bytesOf(input: string | readonly number[]): Uint8Array {
  return typeof input === 'string' ? Buffer.from(input, 'utf8') : Uint8Array.from(input);
}

function refusal(
  input: string | readonly number[],
  options: { maxBytes?: number; maxDepth?: number } = {},
): AgentscmError {
  try {
    parseStrictJson(bytesOf(input), { maxBytes: options.maxBytes ?? LIMIT, maxDepth: options.maxDepth });
  } catch (error) {
    assert.ok(error instanceof AgentscmError, `expected an AgentscmError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(input)} to be refused`);
}

const REFUSALS: readonly { name: string; input: string | readonly number[]; code: ErrorCode; pointer?: string }[] = [
  { name: 'UTF-8 BOM before an object', input: [0xef, 0xbb, 0xbf, 0x7b, 0x7d], code: 'JSON_BOM' },
  { name: 'BOM alone', input: [0xef, 0xbb, 0xbf], code: 'JSON_BOM' },
  { name: 'lone continuation byte', input: [0x22, 0x80, 0x22], code: 'JSON_INVALID_UTF8' },
  { name: 'overlong "/" (C0 AF)', input: [0x22, 0xc0, 0xaf, 0x22], code: 'JSON_INVALID_UTF8' },
  { name: 'overlong NUL (E0 80 80)', input: [0x22, 0xe0, 0x80, 0x80, 0x22], code: 'JSON_INVALID_UTF8' },
  { name: 'UTF-8-encoded high surrogate (ED A0 80)', input: [0x22, 0xed, 0xa0, 0x80, 0x22], code: 'JSON_INVALID_UTF8' },
  { name: 'UTF-8-encoded low surrogate (ED BF BF)', input: [0x22, 0xed, 0xbf, 0xbf, 0x22], code: 'JSON_INVALID_UTF8' },
  {
    name: 'code point above U+10FFFF (F4 90 80 80)',
    input: [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22],
    code: 'JSON_INVALID_UTF8',
  },
  { name: 'truncated sequence at end', input: [0x22, 0xe2, 0x82], code: 'JSON_INVALID_UTF8' },
  { name: 'byte FF', input: [0xff], code: 'JSON_INVALID_UTF8' },
  { name: 'UTF-16LE BOM', input: [0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00], code: 'JSON_INVALID_UTF8' },
  { name: 'lone high surrogate escape', input: '"\\ud800"', code: 'JSON_LONE_SURROGATE' },
  { name: 'lone low surrogate escape', input: '"\\udc00"', code: 'JSON_LONE_SURROGATE' },
  { name: 'high surrogate followed by a non-surrogate escape', input: '"\\ud83d\\u0041"', code: 'JSON_LONE_SURROGATE' },
  { name: 'high surrogate followed by a plain char', input: '"\\ud83dx"', code: 'JSON_LONE_SURROGATE' },
  { name: 'two high surrogates', input: '"\\ud83d\\ud83d"', code: 'JSON_LONE_SURROGATE' },
  {
    name: 'lone surrogate in a key at depth',
    input: '{"a":[{"\\udfff":1}]}',
    code: 'JSON_LONE_SURROGATE',
    pointer: '/a/0',
  },
  { name: 'duplicate key at the top', input: '{"a":1,"a":2}', code: 'JSON_DUPLICATE_KEY', pointer: '/a' },
  {
    name: 'duplicate key at depth 3',
    input: '{"x":[{"y":{"k":1,"j":2,"k":1}}]}',
    code: 'JSON_DUPLICATE_KEY',
    pointer: '/x/0/y/k',
  },
  {
    name: 'duplicate key spelled with an escape',
    input: '{"a":1,"\\u0061":2}',
    code: 'JSON_DUPLICATE_KEY',
    pointer: '/a',
  },
  { name: 'duplicate __proto__ key', input: '{"__proto__":1,"__proto__":2}', code: 'JSON_DUPLICATE_KEY' },
  {
    name: 'duplicate key that shadows Object.prototype',
    input: '{"constructor":1,"toString":2,"constructor":3}',
    code: 'JSON_DUPLICATE_KEY',
    pointer: '/constructor',
  },
  { name: 'negative number', input: '-1', code: 'JSON_NUMBER_INVALID' },
  { name: 'negative zero', input: '[-0]', code: 'JSON_NUMBER_INVALID', pointer: '/0' },
  { name: 'fraction', input: '1.0', code: 'JSON_NUMBER_INVALID' },
  { name: 'exponent', input: '1e3', code: 'JSON_NUMBER_INVALID' },
  { name: 'upper-case exponent', input: '{"n":1E3}', code: 'JSON_NUMBER_INVALID', pointer: '/n' },
  { name: 'leading zero', input: '01', code: 'JSON_NUMBER_INVALID' },
  { name: 'u64 max + 1', input: '18446744073709551616', code: 'JSON_NUMBER_INVALID' },
  { name: '21 digits', input: '100000000000000000000', code: 'JSON_NUMBER_INVALID' },
  { name: 'ten thousand digits', input: '9'.repeat(10_000), code: 'JSON_NUMBER_INVALID' },
  { name: 'empty input', input: '', code: 'JSON_SYNTAX' },
  { name: 'whitespace only', input: ' \n', code: 'JSON_SYNTAX' },
  { name: 'trailing comma in array', input: '[1,]', code: 'JSON_SYNTAX' },
  { name: 'trailing comma in object', input: '{"a":1,}', code: 'JSON_SYNTAX' },
  { name: 'two documents', input: '{} {}', code: 'JSON_SYNTAX' },
  { name: 'single-quoted string', input: "'a'", code: 'JSON_SYNTAX' },
  { name: 'unquoted key', input: '{a:1}', code: 'JSON_SYNTAX' },
  { name: 'raw newline in a string', input: '"a\nb"', code: 'JSON_SYNTAX' },
  { name: 'raw NUL in a string', input: '"a\u0000b"', code: 'JSON_SYNTAX' },
  { name: 'invalid escape', input: '"\\x41"', code: 'JSON_SYNTAX' },
  { name: 'short unicode escape', input: '"\\u12"', code: 'JSON_SYNTAX' },
  { name: 'unterminated string', input: '"abc', code: 'JSON_SYNTAX' },
  { name: 'NaN', input: 'NaN', code: 'JSON_SYNTAX' },
  { name: 'Infinity', input: '[Infinity]', code: 'JSON_SYNTAX' },
  { name: 'truncated literal', input: 'tru', code: 'JSON_SYNTAX' },
  { name: 'literal with trailing letters', input: 'nullx', code: 'JSON_SYNTAX' },
  { name: 'comment', input: '{} // x', code: 'JSON_SYNTAX' },
  { name: 'form feed as whitespace', input: '\f{}', code: 'JSON_SYNTAX' },
  { name: 'non-breaking space as whitespace', input: '\u00a0{}', code: 'JSON_SYNTAX' },
  { name: 'unclosed object', input: '{"a":1', code: 'JSON_SYNTAX' },
  { name: 'unclosed array', input: '[1', code: 'JSON_SYNTAX' },
];

for (const row of REFUSALS) {
  test(`refuses ${row.name} with ${row.code}`, () => {
    const error = refusal(row.input);
    assert.equal(error.code, row.code, error.message);
    assert.equal(error.exitCode, 2);
    if (row.pointer !== undefined) assert.equal(error.details?.pointer, row.pointer, error.message);
  });
}

test('numbers: 0, u64 max, 2^53 - 1 as number, 2^53 + 1 exact as bigint', () => {
  assert.equal(parseStrictJson(bytesOf('0'), { maxBytes: 10 }), 0);
  assert.equal(parseStrictJson(bytesOf('18446744073709551615'), { maxBytes: 20 }), 18446744073709551615n);
  assert.equal(parseStrictJson(bytesOf('9007199254740991'), { maxBytes: 20 }), Number.MAX_SAFE_INTEGER);
  const above = parseStrictJson(bytesOf('9007199254740993'), { maxBytes: 20 });
  assert.equal(typeof above, 'bigint');
  assert.equal(above, 9007199254740993n);
  assert.equal(parseStrictJson(bytesOf('9007199254740992'), { maxBytes: 20 }), 9007199254740992n);
  assert.equal(parseStrictJson(bytesOf('1234567890123456'), { maxBytes: 20 }), 1234567890123456);
});

test('strings: escapes, surrogate pairs, raw non-ASCII, U+2028 and DEL decode to the same code points', () => {
  const value = parseStrictJson(
    bytesOf('["\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001F","\\ud83d\\ude00","😀","naïve\u2028\u2029\u007f","\\u00E9"]'),
    { maxBytes: LIMIT },
  );
  assert.deepEqual(value, ['"\\/\b\f\n\r\t\u0000\u001f', '😀', '😀', 'naïve\u2028\u2029\u007f', 'é']);
});

test('object member order is kept and __proto__ is an own data field, never the prototype', () => {
  const value = parseStrictJson(bytesOf('{"z":1,"a":{"__proto__":{"polluted":true}},"m":[true,false,null]}'), {
    maxBytes: LIMIT,
  });
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value));
  assert.deepEqual(Object.keys(value), ['z', 'a', 'm']);
  const inner = value.a as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(inner), Object.prototype);
  assert.ok(Object.hasOwn(inner, '__proto__'));
  assert.deepEqual(Object.keys(inner), ['__proto__']);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(value.m, [true, false, null]);
});

test('whitespace around tokens is accepted (space, tab, LF, CR)', () => {
  assert.deepEqual(parseStrictJson(bytesOf(' \t\r\n{ "a" :\t[ 1 , 2 ]\r\n}\n'), { maxBytes: LIMIT }), { a: [1, 2] });
});

test('the byte limit: exactly maxBytes is parsed, one byte more is INPUT_TOO_LARGE', () => {
  const doc = '{"a":"xxxx"}';
  assert.deepEqual(parseStrictJson(bytesOf(doc), { maxBytes: doc.length }), { a: 'xxxx' });
  const error = refusal(doc, { maxBytes: doc.length - 1 });
  assert.equal(error.code, 'INPUT_TOO_LARGE');
  assert.deepEqual(error.details, { size: doc.length, limit: doc.length - 1 });
});

test('size is checked before anything else: a huge non-JSON, non-UTF-8 buffer is INPUT_TOO_LARGE', () => {
  // 4 MiB of 0xFF with a BOM in front: every later stage would refuse it with another code.
  const huge = new Uint8Array(4 << 20).fill(0xff);
  huge.set([0xef, 0xbb, 0xbf], 0);
  try {
    parseStrictJson(huge, { maxBytes: 1 << 20 });
    assert.fail('accepted');
  } catch (error) {
    assert.ok(error instanceof AgentscmError);
    assert.equal(error.code, 'INPUT_TOO_LARGE');
  }
  // The same bytes within the limit reach the BOM check: the order is size, then BOM.
  assert.equal(refusal(Array.from(huge.subarray(0, 16)), { maxBytes: 16 }).code, 'JSON_BOM');
  // ...and without the BOM they reach the UTF-8 check before any syntax check.
  assert.equal(refusal([0xff, 0x7b], { maxBytes: 16 }).code, 'JSON_INVALID_UTF8');
});

test('depth: 64 nested levels by default are accepted, 65 are JSON_TOO_DEEP; maxDepth is honoured', () => {
  const nest = (n: number): string => '['.repeat(n) + ']'.repeat(n);
  assert.doesNotThrow(() => parseStrictJson(bytesOf(nest(64)), { maxBytes: LIMIT }));
  assert.equal(refusal(nest(65)).code, 'JSON_TOO_DEEP');
  const objects = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  assert.doesNotThrow(() => parseStrictJson(bytesOf(objects(3)), { maxBytes: LIMIT, maxDepth: 3 }));
  assert.equal(refusal(objects(4), { maxDepth: 3 }).code, 'JSON_TOO_DEEP');
  // A very deep input fails on depth, not with a stack overflow.
  assert.equal(refusal(nest(100_000)).code, 'JSON_TOO_DEEP');
});

test('messages name the JSON pointer of the offending value', () => {
  const error = refusal('{"a":{"b/c":[0,1.5]}}');
  assert.equal(error.code, 'JSON_NUMBER_INVALID');
  assert.equal(error.details?.pointer, '/a/b~1c/1');
  assert.match(error.message, /\/a\/b~1c\/1/);
  assert.ok(error.hint !== undefined && error.hint.length > 0);
});

test('a non-integer maxBytes or an out-of-range maxDepth is a programming error, not an input error', () => {
  const internal = (e: unknown): boolean => e instanceof AgentscmError && e.code === 'INTERNAL';
  assert.throws(() => parseStrictJson(bytesOf('1'), { maxBytes: Number.NaN }), internal);
  assert.throws(() => parseStrictJson(bytesOf('1'), { maxBytes: -1 }), internal);
  assert.throws(() => parseStrictJson(bytesOf('1'), { maxBytes: 10, maxDepth: 0 }), internal);
  assert.throws(() => parseStrictJson(bytesOf('1'), { maxBytes: 10, maxDepth: 1001 }), internal);
});

test('keys named like Object.prototype members are ordinary own fields', () => {
  const value = parseStrictJson(bytesOf('{"constructor":1,"toString":"x","hasOwnProperty":null}'), { maxBytes: LIMIT });
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value));
  assert.deepEqual(Object.entries(value), [
    ['constructor', 1],
    ['toString', 'x'],
    ['hasOwnProperty', null],
  ]);
});
