/**
 * Over 400 lines: one hand-written parser; its checks run in one pass and are not separable.
 *
 * The strict JSON decoder of docs/wire.md "Strict JSON decoding". Every untrusted input goes through
 * here before ajv sees it; the order (docs/strict-json.md "Order of checks") is: byte-length
 * check, BOM, fatal UTF-8 decode, then a hand-written parser that refuses duplicate keys, lone
 * surrogate escapes and any number that is not an exact u64. `JSON.parse` is not used: it keeps
 * the last duplicate key silently and turns large integers into floating point.
 */
import { AgentscmError } from '../errors.js';
import { U64_MAX, type JsonObject, type JsonValue } from './json-value.js';

/** Default nesting limit (arrays + objects); the top-level container is depth 1. */
export const DEFAULT_MAX_DEPTH = 64;
/** The parser recurses once per level; this ceiling keeps it far from the stack limit. */
const MAX_DEPTH_CEILING = 1000;

export interface StrictJsonOptions {
  /** Largest accepted input in bytes; checked before anything else is looked at. */
  readonly maxBytes: number;
  /** Deepest accepted nesting of arrays and objects (default 64). */
  readonly maxDepth?: number;
}

// fatal: invalid UTF-8 (overlong forms, encoded surrogates, truncated sequences) throws instead
// of becoming U+FFFD. ignoreBOM: keep a BOM visible so it can never be silently skipped.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const U64_DIGITS = 20;

/** Escape one JSON-pointer reference token (RFC 6901), for error pointers (docs/wire.md "Strict JSON decoding"). */
export function escapePointerToken(token: string | number): string {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** JSON pointer (RFC 6901) of a path of keys and indices, as error messages show it; the whole document is "/". */
export function pointerOf(path: readonly (string | number)[]): string {
  return path.length === 0 ? '/' : path.map((token) => `/${escapePointerToken(token)}`).join('');
}

/**
 * A value as parseStrictJson would return it after encoding: integers up to
 * Number.MAX_SAFE_INTEGER as number, larger ones as bigint (a new value; the input is not
 * modified). For a value built in process whose canonical bytes are retained, so that it equals
 * what a later parse of those bytes returns without parsing them.
 */
export function asParsed(value: JsonValue): JsonValue {
  if (typeof value === 'bigint') return value <= MAX_SAFE ? Number(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(asParsed);
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const member = asParsed(value[key] as JsonValue);
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
    else out[key] = member;
  }
  return out;
}

/**
 * Decode untrusted bytes into a JsonValue (docs/wire.md "Strict JSON decoding"): integers up to
 * Number.MAX_SAFE_INTEGER become number, larger ones bigint; object member order is kept.
 */
export function parseStrictJson(bytes: Uint8Array, options: StrictJsonOptions): JsonValue {
  const { maxBytes } = options;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new AgentscmError(
      'INTERNAL',
      `parseStrictJson needs a non-negative integer maxBytes, got ${String(maxBytes)}`,
    );
  }
  if (bytes.byteLength > maxBytes) {
    throw new AgentscmError(
      'INPUT_TOO_LARGE',
      `the input is ${bytes.byteLength} bytes, more than the limit of ${maxBytes} bytes; it was not parsed`,
      {
        hint: `send at most ${maxBytes} bytes`,
        details: { size: bytes.byteLength, limit: maxBytes },
      },
    );
  }
  if (bytes.byteLength >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new AgentscmError('JSON_BOM', 'the input starts with a UTF-8 byte order mark (EF BB BF)', {
      hint: 'write UTF-8 without a byte order mark',
    });
  }
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch (cause) {
    throw new AgentscmError(
      'JSON_INVALID_UTF8',
      `the input is not valid UTF-8 (at or after byte ${firstInvalidUtf8Offset(bytes)})`,
      {
        hint: 'encode the input as UTF-8; overlong forms and encoded surrogates are invalid',
        cause,
      },
    );
  }
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 1 || maxDepth > MAX_DEPTH_CEILING) {
    throw new AgentscmError(
      'INTERNAL',
      `parseStrictJson needs a maxDepth from 1 to ${MAX_DEPTH_CEILING}, got ${String(maxDepth)}`,
    );
  }
  return new Parser(text, maxDepth).parseDocument();
}

/** Offset of the first byte that starts an invalid UTF-8 sequence (for the message only). */
function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return i;
}

