/**
 * The one canonical encoder (docs/wire.md "Canonical encoding and digests"; the observation signing
 * bytes of docs/keys-and-enrollment.md "Observation signatures"): compact JSON in declared
 * (insertion) field order, short escapes for " \ \b \t \n \f \r, other U+0000-U+001F as lowercase
 * \u00xx, every other character as raw UTF-8, integers as plain base-10, null written. Not RFC
 * 8785; keys are never sorted.
 */
import { AgentscmError } from '../errors.js';
import { U64_MAX, type JsonObject, type JsonValue } from './json-value.js';

const SHORT_ESCAPES: Record<number, string> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x08: '\\b',
  0x09: '\\t',
  0x0a: '\\n',
  0x0c: '\\f',
  0x0d: '\\r',
};

// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** JSON string literal with the spec's escaping; lone surrogates are refused (not UTF-8 encodable). */
export function quoteJsonString(value: string): string {
  if (!value.isWellFormed()) {
    throw new AgentscmError('JSON_LONE_SURROGATE', 'a string holds an unpaired surrogate and has no UTF-8 encoding');
  }
  if (!NEEDS_ESCAPE.test(value)) return `"${value}"`;
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const short = SHORT_ESCAPES[code];
    if (short !== undefined) out += short;
    else if (code < 0x20) out += `\\u00${code.toString(16).padStart(2, '0')}`;
    else out += value[i];
  }
  return `${out}"`;
}

function integerText(value: bigint | number): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new AgentscmError(
        'JSON_NUMBER_INVALID',
        `only unsigned safe integers can be encoded from a number, got ${String(value)}`,
      );
    }
    return String(value);
  }
  if (value < 0n || value > U64_MAX) {
    throw new AgentscmError('JSON_NUMBER_INVALID', 'integer outside the u64 range');
  }
  return value.toString(10);
}

/**
 * A string literal. For a well-formed string JSON.stringify writes exactly the escaping of
 * quoteJsonString (ECMA-262 QuoteJSONString: the seven short escapes, every other U+0000–U+001F
 * as lowercase \u00xx, everything else unescaped) in native code, several times faster than a
 * scan in JavaScript; canonical-json.test.ts checks the two agree on every BMP code unit. A lone
 * surrogate (which JSON.stringify would escape) goes to quoteJsonString, which refuses it.
 */
function quote(value: string): string {
  return value.isWellFormed() ? JSON.stringify(value) : quoteJsonString(value);
}

/** The text of a scalar (null, boolean, string, integer); undefined for an array or an object. */
function scalarText(value: JsonValue | undefined): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return quote(value);
    case 'bigint':
    case 'number':
      return integerText(value);
    case 'undefined':
      throw new AgentscmError(
        'INTERNAL',
        'canonical encoding met undefined; every declared field must be present (null, not omitted)',
      );
    default:
      return undefined;
  }
}

/** Canonical compact text, built by string concatenation. */
function compact(value: JsonValue | undefined): string {
  const scalar = scalarText(value);
  if (scalar !== undefined) return scalar;
  const container = value as JsonValue[] | JsonObject;
  if (Array.isArray(container)) {
    if (container.length === 0) return '[]';
    let out = '[';
    for (let index = 0; index < container.length; index++) {
      if (index > 0) out += ',';
      out += compact(container[index]);
    }
    return `${out}]`;
  }
  const keys = Object.keys(container);
  if (keys.length === 0) return '{}';
  let out = '{';
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    if (index > 0) out += ',';
    out += `${quote(key)}:${compact(container[key])}`;
  }
  return `${out}}`;
}

/** The indented form of `compact` (formatJson): one member per line, `": "` after each key. */
function indented(value: JsonValue | undefined, indent: string, depth: number): string {
  const scalar = scalarText(value);
  if (scalar !== undefined) return scalar;
  const container = value as JsonValue[] | JsonObject;
  const inner = `\n${indent.repeat(depth + 1)}`;
  const close = `\n${indent.repeat(depth)}`;
  if (Array.isArray(container)) {
    if (container.length === 0) return '[]';
    return `[${container.map((item) => `${inner}${indented(item, indent, depth + 1)}`).join(',')}${close}]`;
  }
  const keys = Object.keys(container);
  if (keys.length === 0) return '{}';
  const members = keys.map((key) => `${inner}${quote(key)}: ${indented(container[key], indent, depth + 1)}`);
  return `{${members.join(',')}${close}}`;
}

/** Canonical compact text (see module comment). */
export function encodeCanonicalText(value: JsonValue): string {
  return compact(value);
}

/** Canonical compact bytes: what is hashed and signed (a Buffer, so callers can store it as is). */
export function encodeCanonical(value: JsonValue): Buffer {
  return Buffer.from(encodeCanonicalText(value), 'utf8');
}

/** Human-readable JSON with the same escaping and exact integers (CLI --json output). */
export function formatJson(value: JsonValue, indent = '  '): string {
  return indented(value, indent, 0);
}
