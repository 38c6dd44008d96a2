/**
 * The malformed-input campaign over one wire type, shared by the CI sample
 * (test/hostile/malformed-input.test.ts) and the long run (test/hostile/fuzz/run.ts): fast-check
 * draws the cases from a seed, every case is judged by the oracle, and the counts of crashes,
 * hangs, wrong codes and wrongly accepted inputs come back with a replayable seed and path.
 */
import fc from 'fast-check';

import type { JsonValue } from '../../../src/contracts/json/json-value.js';
import { writeJson } from './json-text.js';
import { buildCase, planArbitrary, type FuzzCase } from './mutations.js';
import {
  judge,
  randomJsonExpectation,
  rawBytesExpectation,
  setSeedWriter,
  stableText,
  type Outcome,
  type Verdict,
} from './oracle.js';
import type { WireType } from './wire-types.js';

setSeedWriter((seed: JsonValue) => writeJson(seed));

/** Cases per type: FUZZ_RUNS when set, else the given default (1,000 in CI, 10,000 for `npm run fuzz`). */
export function runsFromEnv(fallback: number): number {
  const text = process.env.FUZZ_RUNS;
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`FUZZ_RUNS must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

/** The campaign seed: FUZZ_SEED when set (to replay), else a fresh one. */
export function seedFromEnv(): number {
  const text = process.env.FUZZ_SEED;
  if (text === undefined || text === '') return (Date.now() ^ (process.pid << 16)) | 0;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(text)}`);
  return n;
}