const Ch = {
  Tab: 0x09,
  Lf: 0x0a,
  Cr: 0x0d,
  Space: 0x20,
  Quote: 0x22,
  Comma: 0x2c,
  Minus: 0x2d,
  Dot: 0x2e,
  Zero: 0x30,
  Nine: 0x39,
  Colon: 0x3a,
  UpperE: 0x45,
  LBracket: 0x5b,
  Backslash: 0x5c,
  RBracket: 0x5d,
  LowerE: 0x65,
  LBrace: 0x7b,
  RBrace: 0x7d,
} as const;

const SIMPLE_ESCAPES: Record<number, string> = {
  0x22: '"',
  0x5c: '\\',
  0x2f: '/',
  0x62: '\b',
  0x66: '\f',
  0x6e: '\n',
  0x72: '\r',
  0x74: '\t',
};

class Parser {
  private pos = 0;
  private depth = 0;
  /** Keys and indices from the root to the value being parsed, for error pointers. */
  private readonly path: (string | number)[] = [];

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  parseDocument(): JsonValue {
    this.skipWhitespace();
    const value = this.parseValue();
    this.skipWhitespace();
    if (this.pos < this.text.length) this.syntax('unexpected content after the JSON value');
    return value;
  }

  private fail(
    code: 'JSON_SYNTAX' | 'JSON_DUPLICATE_KEY' | 'JSON_LONE_SURROGATE' | 'JSON_NUMBER_INVALID' | 'JSON_TOO_DEEP',
    message: string,
    hint?: string,
  ): never {
    throw new AgentscmError(code, `${message} at ${pointerOf(this.path)} (character ${this.pos})`, {
      hint,
      details: { pointer: pointerOf(this.path), offset: this.pos },
    });
  }

  private syntax(message: string): never {
    this.fail('JSON_SYNTAX', message, 'send one well-formed JSON document');
  }

