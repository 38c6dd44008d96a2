/**
 * The malformed-input generators: each mutation kind turns a valid seed document into bytes and
 * states what the decoder must do with them (the expectation is derived from the mutation and
 * the published schema, following docs/strict-json.md, never from the decoder's answer).
 */
import fc from 'fast-check';

import type { ErrorCode } from '../../../src/contracts/errors.js';
import type { JsonValue } from '../../../src/contracts/json/json-value.js';
import {
  copyTree,
  nodeAt,
  Raw,
  removeAt,
  replaceAt,
  setMember,
  writeJson,
  type Path,
  type Tree,
  type TreeObject,
} from './json-text.js';
import { allowedTypes, jsonTypeOf, keyIsDeclared, locations, type Location, type SchemaNode } from './schema-walk.js';
import type { WireType } from './wire-types.js';

const U64_MAX = 18446744073709551615n;
const MAX_DEPTH = 64;

/** What the decoder must do with one input. */
export type Expectation =
  /** Refuse with exactly this code. */
  | { readonly outcome: 'refuse'; readonly code: ErrorCode }
  /** Refuse with one of these codes (raw input: only the stage is known, not which problem comes first). */
  | { readonly outcome: 'refuse-one-of'; readonly codes: readonly ErrorCode[] }
  /** Accept, and decode to what the seed decodes to. */
  | { readonly outcome: 'accept-same' }
  /** Pass the schema stage; the type's own rules after it may still refuse with their codes. */
  | { readonly outcome: 'pass-schema' };

export interface FuzzCase {
  readonly kind: string;
  /** What was done, for the failure report. */
  readonly what: string;
  readonly bytes: Uint8Array;
  readonly expect: Expectation;
  /** The seed the mutation started from (for accept-same). */
  readonly seed?: JsonValue;
}

export const MUTATION_KINDS = [
  'unknown-field',
  'missing-field',
  'wrong-type',
  'bound-at',
  'bound-past',
  'duplicate-key',
  'lone-surrogate',
  'invalid-utf8',
  'bom',
  'bad-number',
  'deep-nesting',
  'oversize',
  'truncated-or-trailing',
  'whitespace',
  'reordered',
  'escaped',
] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

/** The integer choices one mutation needs; fast-check shrinks them. */
export interface Plan {
  readonly kind: MutationKind;
  readonly seed: number;
  readonly pick: number;
  readonly variant: number;
}

export const planArbitrary: fc.Arbitrary<Plan> = fc.record({
  kind: fc.constantFrom(...MUTATION_KINDS),
  seed: fc.nat(),
  pick: fc.nat(),
  variant: fc.nat(),
});

const refuse = (code: ErrorCode): Expectation => ({ outcome: 'refuse', code });
const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const show = (path: Path): string => (path.length === 0 ? '/' : path.map((p) => `/${String(p)}`).join(''));

function choose<T>(items: readonly T[], n: number): T | undefined {
  return items.length === 0 ? undefined : items[n % items.length];
}

interface Context {
  readonly type: WireType;
  readonly seed: JsonValue;
  readonly locs: readonly Location[];
  readonly plan: Plan;
}

// --- schema-level mutations -------------------------------------------------------------------

const UNKNOWN_KEYS = [
  'unexpected',
  'x-extra',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'Version',
  'naïve',
  '😀',
  '',
  ' version',
  'version ',
];
const ANY_VALUES: readonly Tree[] = [1, 'x', null, true, [], {}, 18446744073709551615n];

function unknownField(c: Context): FuzzCase | undefined {
  // Closed objects only: a value the schema leaves open (checked later by its own decoder) takes any member.
  const objects = c.locs.filter((l) => jsonTypeOf(l.value) === 'object' && l.resolved.additionalProperties === false);
  const loc = choose(objects, c.plan.pick);
  if (loc === undefined) return undefined;
  const keys = UNKNOWN_KEYS.filter((k) => !keyIsDeclared(loc.resolved, k) && !Object.hasOwn(loc.value as object, k));
  const key = choose(keys, c.plan.variant);
  if (key === undefined) return undefined;
  const object = copyTree(loc.value) as TreeObject;
  setMember(object, key, ANY_VALUES[c.plan.variant % ANY_VALUES.length] as Tree);
  const max = loc.resolved.maxProperties;
  const code: ErrorCode =
    typeof max === 'number' && Object.keys(object).length > max ? 'SCHEMA_BOUND' : 'SCHEMA_UNKNOWN_FIELD';
  return {
    kind: 'unknown-field',
    what: `add ${JSON.stringify(key)} at ${show(loc.path)}`,
    bytes: utf8(writeJson(replaceAt(c.seed, loc.path, object))),
    expect: refuse(code),
  };
}

