/**
 * The one canonical encoder (WIRE.md "Canonical encoding and digests"; spec: "Observation
 * signing bytes"): compact JSON in declared (insertion) field order, short escapes for
 * " \ \b \t \n \f \r, other U+0000-U+001F as lowercase \u00xx, every other character as raw
 * UTF-8, integers as plain base-10, null written. Not RFC 8785; keys are never sorted.
 */
import { AgentscmError } from './errors.js';
import type { JsonValue } from './json-value.js';
import { U64_MAX } from './json-value.js';

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
      throw new AgentscmError('JSON_NUMBER_INVALID', `only unsigned safe integers can be encoded from a number, got ${String(value)}`);
    }
    return String(value);
  }
  if (value < 0n || value > U64_MAX) {
    throw new AgentscmError('JSON_NUMBER_INVALID', 'integer outside the u64 range');
  }
  return value.toString(10);
}

function write(value: JsonValue | undefined, parts: string[], indent: string | undefined, depth: number): void {
  if (value === null) {
    parts.push('null');
    return;
  }
  switch (typeof value) {
    case 'boolean':
      parts.push(value ? 'true' : 'false');
      return;
    case 'string':
      parts.push(quoteJsonString(value));
      return;
    case 'bigint':
    case 'number':
      parts.push(integerText(value));
      return;
    case 'undefined':
      throw new AgentscmError('INTERNAL', 'canonical encoding met undefined; every declared field must be present (null, not omitted)');
    default:
      break;
  }
  const nl = indent === undefined ? '' : `\n${indent.repeat(depth + 1)}`;
  const close = indent === undefined ? '' : `\n${indent.repeat(depth)}`;
  const colon = indent === undefined ? ':' : ': ';
  if (Array.isArray(value)) {
    if (value.length === 0) {
      parts.push('[]');
      return;
    }
    parts.push('[');
    value.forEach((item, index) => {
      if (index > 0) parts.push(',');
      parts.push(nl);
      write(item, parts, indent, depth + 1);
    });
    parts.push(close, ']');
    return;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) {
    parts.push('{}');
    return;
  }
  parts.push('{');
  keys.forEach((key, index) => {
    if (index > 0) parts.push(',');
    parts.push(nl, quoteJsonString(key), colon);
    write(value[key], parts, indent, depth + 1);
  });
  parts.push(close, '}');
}

/**
 * A string literal for compact output. For a well-formed string JSON.stringify writes exactly the
 * escaping of quoteJsonString (ECMA-262 QuoteJSONString: the seven short escapes, every other
 * U+0000–U+001F as lowercase \u00xx, everything else unescaped) in native code, several times
 * faster than a scan in JavaScript; canonical-json.test.ts checks the two agree on every BMP
 * code unit. A lone surrogate (which JSON.stringify would escape) goes to quoteJsonString, which
 * refuses it.
 */
function quoteCompact(value: string): string {
  return value.isWellFormed() ? JSON.stringify(value) : quoteJsonString(value);
}

/** The compact form of `write` (no indentation), built by string concatenation. */
function compact(value: JsonValue | undefined): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return quoteCompact(value);
    case 'bigint':
    case 'number':
      return integerText(value);
    case 'undefined':
      throw new AgentscmError('INTERNAL', 'canonical encoding met undefined; every declared field must be present (null, not omitted)');
    default:
      break;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    let out = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ',';
      out += compact(value[index]);
    }
    return `${out}]`;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return '{}';
  let out = '{';
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    if (index > 0) out += ',';
    out += `${quoteCompact(key)}:${compact(value[key])}`;
  }
  return `${out}}`;
}

/** Canonical compact text (see module comment). */
export function encodeCanonicalText(value: JsonValue): string {
  return compact(value);
}

/** Canonical compact bytes: what is hashed and signed. */
export function encodeCanonical(value: JsonValue): Uint8Array {
  return Buffer.from(encodeCanonicalText(value), 'utf8');
}

/** Human-readable JSON with the same escaping and exact integers (CLI --json output). */
export function formatJson(value: JsonValue, indent = '  '): string {
  const parts: string[] = [];
  write(value, parts, indent, 0);
  return parts.join('');
}
