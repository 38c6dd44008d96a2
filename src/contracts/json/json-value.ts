/**
 * The JSON value model shared by the strict decoder and the canonical encoder.
 * Integers are `bigint` as decoded (docs/wire.md: u64 keeps its full value); the encoder also
 * accepts safe-integer `number`s. Object member order is insertion order and is preserved.
 */
export type JsonValue = null | boolean | string | bigint | number | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Largest u64: 18446744073709551615. */
export const U64_MAX = 18446744073709551615n;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
