/**
 * CommandRecipe decoding: every bound at the bound and one past, strictness (unknown fields,
 * duplicate keys, version), the working directory path rules, and the digest of exact bytes.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import test from 'node:test';

import {
  commandRecipeDigest,
  containerWorkdir,
  decodeCommandRecipe,
  RECIPE_LIMITS,
} from '../../src/contracts/collector/command-recipe.js';

type Recipe = Record<string, unknown> & { limits: Record<string, unknown> };

function base(): Recipe {
  return {
    version: 1,
    image: 'local/busybox:1',
    argv: ['/bin/true'],
    env: {},
    workdir: '.',
    timeout_ms: 1000,
    limits: { memory_bytes: 64 * 1024 * 1024, pids: 64, cpu_millis: 1000, output_bytes: 1024, scratch_bytes: 65536 },
    toolchain: 'busybox-1',
    environment: 'posix-sh',
  };
}

function bytes(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function code(value: unknown): string {
  try {
    decodeCommandRecipe(Buffer.isBuffer(value) ? value : bytes(value));
    return 'OK';
  } catch (error) {
    return (error as { code?: string }).code ?? 'NO_CODE';
  }
}

function withField(path: string, value: unknown): Recipe {
  const recipe = base();
  const [head, tail] = path.split('.');
  if (tail === undefined) recipe[head ?? ''] = value;
  else (recipe[head ?? ''] as Record<string, unknown>)[tail] = value;
  return recipe;
}

test('a complete recipe decodes to its fields', () => {
  const recipe = decodeCommandRecipe(bytes(base()));
  assert.deepEqual(recipe.argv, ['/bin/true']);
  assert.equal(recipe.limits.pids, 64);
  assert.equal(containerWorkdir(recipe), '/src');
  assert.equal(containerWorkdir(decodeCommandRecipe(bytes(withField('workdir', 'packages/app')))), '/src/packages/app');
});

const NUMERIC_BOUNDS: [string, number, number][] = [
  ['timeout_ms', RECIPE_LIMITS.minTimeoutMs, RECIPE_LIMITS.maxTimeoutMs],
  ['limits.memory_bytes', RECIPE_LIMITS.minMemoryBytes, RECIPE_LIMITS.maxMemoryBytes],
  ['limits.pids', RECIPE_LIMITS.minPids, RECIPE_LIMITS.maxPids],
  ['limits.cpu_millis', RECIPE_LIMITS.minCpuMillis, RECIPE_LIMITS.maxCpuMillis],
  ['limits.output_bytes', 0, RECIPE_LIMITS.maxOutputBytes],
  ['limits.scratch_bytes', RECIPE_LIMITS.minScratchBytes, RECIPE_LIMITS.maxScratchBytes],
];

for (const [field, min, max] of NUMERIC_BOUNDS) {
  test(`${field}: ${min}..${max} accepted, one past either end refused`, () => {
    assert.equal(code(withField(field, min)), 'OK');
    assert.equal(code(withField(field, max)), 'OK');
    assert.equal(code(withField(field, max + 1)), 'SCHEMA_BOUND');
    if (min > 0) assert.equal(code(withField(field, min - 1)), 'SCHEMA_BOUND');
  });
}

test('argv: 1..256 entries of at most 4096 bytes; empty refused', () => {
  assert.equal(
    code(
      withField(
        'argv',
        Array.from({ length: RECIPE_LIMITS.maxArgv }, () => 'x'),
      ),
    ),
    'OK',
  );
  assert.equal(
    code(
      withField(
        'argv',
        Array.from({ length: RECIPE_LIMITS.maxArgv + 1 }, () => 'x'),
      ),
    ),
    'SCHEMA_BOUND',
  );
  assert.equal(code(withField('argv', [])), 'SCHEMA_BOUND');
  assert.equal(code(withField('argv', ['a'.repeat(RECIPE_LIMITS.maxArgBytes)])), 'OK');
  assert.equal(code(withField('argv', ['a'.repeat(RECIPE_LIMITS.maxArgBytes + 1)])), 'SCHEMA_BOUND');
  assert.notEqual(code(withField('argv', ['a\u0000b'])), 'OK');
});

test('env: at most 128 variables with names [A-Za-z_][A-Za-z0-9_]* and values of at most 4096 bytes', () => {
  const many = (n: number): Record<string, string> =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${i}`, 'x']));
  assert.equal(code(withField('env', many(RECIPE_LIMITS.maxEnv))), 'OK');
  assert.equal(code(withField('env', many(RECIPE_LIMITS.maxEnv + 1))), 'SCHEMA_BOUND');
  assert.equal(code(withField('env', { V: 'v'.repeat(RECIPE_LIMITS.maxEnvValueBytes) })), 'OK');
  assert.equal(code(withField('env', { V: 'v'.repeat(RECIPE_LIMITS.maxEnvValueBytes + 1) })), 'SCHEMA_BOUND');
  assert.equal(code(withField('env', { 'BAD-NAME': 'x' })), 'SCHEMA_UNKNOWN_FIELD');
  assert.equal(code(withField('env', { '1ABC': 'x' })), 'SCHEMA_UNKNOWN_FIELD');
});

test('image references: valid forms accepted, length and shape bounded', () => {
  for (const image of [
    'busybox',
    'local/busybox:1',
    'registry.example:5000/team/app:v1.2',
    `app@sha256:${'a'.repeat(64)}`,
  ]) {
    assert.equal(code(withField('image', image)), 'OK', image);
  }
  for (const image of ['', 'UPPER/case', 'a b', '/leading', `${'a'.repeat(250)}:tag12`])
    assert.notEqual(code(withField('image', image)), 'OK', image);
});

test('toolchain and environment identities are bounded at 256 characters', () => {
  assert.equal(code(withField('toolchain', `t${'x'.repeat(RECIPE_LIMITS.maxIdentityBytes - 1)}`)), 'OK');
  assert.equal(code(withField('toolchain', `t${'x'.repeat(RECIPE_LIMITS.maxIdentityBytes)}`)), 'SCHEMA_BOUND');
  assert.notEqual(code(withField('environment', '')), 'OK');
});

test('the working directory is "." or a canonical relative path', () => {
  for (const workdir of ['.', 'a', 'a/b-c/d_e']) assert.equal(code(withField('workdir', workdir)), 'OK', workdir);
  for (const workdir of ['..', '../x', '/abs', 'a//b', 'a/./b', 'a/', 'c:/x', 'a\\b'])
    assert.equal(code(withField('workdir', workdir)), 'PATH_INVALID', workdir);
});

test('strict decoding: unknown fields, missing fields, duplicate keys, other versions, oversize input', () => {
  assert.equal(code({ ...base(), shell: true }), 'SCHEMA_UNKNOWN_FIELD');
  assert.equal(code(withField('limits', { ...base().limits, swap_bytes: 1 })), 'SCHEMA_UNKNOWN_FIELD');
  const missing = base();
  delete missing.timeout_ms;
  assert.equal(code(missing), 'SCHEMA_MISSING_FIELD');
  assert.equal(
    code(Buffer.from(bytes(base()).toString().replace('"version":1', '"version":1,"version":1'))),
    'JSON_DUPLICATE_KEY',
  );
  assert.equal(code(withField('version', 2)), 'SCHEMA_VERSION_UNSUPPORTED');
  const padded = (size: number): Buffer => {
    const text = JSON.stringify(base());
    return Buffer.from(text.slice(0, -1) + ' '.repeat(size - Buffer.byteLength(text)) + '}');
  };
  assert.equal(code(padded(RECIPE_LIMITS.maxRecipeBytes)), 'OK');
  assert.equal(code(padded(RECIPE_LIMITS.maxRecipeBytes + 1)), 'INPUT_TOO_LARGE');
});

test('the recipe digest is the SHA-256 of the exact bytes (whitespace matters)', () => {
  const a = bytes(base());
  const b = Buffer.from(`${a.toString()}\n`);
  assert.equal(commandRecipeDigest(a), createHash('sha256').update(a).digest('hex'));
  assert.notEqual(commandRecipeDigest(a), commandRecipeDigest(b));
});
