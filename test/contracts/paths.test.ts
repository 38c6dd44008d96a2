import assert from 'node:assert/strict';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import { defineDecoder } from '../../src/contracts/json/schema.js';
import {
  isRelativePathWithin,
  joinRelativePath,
  MAX_RELATIVE_PATH_BYTES,
  RELATIVE_PATH_SCHEMA,
  validateRelativePath,
} from '../../src/contracts/paths.js';

const REFUSED: readonly { name: string; path: string; reason: RegExp }[] = [
  { name: 'empty', path: '', reason: /empty/ },
  { name: 'leading slash', path: '/etc/passwd', reason: /starts with \// },
  { name: 'root alone', path: '/', reason: /starts with \// },
  { name: 'trailing slash', path: 'src/', reason: /ends with \// },
  { name: 'empty component', path: 'src//a.ts', reason: /empty component/ },
  { name: 'dot component', path: './a', reason: /"\." component/ },
  { name: 'inner dot component', path: 'a/./b', reason: /"\." component/ },
  { name: 'dot alone', path: '.', reason: /"\." component/ },
  { name: 'dot-dot component', path: '../a', reason: /"\.\." component/ },
  { name: 'inner dot-dot component', path: 'a/../../b', reason: /"\.\." component/ },
  { name: 'dot-dot alone', path: '..', reason: /"\.\." component/ },
  { name: 'backslash separator', path: 'a\\b', reason: /backslash/ },
  { name: 'Windows dot-dot', path: '..\\a', reason: /backslash/ },
  { name: 'drive letter', path: 'C:/a', reason: /":"/ },
  { name: 'drive-relative', path: 'c:a', reason: /":"/ },
  { name: 'alternate data stream', path: 'a.txt:stream', reason: /":"/ },
  { name: 'NUL', path: 'a\u0000b', reason: /control character 0x00/ },
  { name: 'newline', path: 'a\nb', reason: /control character 0x0a/ },
  { name: 'tab', path: 'a\tb', reason: /control character 0x09/ },
  { name: 'unit separator 0x1f', path: 'a\u001fb', reason: /control character 0x1f/ },
  { name: 'DEL', path: 'a\u007fb', reason: /control character 0x7f/ },
  { name: 'non-ASCII letter', path: 'naïve.txt', reason: /non-ASCII/ },
  { name: 'C1 control', path: 'a\u0085b', reason: /non-ASCII/ },
  { name: 'fullwidth solidus', path: 'a\uff0fb', reason: /non-ASCII/ },
  { name: 'emoji', path: '😀', reason: /non-ASCII/ },
  { name: '513 bytes', path: 'a'.repeat(513), reason: /longer than 512/ },
  { name: '513 bytes in components', path: `${'a'.repeat(255)}/${'b'.repeat(257)}`, reason: /longer than 512/ },
];

for (const row of REFUSED) {
  test(`validateRelativePath refuses ${row.name}`, () => {
    assert.throws(
      () => validateRelativePath(row.path, 'reference path'),
      (e: unknown) =>
        e instanceof AgentscmError &&
        e.code === 'PATH_INVALID' &&
        e.exitCode === 2 &&
        row.reason.test(e.message) &&
        e.message.startsWith('reference path '),
    );
  });
}

test('canonical paths are returned unchanged, including the 512-byte bound', () => {
  for (const path of [
    'a',
    'README.md',
    'src/contracts/paths.ts',
    '.gitignore',
    'a/.hidden/b',
    '...',
    'a..b',
    'a b/c~d',
    '-x/_y.z',
    'a'.repeat(MAX_RELATIVE_PATH_BYTES),
    `${'a'.repeat(255)}/${'b'.repeat(256)}`,
  ]) {
    assert.equal(validateRelativePath(path), path);
  }
});

test('isRelativePathWithin compares whole components', () => {
  assert.ok(isRelativePathWithin('src', 'src/a.ts'));
  assert.ok(isRelativePathWithin('src', 'src'));
  assert.ok(isRelativePathWithin('', 'anything/at/all'));
  assert.ok(!isRelativePathWithin('src', 'src2/a.ts'));
  assert.ok(!isRelativePathWithin('src/a', 'src'));
});

test('joinRelativePath validates the joined result', () => {
  assert.equal(joinRelativePath('a', 'b/c'), 'a/b/c');
  assert.equal(joinRelativePath('', 'b'), 'b');
  assert.throws(
    () => joinRelativePath('a', '..', 'b'),
    (e: unknown) => e instanceof AgentscmError && e.code === 'PATH_INVALID',
  );
});

test('RELATIVE_PATH_SCHEMA refuses backslash, colon, control and non-ASCII characters inside a decoder', () => {
  const decoder = defineDecoder<{ path: string }>('test.path.v1', {
    type: 'object',
    properties: { path: RELATIVE_PATH_SCHEMA },
    required: ['path'],
    additionalProperties: false,
  });
  assert.equal(decoder.validate({ path: 'a/b.txt' }).path, 'a/b.txt');
  for (const bad of ['a\\b', 'C:x', 'a\u007f', 'é', 'a\u0001', '', 'a'.repeat(513)]) {
    assert.throws(
      () => decoder.validate({ path: bad }),
      (e: unknown) => e instanceof AgentscmError && (e.code === 'SCHEMA_TYPE' || e.code === 'SCHEMA_BOUND'),
      JSON.stringify(bad),
    );
  }
});
