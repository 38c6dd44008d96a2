/**
 * The oracle: run one input through a type's real decoder and classify what happened as
 * correct, a crash (anything thrown that is not an AgentscmError, or INTERNAL), a hang (slower
 * than the bound), a wrong code, or an input accepted that should have been refused.
 */
import { isUtf8 } from 'node:buffer';

import { AgentscmError, type ErrorCode } from '../../../src/contracts/errors.js';
import type { JsonValue } from '../../../src/contracts/json/json-value.js';
import type { Expectation, FuzzCase } from './mutations.js';
import type { WireType } from './wire-types.js';

/** A decode slower than this is a hang (a generous bound: the largest inputs are 1 MiB). */
export const HANG_MS = 2000;

export type Verdict = 'ok' | 'crash' | 'hang' | 'wrong-code' | 'wrongly-accepted';

export interface Outcome {
  readonly verdict: Verdict;
  /** What the decoder did: "ok" or the code (or the class of a crash). */
  readonly got: string;
  readonly expected: string;
  readonly ms: number;
}

/** Codes that only the decoding stages raise (size, UTF-8, JSON, version, schema). */
const STAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INPUT_TOO_LARGE',
  'JSON_BOM',
  'JSON_INVALID_UTF8',
  'JSON_SYNTAX',
  'JSON_DUPLICATE_KEY',
  'JSON_LONE_SURROGATE',
  'JSON_NUMBER_INVALID',
  'JSON_TOO_DEEP',
  'SCHEMA_UNKNOWN_FIELD',
  'SCHEMA_MISSING_FIELD',
  'SCHEMA_BOUND',
  'SCHEMA_VERSION_UNSUPPORTED',
]);

const LEXICAL: readonly ErrorCode[] = [
  'JSON_SYNTAX',
  'JSON_DUPLICATE_KEY',
  'JSON_LONE_SURROGATE',
  'JSON_NUMBER_INVALID',
  'JSON_TOO_DEEP',
];
const SCHEMA: readonly ErrorCode[] = [
  'SCHEMA_UNKNOWN_FIELD',
  'SCHEMA_MISSING_FIELD',
  'SCHEMA_TYPE',
  'SCHEMA_BOUND',
  'SCHEMA_VERSION_UNSUPPORTED',
  'ID_INVALID',
  'PATH_INVALID',
];

type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

function attempt(fn: () => unknown): { result: Result; ms: number } {
  const start = performance.now();
  let result: Result;
  try {
    result = { ok: true, value: fn() };
  } catch (error) {
    result = { ok: false, error };
  }
  return { result, ms: performance.now() - start };
}

/**
 * The code a decoding error reports. A type with a wrapper code (the key file) reports every
 * decoding failure under it, with the decoding error as its cause: that cause's code is the one
 * the mutation predicts.
 */
function codeOfError(type: WireType, error: unknown): { code: string; crash: boolean } {
  if (!(error instanceof AgentscmError))
    return {
      code: error instanceof Error ? `${error.constructor.name}: ${error.message.slice(0, 200)}` : String(error),
      crash: true,
    };
  if (error.code === 'INTERNAL') return { code: `INTERNAL: ${error.message.slice(0, 200)}`, crash: true };
  if (type.wrapperCode !== undefined && error.code === type.wrapperCode) {
    const cause = error.cause;
    if (cause instanceof AgentscmError) return { code: cause.code, crash: false };
  }
  return { code: error.code, crash: false };
}

/**
 * A stable text of a decoded value, for comparing what a mutated and the original document
 * decode to: member order is not compared (a decoded value keeps the order it was sent in).
 */
export function stableText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint' || typeof v === 'number') return `${v}n`;
    if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort())
        Object.defineProperty(sorted, key, { value: (v as Record<string, unknown>)[key], enumerable: true });
      return sorted;
    }
    return v;
  });
}

/** What each type's seeds decode to, per type (two types may share a seed document). */
const seedDecodes = new WeakMap<WireType, Map<JsonValue, string>>();

function expectedText(expect: Expectation): string {
  switch (expect.outcome) {
    case 'refuse':
      return expect.code;
    case 'refuse-one-of':
      return expect.codes.join('|');
    case 'accept-same':
      return 'ok (same value as the seed)';
    case 'pass-schema':
      return 'schema stage ok';
  }
}

/** Apply the order of checks of docs/strict-json.md: an input over the limit is refused before anything else. */
export function effectiveExpectation(type: WireType, c: FuzzCase): Expectation {
  if (c.bytes.byteLength > type.maxBytes) return { outcome: 'refuse', code: 'INPUT_TOO_LARGE' };
  return c.expect;
}