function missingField(c: Context): FuzzCase | undefined {
  const members = c.locs.filter(
    (l) =>
      l.memberOf !== undefined &&
      Array.isArray(l.memberOf.required) &&
      (l.memberOf.required as string[]).includes(String(l.path[l.path.length - 1])),
  );
  const loc = choose(members, c.plan.pick);
  if (loc === undefined) return undefined;
  return {
    kind: 'missing-field',
    what: `remove required ${show(loc.path)}`,
    bytes: utf8(writeJson(removeAt(c.seed, loc.path))),
    expect: refuse('SCHEMA_MISSING_FIELD'),
  };
}

const SAMPLES: readonly Tree[] = ['x', 7, true, null, [], {}, 0, '', [1], { a: 1 }];

function wrongType(c: Context): FuzzCase | undefined {
  const candidates: { loc: Location; value: Tree }[] = [];
  for (const loc of c.locs) {
    const types = allowedTypes(loc.declared);
    if (types === undefined) continue;
    for (const sample of SAMPLES)
      if (!types.has(jsonTypeOf(sample as JsonValue))) candidates.push({ loc, value: sample });
  }
  const chosen = choose(candidates, c.plan.pick);
  if (chosen === undefined) return undefined;
  return {
    kind: 'wrong-type',
    what: `replace ${show(chosen.loc.path)} (${jsonTypeOf(chosen.loc.value)}) with ${writeJson(chosen.value)}`,
    bytes: utf8(writeJson(replaceAt(c.seed, chosen.loc.path, chosen.value))),
    expect: refuse('SCHEMA_TYPE'),
  };
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

interface BoundEdit {
  readonly path: Path;
  readonly what: string;
  /** The value at the bound (valid) and one past it, with the code one past it must get. */
  readonly at: Tree | undefined;
  readonly past: Tree | undefined;
  readonly pastCode: ErrorCode;
}

function u64Range(node: SchemaNode): [bigint, bigint] | undefined {
  const spec = node.u64;
  if (spec === true) return [0n, U64_MAX];
  if (typeof spec === 'object' && spec !== null) {
    const s = spec as { minimum?: string; maximum?: string };
    return [BigInt(s.minimum ?? '0'), BigInt(s.maximum ?? U64_MAX.toString())];
  }
  return undefined;
}

/** A number literal one past a bound: above u64 or below 0 is a lexical error. */
function numberPast(value: bigint): { tree: Tree; code: ErrorCode } {
  if (value < 0n) return { tree: new Raw(value.toString()), code: 'JSON_NUMBER_INVALID' };
  if (value > U64_MAX) return { tree: new Raw(value.toString()), code: 'JSON_NUMBER_INVALID' };
  return { tree: value, code: 'SCHEMA_BOUND' };
}

function boundEdits(loc: Location): BoundEdit[] {
  const node = loc.resolved;
  const edits: BoundEdit[] = [];
  if ('const' in node || Array.isArray(node.enum)) return edits;
  const value = loc.value;
  if (typeof value === 'string') {
    const pattern = typeof node.pattern === 'string' ? new RegExp(node.pattern, 'u') : undefined;
    const fits = (s: string): boolean => pattern === undefined || pattern.test(s);
    const maxLength = typeof node.maxLength === 'number' ? node.maxLength : Infinity;
    const maxBytes = typeof node.maxUtf8Bytes === 'number' ? node.maxUtf8Bytes : Infinity;
    if (maxLength !== Infinity || maxBytes !== Infinity) {
      const chars = [...value];
      const pad = chars[chars.length - 1] ?? 'a';
      let at = value;
      let length = codePoints(value);
      let bytes = Buffer.byteLength(value);
      const padBytes = Buffer.byteLength(pad);
      while (length + 1 <= maxLength && bytes + padBytes <= maxBytes) {
        at += pad;
        length++;
        bytes += padBytes;
      }
      const past = at + pad;
      // One past maxLength is SCHEMA_BOUND whatever the pattern says (maxLength is checked
      // first); one past maxUtf8Bytes only when the pattern still fits.
      const lengthBound = length + 1 > maxLength;
      if (length <= maxLength && bytes <= maxBytes && fits(at)) {
        const pastValue = lengthBound || fits(past) ? past : undefined;
        edits.push({
          path: loc.path,
          what: `string ${show(loc.path)} of ${length} code points / ${bytes} bytes, and one more ${JSON.stringify(pad)}`,
          at,
          past: pastValue,
          pastCode: 'SCHEMA_BOUND',
        });
      }
    }
    if (typeof node.minLength === 'number' && node.minLength >= 1 && codePoints(value) >= node.minLength) {
      const below = [...value].slice(0, node.minLength - 1).join('');
      edits.push({
        path: loc.path,
        what: `string ${show(loc.path)} cut to ${node.minLength - 1} code points`,
        at: undefined,
        past: below,
        pastCode: 'SCHEMA_BOUND',
      });
    }
  } else if (Array.isArray(value)) {
    if (typeof node.maxItems === 'number' && value.length > 0) {
      const max = node.maxItems;
      const at = Array.from({ length: max }, (_, i) => copyTree(value[i % value.length] as Tree));
      const past = [...at, copyTree(value[0] as Tree)];
      edits.push({
        path: loc.path,
        what: `array ${show(loc.path)} with ${max} items, and ${max + 1}`,
        at,
        past,
        pastCode: 'SCHEMA_BOUND',
      });
    }
    if (typeof node.minItems === 'number' && node.minItems >= 1 && value.length >= node.minItems) {
      edits.push({
        path: loc.path,
        what: `array ${show(loc.path)} cut to ${node.minItems - 1} items`,
        at: undefined,
        past: value.slice(0, node.minItems - 1).map(copyTree),
        pastCode: 'SCHEMA_BOUND',
      });
    }
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    let range = u64Range(node);
    // A plain integer field without a maximum is bounded by 2^53 - 1; above it is SCHEMA_TYPE (docs/strict-json.md "Numbers").
    let overCode: ErrorCode | undefined;
    if (range === undefined && (typeof node.minimum === 'number' || typeof node.maximum === 'number')) {
      range = [
        BigInt(typeof node.minimum === 'number' ? node.minimum : 0),
        BigInt(typeof node.maximum === 'number' ? node.maximum : Number.MAX_SAFE_INTEGER),
      ];
      if (typeof node.maximum !== 'number') overCode = 'SCHEMA_TYPE';
    }
    if (range !== undefined) {
      const [min, max] = range;
      const over = numberPast(max + 1n);
      edits.push({
        path: loc.path,
        what: `integer ${show(loc.path)} = ${max}, and ${max + 1n}`,
        at: max,
        past: over.tree,
        pastCode: over.code === 'SCHEMA_BOUND' ? (overCode ?? 'SCHEMA_BOUND') : over.code,
      });
      const under = numberPast(min - 1n);
      edits.push({
        path: loc.path,
        what: `integer ${show(loc.path)} = ${min}, and ${min - 1n}`,
        at: min,
        past: under.tree,
        pastCode: under.code,
      });
    }
  } else if (typeof value === 'object' && value !== null && typeof node.maxProperties === 'number' && isNodeMap(node)) {
    const pattern = Object.keys(node.patternProperties as object)[0];
    const key = (i: number): string => `K${i}`;
    if (pattern !== undefined && new RegExp(pattern, 'u').test(key(0))) {
      const sample = Object.values(value)[0] ?? '';
      const at: TreeObject = {};
      for (let i = 0; i < node.maxProperties; i++) setMember(at, key(i), copyTree(sample));
      const past = copyTree(at) as TreeObject;
      setMember(past, key(node.maxProperties), copyTree(sample));
      edits.push({
        path: loc.path,
        what: `map ${show(loc.path)} with ${node.maxProperties} members, and one more`,
        at,
        past,
        pastCode: 'SCHEMA_BOUND',
      });
    }
  }
  return edits;
}

function isNodeMap(node: SchemaNode): boolean {
  return typeof node.patternProperties === 'object' && node.patternProperties !== null;
}

function bound(c: Context, at: boolean): FuzzCase | undefined {
  const versionPath = c.type.versionField;
  const edits = c.locs
    .flatMap(boundEdits)
    .map((e): BoundEdit =>
      // The version field is checked before the schema: a u64 out of its range there is an unsupported version.
      e.path.length === 1 && e.path[0] === versionPath && e.pastCode === 'SCHEMA_BOUND'
        ? { ...e, pastCode: 'SCHEMA_VERSION_UNSUPPORTED' }
        : e,
    )
    .filter((e) => (at ? e.at !== undefined : e.past !== undefined));
  const edit = choose(edits, c.plan.pick);
  if (edit === undefined) return undefined;
  if (at)
    return {
      kind: 'bound-at',
      what: `at the bound: ${edit.what}`,
      bytes: utf8(writeJson(replaceAt(c.seed, edit.path, edit.at as Tree))),
      expect: { outcome: 'pass-schema' },
    };
  return {
    kind: 'bound-past',
    what: `past the bound: ${edit.what}`,
    bytes: utf8(writeJson(replaceAt(c.seed, edit.path, edit.past as Tree))),
    expect: refuse(edit.pastCode),
  };
}

// --- lexical mutations ---------------------------------------------------------------------------

function escapeFirst(key: string): string {
  const first = key.codePointAt(0);
  if (first === undefined || first > 0xffff) return JSON.stringify(key);
  const rest = JSON.stringify(key.slice(1)).slice(1);
  return `"\\u${first.toString(16).padStart(4, '0')}${rest}`;
}

function duplicateKey(c: Context): FuzzCase | undefined {
  const objects = c.locs.filter((l) => jsonTypeOf(l.value) === 'object' && Object.keys(l.value as object).length > 0);
  const loc = choose(objects, c.plan.pick);
  if (loc === undefined) return undefined;
  const object = loc.value as Record<string, JsonValue>;
  const keys = Object.keys(object);
  const key = keys[c.plan.variant % keys.length] as string;
  const members = keys.map((k) => `${JSON.stringify(k)}:${writeJson(object[k] as Tree)}`);
  const again = `${c.plan.variant % 2 === 0 ? JSON.stringify(key) : escapeFirst(key)}:${writeJson(ANY_VALUES[c.plan.variant % ANY_VALUES.length] as Tree)}`;
  const where = c.plan.variant % (members.length + 1);
  const position = Math.max(where, keys.indexOf(key) + 1);
  members.splice(position, 0, again);
  const tree = replaceAt(c.seed, loc.path, new Raw(`{${members.join(',')}}`));
  return {
    kind: 'duplicate-key',
    what: `repeat ${JSON.stringify(key)} at ${show(loc.path)}`,
    bytes: utf8(writeJson(tree)),
    expect: refuse('JSON_DUPLICATE_KEY'),
  };
}

const LONE = [
  '\\ud800',
  '\\udbff',
  '\\udc00',
  '\\udfff',
  '\\ud83d\\u0041',
  '\\ud83dx',
  '\\uDE00\\uD83D',
  '\\ud83d\\ud83d',
];

function loneSurrogate(c: Context): FuzzCase | undefined {
  const strings = c.locs.filter((l) => typeof l.value === 'string');
  const loc = choose(strings, c.plan.pick);
  if (loc === undefined) return undefined;
  const text = JSON.stringify(loc.value).slice(1, -1);
  // Insert between escapes, never inside one.
  const cuts = [0];
  for (let i = 0; i < text.length;) {
    i += text[i] === '\\' ? (text[i + 1] === 'u' ? 6 : 2) : 1;
    cuts.push(i);
  }
  const cut = cuts[c.plan.variant % cuts.length] as number;
  const lone = LONE[c.plan.variant % LONE.length] as string;
  const tree = replaceAt(c.seed, loc.path, new Raw(`"${text.slice(0, cut)}${lone}${text.slice(cut)}"`));
  return {
    kind: 'lone-surrogate',
    what: `put ${lone} into the string at ${show(loc.path)}`,
    bytes: utf8(writeJson(tree)),
    expect: refuse('JSON_LONE_SURROGATE'),
  };
}

const INVALID_UTF8: readonly (readonly number[])[] = [
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf0, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0xff],
  [0xfe, 0xff],
  [0xff, 0xfe],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xc3],
];

