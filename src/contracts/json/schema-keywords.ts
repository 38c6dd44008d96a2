/**
 * The code of the custom keywords `u64` and `maxUtf8Bytes` of src/contracts/json/schema.ts, apart
 * from ajv itself: the validators ajv compiles at run time call these functions, and so do the
 * ones compiled when the CLI is built (bin/precompile-schemas.ts), which import them from here.
 */
import type { SchemaValidateFunction } from 'ajv';

import { U64_MAX } from './json-value.js';

function isU64Like(value: unknown): value is number | bigint {
  return (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint';
}

interface U64Bounds {
  readonly minimum?: string;
  readonly maximum?: string;
}

/**
 * `u64: true` or `u64: {minimum?: "decimal", maximum?: "decimal"}` — bounds are decimal
 * strings so that a schema can state limits above 2^53 without losing them.
 */
export const validateU64: SchemaValidateFunction = function (schema: boolean | U64Bounds, data: unknown, _parent, cxt) {
  if (schema === false) return true;
  if (!isU64Like(data)) {
    validateU64.errors = [{ keyword: 'u64', message: 'must be an unsigned integer (u64)', params: { reason: 'type' } }];
    return false;
  }
  if (typeof data === 'number' && !Number.isSafeInteger(data)) {
    // Only the strict parser's output reaches here from the wire; an unsafe number means a
    // caller built the value with floating point and its exact value is already lost.
    validateU64.errors = [
      {
        keyword: 'u64',
        message: 'must be an exact integer; unsafe number values lose precision',
        params: { reason: 'type' },
      },
    ];
    return false;
  }
  const big = BigInt(data);
  const min = typeof schema === 'object' && schema.minimum !== undefined ? BigInt(schema.minimum) : 0n;
  const max = typeof schema === 'object' && schema.maximum !== undefined ? BigInt(schema.maximum) : U64_MAX;
  if (big < min || big > max) {
    validateU64.errors = [
      {
        keyword: 'u64',
        message: `must be between ${min} and ${max}`,
        params: { reason: 'range', minimum: min.toString(), maximum: max.toString() },
      },
    ];
    return false;
  }
  if (cxt !== undefined && typeof data === 'number') {
    (cxt.parentData as Record<string | number, unknown>)[cxt.parentDataProperty] = big;
  }
  return true;
};

export const validateMaxUtf8Bytes: SchemaValidateFunction = function (schema: number, data: string) {
  const size = Buffer.byteLength(data, 'utf8');
  if (size <= schema) return true;
  validateMaxUtf8Bytes.errors = [
    {
      keyword: 'maxUtf8Bytes',
      message: `must be at most ${schema} UTF-8 bytes (is ${size})`,
      params: { limit: schema },
    },
  ];
  return false;
};