  private skipWhitespace(): void {
    const { text } = this;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === Ch.Space || c === Ch.Lf || c === Ch.Cr || c === Ch.Tab) this.pos++;
      else break;
    }
  }

  private parseValue(): JsonValue {
    if (this.pos >= this.text.length) this.syntax('unexpected end of input');
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case Ch.LBrace:
        return this.parseObject();
      case Ch.LBracket:
        return this.parseArray();
      case Ch.Quote:
        return this.parseString();
      case 0x74: // t
        return this.parseLiteral('true', true);
      case 0x66: // f
        return this.parseLiteral('false', false);
      case 0x6e: // n
        return this.parseLiteral('null', null);
      default:
        if (c === Ch.Minus || (c >= Ch.Zero && c <= Ch.Nine)) return this.parseNumber();
        return this.syntax(`unexpected character ${JSON.stringify(this.text[this.pos])}`);
    }
  }

  private parseLiteral<T extends JsonValue>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.syntax(`invalid literal (expected ${word})`);
    this.pos += word.length;
    return value;
  }

  private enter(): void {
    this.depth++;
    if (this.depth > this.maxDepth) {
      this.fail(
        'JSON_TOO_DEEP',
        `the input nests deeper than ${this.maxDepth} levels`,
        `nest arrays and objects at most ${this.maxDepth} levels deep`,
      );
    }
  }

  private parseObject(): JsonObject {
    this.enter();
    this.pos++; // {
    const result: JsonObject = {};
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === Ch.RBrace) {
      this.pos++;
      this.depth--;
      return result;
    }
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== Ch.Quote) this.syntax('expected a string key');
      const keyStart = this.pos;
      const key = this.parseString();
      if (Object.hasOwn(result, key)) {
        this.path.push(key);
        this.pos = keyStart;
        this.fail(
          'JSON_DUPLICATE_KEY',
          `the key ${JSON.stringify(key)} appears twice in one object`,
          'give every key of an object once',
        );
      }
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== Ch.Colon) this.syntax('expected ":" after an object key');
      this.pos++;
      this.skipWhitespace();
      this.path.push(key);
      const value = this.parseValue();
      this.path.pop();
      // Assignment to "__proto__" would set the prototype; that one key becomes an own data
      // member through defineProperty (plain assignment is much faster for every other key).
      if (key === '__proto__')
        Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
      else result[key] = value;
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      if (c === Ch.Comma) {
        this.pos++;
        this.skipWhitespace();
        continue;
      }
      if (c === Ch.RBrace) {
        this.pos++;
        this.depth--;
        return result;
      }
      this.syntax(
        this.pos >= this.text.length ? 'unexpected end of input inside an object' : 'expected "," or "}" in an object',
      );
    }
  }

  private parseArray(): JsonValue[] {
    this.enter();
    this.pos++; // [
    const result: JsonValue[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === Ch.RBracket) {
      this.pos++;
      this.depth--;
      return result;
    }
    for (;;) {
      this.path.push(result.length);
      result.push(this.parseValue());
      this.path.pop();
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      if (c === Ch.Comma) {
        this.pos++;
        this.skipWhitespace();
        continue;
      }
      if (c === Ch.RBracket) {
        this.pos++;
        this.depth--;
        return result;
      }
      this.syntax(
        this.pos >= this.text.length ? 'unexpected end of input inside an array' : 'expected "," or "]" in an array',
      );
    }
  }

  private parseString(): string {
    const { text } = this;
    this.pos++; // opening quote
    let out = '';
    let runStart = this.pos;
    for (;;) {
      if (this.pos >= text.length) this.syntax('unterminated string');
      const c = text.charCodeAt(this.pos);
      if (c === Ch.Quote) {
        out += text.slice(runStart, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20)
        this.syntax(`raw control character U+${c.toString(16).padStart(4, '0').toUpperCase()} in a string (escape it)`);
      if (c !== Ch.Backslash) {
        // The text came from a fatal UTF-8 decode, so raw surrogates are always paired.
        this.pos++;
        continue;
      }
      out += text.slice(runStart, this.pos);
      const e = text.charCodeAt(this.pos + 1);
      const simple = SIMPLE_ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
        this.pos += 2;
      } else if (e === 0x75 /* u */) {
        const unit = this.readHex4(this.pos + 2);
        if (unit >= 0xdc00 && unit <= 0xdfff) {
          this.fail(
            'JSON_LONE_SURROGATE',
            `the escape \\u${unit.toString(16)} is a low surrogate without a preceding high surrogate`,
            'escape a character outside the BMP as a surrogate pair, or write it as raw UTF-8',
          );
        }
        if (unit >= 0xd800 && unit <= 0xdbff) {
          const low =
            text.charCodeAt(this.pos + 6) === Ch.Backslash && text.charCodeAt(this.pos + 7) === 0x75
              ? this.readHex4(this.pos + 8)
              : -1;
          if (low < 0xdc00 || low > 0xdfff) {
            this.fail(
              'JSON_LONE_SURROGATE',
              `the escape \\u${unit.toString(16)} is a high surrogate not followed by a low surrogate escape`,
              'escape a character outside the BMP as a surrogate pair, or write it as raw UTF-8',
            );
          }
          out += String.fromCharCode(unit, low);
          this.pos += 12;
        } else {
          out += String.fromCharCode(unit);
          this.pos += 6;
        }
      } else {
        this.pos++;
        this.syntax('invalid escape sequence in a string');
      }
      runStart = this.pos;
    }
  }

  private readHex4(at: number): number {
    let value = 0;
    for (let i = at; i < at + 4; i++) {
      const c = this.text.charCodeAt(i);
      let d: number;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
      else {
        this.pos = Math.min(i, this.text.length);
        return this.syntax('\\u escape needs four hex digits');
      }
      value = value * 16 + d;
    }
    return value;
  }

  private parseNumber(): number | bigint {
    const { text } = this;
    const start = this.pos;
    const numberHint = 'send integers as plain unsigned base-10 digits up to 18446744073709551615';
    if (text.charCodeAt(this.pos) === Ch.Minus) {
      this.fail('JSON_NUMBER_INVALID', 'a number has a sign; only unsigned integers are accepted', numberHint);
    }
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c < Ch.Zero || c > Ch.Nine) break;
      this.pos++;
    }
    const next = text.charCodeAt(this.pos);
    if (next === Ch.Dot || next === Ch.LowerE || next === Ch.UpperE) {
      this.pos = start;
      this.fail('JSON_NUMBER_INVALID', 'a number has a fraction or exponent; only integers are accepted', numberHint);
    }
    const digits = text.slice(start, this.pos);
    if (digits.length > 1 && digits.charCodeAt(0) === Ch.Zero) {
      this.pos = start;
      this.fail('JSON_NUMBER_INVALID', `the number ${digits} has a leading zero`, numberHint);
    }
    // Length first: a 10,000-digit number is refused without building a bigint from it.
    if (digits.length > U64_DIGITS || (digits.length === U64_DIGITS && BigInt(digits) > U64_MAX)) {
      this.pos = start;
      const shown = digits.length > 40 ? `${digits.slice(0, 24)}… (${digits.length} digits)` : digits;
      this.fail('JSON_NUMBER_INVALID', `the number ${shown} is larger than 18446744073709551615`, numberHint);
    }
    if (digits.length < 16) return Number(digits);
    const big = BigInt(digits);
    return big <= MAX_SAFE ? Number(big) : big;
  }
}