function invalidUtf8(c: Context): FuzzCase | undefined {
  const text = Buffer.from(writeJson(c.seed));
  const boundaries: number[] = [];
  for (let i = 0; i <= text.length; i++)
    if (i === text.length || ((text[i] as number) & 0xc0) !== 0x80) boundaries.push(i);
  const at = boundaries[c.plan.pick % boundaries.length] as number;
  const bad = INVALID_UTF8[c.plan.variant % INVALID_UTF8.length] as readonly number[];
  const bytes = Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at)]);
  return {
    kind: 'invalid-utf8',
    what: `insert ${Buffer.from(bad).toString('hex')} at byte ${at}`,
    bytes,
    expect: refuse('JSON_INVALID_UTF8'),
  };
}

function bom(c: Context): FuzzCase {
  const text = writeJson(c.seed);
  const BOM = '\ufeff';
  switch (c.plan.variant % 3) {
    case 0:
      return {
        kind: 'bom',
        what: 'UTF-8 BOM before the document',
        bytes: utf8(BOM + text),
        expect: refuse('JSON_BOM'),
      };
    case 1:
      return {
        kind: 'bom',
        what: 'UTF-8 BOM and a newline before the document',
        bytes: utf8(`${BOM}\n${text}`),
        expect: refuse('JSON_BOM'),
      };
    default:
      // After leading whitespace U+FEFF is a character where a token must start.
      return {
        kind: 'bom',
        what: 'U+FEFF after a leading space',
        bytes: utf8(` ${BOM}${text}`),
        expect: refuse('JSON_SYNTAX'),
      };
  }
}

