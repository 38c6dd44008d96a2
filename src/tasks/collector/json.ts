/** Strict parsing of JSON the journal retains (answers the journal wrote itself, bounded). */
import type { JsonValue } from '../../contracts/json/json-value.js';
import { parseStrictJson } from '../../contracts/json/strict-json.js';

/** The journal's own retained answers are at most 512 KiB. */
export function strictJsonParse(bytes: Uint8Array): JsonValue {
  return parseStrictJson(bytes, { maxBytes: 512 * 1024 });
}