/** Arbitrary of the cases for a type: mostly mutations of valid seeds, then random bytes and random JSON. */
export function caseArbitrary(type: WireType): fc.Arbitrary<FuzzCase> {
  const mutation = planArbitrary.map(
    (plan) => buildCase(type, plan) ?? (buildCase(type, { ...plan, kind: 'whitespace' }) as FuzzCase),
  );
  const bytes = fc
    .oneof(
      fc.uint8Array({ maxLength: 256 }),
      fc.string({ unit: 'binary', maxLength: 128 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
      fc.json({ maxDepth: 3 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
    )
    .map((b): FuzzCase => ({
      kind: 'random-bytes',
      what: `random bytes ${Buffer.from(b).toString('hex').slice(0, 120)}`,
      bytes: b,
      expect: rawBytesExpectation(type, b),
    }));
  const json = fc.jsonValue({ maxDepth: 4 }).map((value): FuzzCase => {
    const text = JSON.stringify(value) ?? 'null';
    return {
      kind: 'random-json',
      what: `random JSON ${text.slice(0, 120)}`,
      bytes: new Uint8Array(Buffer.from(text, 'utf8')),
      expect: randomJsonExpectation(value),
    };
  });
  const deepJson = fc.integer({ min: 60, max: 70 }).map((depth): FuzzCase => {
    const text = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    return {
      kind: 'random-json',
      what: `${depth} nested arrays`,
      bytes: new Uint8Array(Buffer.from(text)),
      expect: randomJsonExpectation(JSON.parse(text)),
    };
  });
  return fc.oneof(
    { arbitrary: mutation, weight: 16 },
    { arbitrary: bytes, weight: 2 },
    { arbitrary: json, weight: 2 },
    { arbitrary: deepJson, weight: 1 },
  );
}

export interface Failure {
  readonly verdict: Exclude<Verdict, 'ok'>;
  readonly kind: string;
  readonly what: string;
  readonly expected: string;
  readonly got: string;
  readonly ms: number;
  /** The start of the input, as a JSON string (bytes that are not UTF-8 as U+FFFD). */
  readonly input: string;
}

export interface TypeReport {
  readonly type: string;
  readonly runs: number;
  readonly seed: number;
  readonly counts: Record<Exclude<Verdict, 'ok'>, number>;
  /** Cases per mutation kind (coverage of the generators). */
  readonly kinds: Record<string, number>;
  /** The first few failures of each verdict. */
  readonly failures: readonly Failure[];
  /** The smallest failing case fast-check found, with what replays it. */
  readonly counterexample?: { readonly failure: Failure; readonly replay: string };
  readonly ms: number;
}

const KEEP_PER_VERDICT = 5;

export function failed(report: TypeReport): boolean {
  return Object.values(report.counts).some((n) => n > 0);
}

/** Seeds first: each must decode, or the campaign would judge mutations of an invalid document. */
export function checkSeeds(type: WireType): void {
  for (const seed of type.seeds) {
    try {
      type.decode(Buffer.from(writeJson(seed)));
    } catch (error) {
      throw new Error(`seed of ${type.id} does not decode: ${(error as Error).message}\n${stableText(seed)}`, {
        cause: error,
      });
    }
  }
}

function failureOf(c: FuzzCase, outcome: Outcome): Failure {
  const text = Buffer.from(c.bytes.subarray(0, 300)).toString('utf8');
  return {
    verdict: outcome.verdict as Exclude<Verdict, 'ok'>,
    kind: c.kind,
    what: c.what,
    expected: outcome.expected,
    got: outcome.got,
    ms: Math.round(outcome.ms),
    input: `${JSON.stringify(text)}${c.bytes.byteLength > 300 ? ` … (${c.bytes.byteLength} bytes)` : ''}`,
  };
}

/** Run `runs` cases of one type from `seed`; with `path`, replay only the case fast-check reported there. */
export function runCampaign(
  type: WireType,
  runs: number,
  seed: number,
  path?: string,
  settings: { checkSeeds?: boolean } = {},
): TypeReport {
  if (settings.checkSeeds !== false) checkSeeds(type);
  const started = performance.now();
  const counts = { crash: 0, hang: 0, 'wrong-code': 0, 'wrongly-accepted': 0 };
  const kinds: Record<string, number> = {};
  const failures: Failure[] = [];
  const arbitrary = caseArbitrary(type);
  const options = path === undefined ? { numRuns: runs, seed } : { numRuns: 1, seed, path };
  const counted = fc.check(
    fc.property(arbitrary, (c) => {
      kinds[c.kind] = (kinds[c.kind] ?? 0) + 1;
      const outcome = judge(type, c);
      if (outcome.verdict !== 'ok') {
        counts[outcome.verdict]++;
        if (failures.filter((f) => f.verdict === outcome.verdict).length < KEEP_PER_VERDICT)
          failures.push(failureOf(c, outcome));
      }
      return true;
    }),
    options,
  );
  // The counting property never fails; a failure here is the campaign's own error.
  if (counted.failed)
    throw new Error(`the campaign of ${type.id} failed (seed ${seed}): ${String(counted.errorInstance)}`, {
      cause: counted.errorInstance,
    });
  const report: TypeReport = {
    type: type.id,
    runs: path === undefined ? runs : 1,
    seed,
    counts,
    kinds,
    failures,
    ms: Math.round(performance.now() - started),
  };
  if (!failed(report) || path !== undefined) return report;
  // A second pass with the same seed stops at the first failure and shrinks it to a small case.
  let smallest: Failure | undefined;
  const details = fc.check(
    fc.property(arbitrary, (c) => {
      const outcome = judge(type, c);
      if (outcome.verdict === 'ok') return true;
      smallest = failureOf(c, outcome);
      return false;
    }),
    { numRuns: runs, seed },
  );
  if (!details.failed || smallest === undefined) return report;
  const replay = `FUZZ_TYPE=${type.id} FUZZ_SEED=${seed} FUZZ_PATH=${details.counterexamplePath ?? ''} npm run fuzz`;
  return { ...report, counterexample: { failure: smallest, replay } };
}

/** Lines for a report: one summary line, then each kept failure. */
export function reportLines(report: TypeReport): string[] {
  const c = report.counts;
  const lines = [
    `${report.type.padEnd(44)} runs ${String(report.runs).padStart(6)}  crashes ${c.crash}  hangs ${c.hang}  wrong codes ${c['wrong-code']}  wrongly accepted ${c['wrongly-accepted']}  (${report.ms} ms, seed ${report.seed})`,
  ];
  for (const f of report.failures)
    lines.push(`    ${f.verdict} [${f.kind}] ${f.what}: expected ${f.expected}, got ${f.got} (${f.ms} ms)`);
  if (report.counterexample !== undefined) {
    const f = report.counterexample.failure;
    lines.push(`    smallest: ${f.verdict} [${f.kind}] ${f.what}: expected ${f.expected}, got ${f.got}`);
    lines.push(`    input: ${f.input}`);
    lines.push(`    replay: ${report.counterexample.replay}`);
  }
  return lines;
}