const BAD_NUMBERS = [
  '-1',
  '-0',
  '1.0',
  '0.5',
  '1e3',
  '1E3',
  '1e-3',
  '01',
  '00',
  '007',
  '18446744073709551616',
  '99999999999999999999',
  '-18446744073709551615',
  '1' + '0'.repeat(400),
  '1.5e300',
  '-0.0',
  '0e0',
];

function badNumber(c: Context): FuzzCase | undefined {
  const loc = choose(c.locs, c.plan.pick);
  if (loc === undefined) return undefined;
  const number = BAD_NUMBERS[c.plan.variant % BAD_NUMBERS.length] as string;
  return {
    kind: 'bad-number',
    what: `replace ${show(loc.path)} with ${number.slice(0, 30)}`,
    bytes: utf8(writeJson(replaceAt(c.seed, loc.path, new Raw(number)))),
    expect: refuse('JSON_NUMBER_INVALID'),
  };
}

function deepNesting(c: Context): FuzzCase | undefined {
  const loc = choose(c.locs, c.plan.pick);
  if (loc === undefined) return undefined;
  const extra = [1, 2, 10, 1000, 100_000][c.plan.variant % 5] as number;
  const levels = MAX_DEPTH - loc.path.length + extra;
  const objects = c.plan.variant % 2 === 1;
  const open = objects ? '{"a":' : '[';
  const close = objects ? '}' : ']';
  const nested = `${open.repeat(levels)}0${close.repeat(levels)}`;
  return {
    kind: 'deep-nesting',
    what: `replace ${show(loc.path)} with ${levels} nested ${objects ? 'objects' : 'arrays'} (${loc.path.length + levels} levels)`,
    bytes: utf8(writeJson(replaceAt(c.seed, loc.path, new Raw(nested)))),
    expect: refuse('JSON_TOO_DEEP'),
  };
}

