/**
 * The validators the build compiles (bin/precompile-schemas.ts → dist/schemas/) answer exactly as
 * ajv compiling the same schema at run time does (what the sources do): the same verdict, the same
 * errors, the same u64 normalisation, for every registered decoder over its fuzz seeds and simple
 * mutations of them. Needs dist/ (`npm run build`), like test/built-cli.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';

import type { JsonValue } from '../src/contracts/json/json-value.js';
import { validateMaxUtf8Bytes, validateU64 } from '../src/contracts/json/schema-keywords.js';
import { allDecoders } from '../src/contracts/json/schema-registry.js';
import { createStandaloneAjv } from '../src/contracts/json/schema.js';
import { REPO_ROOT } from './helpers/cli.js';
import { wireTypes } from './hostile/fuzz/wire-types.js';

const SCHEMAS = join(REPO_ROOT, 'dist', 'schemas');

interface Verdict {
  readonly valid: boolean;
  readonly errors: unknown;
  readonly value: unknown;
}

type Validate = ((value: unknown) => boolean) & { errors?: unknown };

function verdict(validate: Validate, input: JsonValue): Verdict {
  const value = structuredClone(input);
  const valid = validate(value);
  // Errors as the decoder reads them (schema and parentSchema are references into the schema).
  const errors = JSON.parse(
    JSON.stringify(validate.errors ?? null, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
  );
  return { valid, errors, value: JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) };
}

/** The seed, one field removed, one unknown field added, and the first field of a wrong type. */
function variants(seed: JsonValue): JsonValue[] {
  const out: JsonValue[] = [seed, null, 'x', 18446744073709551616n];
  if (seed !== null && typeof seed === 'object' && !Array.isArray(seed)) {
    const keys = Object.keys(seed);
    const first = keys[0];
    if (first !== undefined) {
      const { [first]: _dropped, ...rest } = seed;
      out.push(rest, { ...seed, [first]: [] }, { ...seed, [first]: 'x'.repeat(5000) });
    }
    out.push({ ...seed, zz_unknown_field: 1 });
  }
  return out;
}

test('every registered decoder has a compiled validator, and it answers as ajv at run time does', () => {
  assert.ok(existsSync(join(SCHEMAS, 'index.json')), 'dist/schemas/ is missing or stale: run `npm run build` first');
  const files = JSON.parse(readFileSync(join(SCHEMAS, 'index.json'), 'utf8')) as Record<string, string>;
  assert.deepEqual(
    Object.keys(files).sort(),
    allDecoders()
      .map((d) => d.id)
      .sort(),
  );
  const load = createRequire(join(SCHEMAS, 'index.cjs'));
  const ajv = createStandaloneAjv();
  const seeds = new Map(wireTypes().map((w) => [w.id, w.seeds]));
  let compared = 0;
  for (const decoder of allDecoders()) {
    const file = files[decoder.id];
    assert.ok(file !== undefined, decoder.id);
    const built = (load(`./${file}`) as (u64: unknown, utf8: unknown) => Validate)(validateU64, validateMaxUtf8Bytes);
    const runtime = ajv.compile(decoder.schema) as Validate;
    for (const seed of seeds.get(decoder.id) ?? [{}]) {
      for (const input of variants(seed)) {
        assert.deepEqual(
          verdict(built, input),
          verdict(runtime, input),
          `${decoder.id}: ${JSON.stringify(input, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)).slice(0, 200)}`,
        );
        compared++;
      }
    }
  }
  // Every decoder over at least its own seed set: the comparison cannot pass by comparing nothing.
  assert.ok(compared >= allDecoders().length * 5, `only ${compared} comparisons`);
});
