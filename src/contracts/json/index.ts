/**
 * The public exports of the contracts/json family (docs/architecture.md "Layers"). Modules of
 * src/ import the file they need directly, so a command loads only what it uses; this list is the
 * family's surface at a glance and what a consumer outside src/ imports.
 */
export { encodeCanonical, encodeCanonicalText, formatJson, quoteJsonString } from './canonical-json.js';
export { counted } from './counted.js';
export { U64_MAX, isJsonObject } from './json-value.js';
export type { JsonObject, JsonValue } from './json-value.js';
export { allDecoders } from './schema-registry.js';
export { ID_KINDS, defineDecoder, definedDecoders, metaSchemaProblems } from './schema.js';
export type { Decoder, DecoderOptions, IdKind } from './schema.js';
export { DEFAULT_MAX_DEPTH, asParsed, escapePointerToken, parseStrictJson, pointerOf } from './strict-json.js';
export type { StrictJsonOptions } from './strict-json.js';