function oversize(c: Context): FuzzCase {
  const text = Buffer.from(writeJson(c.seed));
  const over = c.plan.variant % 3;
  const size = c.type.maxBytes + over;
  const padded = Buffer.alloc(Math.max(size, text.length), 0x20);
  text.copy(padded, c.plan.pick % 2 === 0 ? 0 : padded.length - text.length);
  if (over === 0)
    return {
      kind: 'oversize',
      what: `padded with spaces to the limit of ${c.type.maxBytes} bytes`,
      bytes: padded,
      expect: { outcome: 'accept-same' },
      seed: c.seed,
    };
  return {
    kind: 'oversize',
    what: `padded with spaces to ${padded.length} bytes (limit ${c.type.maxBytes})`,
    bytes: padded,
    expect: refuse('INPUT_TOO_LARGE'),
  };
}

const TRAILING = [',', 'x', '{}', '[]', '0', '"', 'null', '\u0000', '/', '}'];

function truncatedOrTrailing(c: Context): FuzzCase {
  const text = writeJson(c.seed);
  if (c.plan.variant % 2 === 0) {
    const chars = [...text];
    const cut = c.plan.pick % chars.length;
    const prefix = chars.slice(0, cut).join('');
    // A cut right after a high-surrogate escape would be a lone surrogate; the seeds write no such escapes.
    return {
      kind: 'truncated-or-trailing',
      what: `cut after ${cut} of ${chars.length} characters`,
      bytes: utf8(prefix),
      expect: refuse('JSON_SYNTAX'),
    };
  }
  const tail = TRAILING[c.plan.pick % TRAILING.length] as string;
  return {
    kind: 'truncated-or-trailing',
    what: `append ${JSON.stringify(tail)}`,
    bytes: utf8(`${text} ${tail}`),
    expect: refuse('JSON_SYNTAX'),
  };
}