export function judge(type: WireType, c: FuzzCase): Outcome {
  const expect = effectiveExpectation(type, c);
  const expected = expectedText(expect);
  const { result, ms } = attempt(() => type.decode(c.bytes));
  const make = (verdict: Verdict, got: string): Outcome => ({
    verdict: ms > HANG_MS ? 'hang' : verdict,
    got,
    expected,
    ms,
  });
  if (!result.ok) {
    const { code, crash } = codeOfError(type, result.error);
    if (crash) return make('crash', code);
    switch (expect.outcome) {
      case 'refuse':
        return make(code === expect.code ? 'ok' : 'wrong-code', code);
      case 'refuse-one-of':
        return make((expect.codes as readonly string[]).includes(code) ? 'ok' : 'wrong-code', code);
      case 'accept-same':
        return make('wrong-code', code);
      case 'pass-schema': {
        // The type's own rules may refuse a value at a bound (a duplicate in a list that must be
        // unique); the schema stage itself must accept it.
        if (STAGE_CODES.has(code as ErrorCode)) return make('wrong-code', code);
        const stage = attempt(() => type.schemaStage(c.bytes));
        if (!stage.result.ok) return make('wrong-code', `schema stage: ${codeOfError(type, stage.result.error).code}`);
        return make('ok', code);
      }
    }
  }
  switch (expect.outcome) {
    case 'refuse':
    case 'refuse-one-of':
      return make('wrongly-accepted', 'ok');
    case 'pass-schema':
      return make('ok', 'ok');
    case 'accept-same': {
      const seed = c.seed as JsonValue;
      let references = seedDecodes.get(type);
      if (references === undefined) {
        references = new Map();
        seedDecodes.set(type, references);
      }
      let reference = references.get(seed);
      if (reference === undefined) {
        const decoded = attempt(() => type.decode(Buffer.from(writeSeed(seed))));
        if (!decoded.result.ok)
          return make('wrong-code', `the seed itself is refused (${codeOfError(type, decoded.result.error).code})`);
        reference = stableText(decoded.result.value);
        references.set(seed, reference);
      }
      return make(stableText(result.value) === reference ? 'ok' : 'wrong-code', 'ok (a different value)');
    }
  }
}

let writeSeed: (seed: JsonValue) => string = () => {
  throw new Error('seed writer not set');
};
/** The writer the oracle uses to decode a seed for comparison (set once by the campaign). */
export function setSeedWriter(writer: (seed: JsonValue) => string): void {
  writeSeed = writer;
}

// --- raw inputs: random bytes and random JSON values ---------------------------------------------

/**
 * Expectation for random bytes, decided by independent means: the byte limit, the BOM, Node's
 * own UTF-8 validator, and JSON.parse for the syntax (which stage refuses is certain; within the
 * JSON stage the first problem in document order decides, so any JSON-stage code is right when
 * JSON.parse refuses too).
 */
export function rawBytesExpectation(type: WireType, bytes: Uint8Array): Expectation {
  if (bytes.byteLength > type.maxBytes) return { outcome: 'refuse', code: 'INPUT_TOO_LARGE' };
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { outcome: 'refuse', code: 'JSON_BOM' };
  if (!isUtf8(bytes)) return { outcome: 'refuse', code: 'JSON_INVALID_UTF8' };
  const text = Buffer.from(bytes).toString('utf8');
  try {
    JSON.parse(text);
  } catch {
    return { outcome: 'refuse-one-of', codes: LEXICAL };
  }
  return { outcome: 'refuse-one-of', codes: [...LEXICAL, ...SCHEMA, ...(type.wrapperCode === undefined ? [] : [])] };
}

const U64_MAX = 18446744073709551615n;

function isU64Text(text: string): boolean {
  return /^(0|[1-9][0-9]*)$/.test(text) && BigInt(text) <= U64_MAX;
}

function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

/**
 * Expectation for a random JSON value written with JSON.stringify: walk it in document order
 * and predict the first problem the strict parser must find (a number that is not a u64, a lone
 * surrogate, nesting deeper than 64); a value without one reaches the schema stage, which must
 * refuse it unless it is a valid document (never, for random values: the schema's required
 * members are not generated).
 */
export function randomJsonExpectation(value: unknown, maxDepth = 64): Expectation {
  let found: ErrorCode | undefined;
  const visit = (node: unknown, depth: number): void => {
    if (found !== undefined) return;
    if (typeof node === 'number') {
      if (!isU64Text(JSON.stringify(node))) found = 'JSON_NUMBER_INVALID';
    } else if (typeof node === 'string') {
      if (hasLoneSurrogate(node)) found = 'JSON_LONE_SURROGATE';
    } else if (Array.isArray(node)) {
      if (depth + 1 > maxDepth) found = 'JSON_TOO_DEEP';
      for (const item of node) visit(item, depth + 1);
    } else if (node !== null && typeof node === 'object') {
      if (depth + 1 > maxDepth) found = 'JSON_TOO_DEEP';
      for (const [key, member] of Object.entries(node)) {
        if (found === undefined && hasLoneSurrogate(key)) found = 'JSON_LONE_SURROGATE';
        visit(member, depth + 1);
      }
    }
  };
  visit(value, 0);
  if (found !== undefined) return { outcome: 'refuse', code: found };
  return { outcome: 'refuse-one-of', codes: SCHEMA };
}