// --- mutations that keep the document valid ------------------------------------------------------

const GAPS = ['', ' ', '\n', '\t', '\r\n', '  \t '];

function whitespace(c: Context): FuzzCase {
  let state = c.plan.variant + 1;
  const gap = (): string => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return GAPS[state % GAPS.length] as string;
  };
  return {
    kind: 'whitespace',
    what: 'whitespace between tokens',
    bytes: utf8(writeJson(c.seed, { gap })),
    expect: { outcome: 'accept-same' },
    seed: c.seed,
  };
}

function reordered(c: Context): FuzzCase | undefined {
  const objects = c.locs.filter((l) => jsonTypeOf(l.value) === 'object' && Object.keys(l.value as object).length > 1);
  const loc = choose(objects, c.plan.pick);
  if (loc === undefined) return undefined;
  const object = loc.value as Record<string, JsonValue>;
  const keys = Object.keys(object);
  const shift = 1 + (c.plan.variant % (keys.length - 1));
  const order = c.plan.variant % 3 === 0 ? [...keys].reverse() : [...keys.slice(shift), ...keys.slice(0, shift)];
  const moved: TreeObject = {};
  for (const key of order) setMember(moved, key, copyTree(object[key] as Tree));
  return {
    kind: 'reordered',
    what: `members of ${show(loc.path)} in the order ${order.join(',')}`,
    bytes: utf8(writeJson(replaceAt(c.seed, loc.path, moved))),
    expect: { outcome: 'accept-same' },
    seed: c.seed,
  };
}

function escapeAll(text: string, every: number): string {
  let out = '';
  let n = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (n++ % every !== 0) out += JSON.stringify(ch).slice(1, -1);
    else if (ch === '/') out += '\\/';
    else if (cp > 0xffff)
      out += [ch.charCodeAt(0), ch.charCodeAt(1)].map((unit) => `\\u${unit.toString(16).toUpperCase()}`).join('');
    else out += `\\u${cp.toString(16).padStart(4, '0')}`;
  }
  return `"${out}"`;
}

function escaped(c: Context): FuzzCase | undefined {
  const strings = c.locs.filter((l) => typeof l.value === 'string' && l.value !== '');
  const loc = choose(strings, c.plan.pick);
  if (loc === undefined) return undefined;
  const every = 1 + (c.plan.variant % 3);
  const tree = replaceAt(c.seed, loc.path, new Raw(escapeAll(loc.value as string, every)));
  return {
    kind: 'escaped',
    what: `string ${show(loc.path)} written with \\u escapes (every ${every})`,
    bytes: utf8(writeJson(tree)),
    expect: { outcome: 'accept-same' },
    seed: c.seed,
  };
}

const BUILDERS: Record<MutationKind, (c: Context) => FuzzCase | undefined> = {
  'unknown-field': unknownField,
  'missing-field': missingField,
  'wrong-type': wrongType,
  'bound-at': (c) => bound(c, true),
  'bound-past': (c) => bound(c, false),
  'duplicate-key': duplicateKey,
  'lone-surrogate': loneSurrogate,
  'invalid-utf8': invalidUtf8,
  bom,
  'bad-number': badNumber,
  'deep-nesting': deepNesting,
  oversize,
  'truncated-or-trailing': truncatedOrTrailing,
  whitespace,
  reordered,
  escaped,
};

const LOCATIONS = new WeakMap<object, Location[]>();

/** The case a plan makes for a type, or undefined when the seed offers no place for this kind. */
export function buildCase(type: WireType, plan: Plan): FuzzCase | undefined {
  const seed = type.seeds[plan.seed % type.seeds.length] as JsonValue;
  let locs = LOCATIONS.get(seed as object);
  if (locs === undefined) {
    locs = locations(seed, type.schema as SchemaNode);
    LOCATIONS.set(seed as object, locs);
  }
  return BUILDERS[plan.kind]({ type, seed, locs, plan });
}

/** The path of a node in a tree, for messages. */
export function describePath(path: Path): string {
  return show(path);
}

export { nodeAt };
