/**
 * `check add-review --coverage GLOB…` (docs/checks.md "Review checks"): a coverage entry is an
 * exact revision path or a glob, expanded once, when the check is added, against the files a
 * checkpoint of the workspace would record. The review step then holds the sorted exact paths
 * (a review's coverage is exact paths); `.agentscm-checks/` is never covered.
 *
 * Glob syntax, matched one path segment at a time: `*` any run of characters within a segment,
 * `?` one character, `[abc]` / `[a-z]` / `[!abc]` one character of (or not of) a class, `**` as a
 * whole segment any number of segments (zero included; a trailing `a/**` is what is inside `a`),
 * `\` makes the next character literal.
 * A leading dot is not special, as in `.gitignore`.
 */
import { AgentscmError } from '../../contracts/errors.js';
import { compareUtf8, isRelativePathWithin } from '../../contracts/paths.js';
import { REVIEW_LIMITS } from '../../contracts/review/policy.js';
import type { Store } from '../../native/store-handle.js';
import { dataDirExclusions } from '../../workspace/exclusions.js';
import { canonicalDataDir } from '../../workspace/locate.js';
import { scanBoundsFromEnv, scanWorkspace } from '../../workspace/scan.js';
import { CHECKS_DIR } from './layout.js';

/** Longest `--coverage` entry, in characters (checked before it is parsed or matched). */
export const MAX_COVERAGE_GLOB_CHARS = 1024;
/** Most `--coverage` entries one `check add-review` takes. */
export const MAX_COVERAGE_ENTRIES = REVIEW_LIMITS.maxCoveragePaths;
/** How many covered paths the human output names; the rest are counted. */
export const COVERAGE_SHOWN = 10;

type CharToken =
  | { readonly kind: 'char'; readonly ch: string }
  | { readonly kind: 'any' }
  | { readonly kind: 'class'; readonly negate: boolean; readonly ranges: readonly (readonly [number, number])[] };
type Token = CharToken | { readonly kind: 'star' };
type Segment = { readonly kind: 'globstar' } | { readonly kind: 'tokens'; readonly tokens: readonly Token[] };

/** A parsed glob: match it with coverageGlobMatches. */
export interface CoverageGlob {
  readonly text: string;
  readonly segments: readonly Segment[];
}

function invalid(message: string, hint: string): AgentscmError {
  return new AgentscmError('CHECK_INVALID', message, { hint, details: { flag: 'coverage' } });
}

function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** True when the entry holds a glob character (`*`, `?`, `[` or the escape `\`). */
export function isCoverageGlob(entry: string): boolean {
  return /[*?[\\]/.test(entry);
}

function checkLength(entry: string): void {
  if (entry.length === 0 || entry.length > MAX_COVERAGE_GLOB_CHARS) {
    throw invalid(
      `--coverage entry of ${entry.length} characters: an entry is 1-${MAX_COVERAGE_GLOB_CHARS} characters`,
      'give a shorter path or glob (docs/checks.md "Review checks")',
    );
  }
}

/** Parse `[...]` starting at chars[start] (the `[`); returns the token and the index after `]`. */
function parseClass(chars: readonly string[], start: number, glob: string): { token: CharToken; next: number } {
  let i = start + 1;
  const negate = chars[i] === '!' || chars[i] === '^';
  if (negate) i += 1;
  const ranges: [number, number][] = [];
  let first = true;
  for (;;) {
    let ch = chars[i];
    if (ch === undefined) {
      throw invalid(`--coverage ${quoted(glob)} has a [ without its ]`, 'close the class, or write \\[ for a [');
    }
    if (ch === ']' && !first) return { token: { kind: 'class', negate, ranges }, next: i + 1 };
    first = false;
    if (ch === '\\') ch = chars[(i += 1)] ?? '\\';
    if (ch === '/')
      throw invalid(`--coverage ${quoted(glob)} has a / inside [ ]`, 'a class matches one character of a name');
    const lo = ch.codePointAt(0) as number;
    if (chars[i + 1] === '-' && chars[i + 2] !== undefined && chars[i + 2] !== ']') {
      let hiChar = chars[i + 2] as string;
      i += 2;
      if (hiChar === '\\') hiChar = chars[(i += 1)] ?? '\\';
      const hi = hiChar.codePointAt(0) as number;
      if (hi < lo)
        throw invalid(`--coverage ${quoted(glob)} has the empty range ${ch}-${hiChar}`, 'write ranges low-high');
      ranges.push([lo, hi]);
    } else {
      ranges.push([lo, lo]);
    }
    i += 1;
  }
}

function parseSegment(text: string, glob: string): Segment {
  if (text === '**') return { kind: 'globstar' };
  const chars = [...text];
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length;) {
    const ch = chars[i] as string;
    if (ch === '\\') {
      const next = chars[i + 1];
      if (next === undefined)
        throw invalid(`--coverage ${quoted(glob)} ends a name with \\`, 'write \\ only before a character');
      tokens.push({ kind: 'char', ch: next });
      i += 2;
    } else if (ch === '*') {
      if (chars[i + 1] === '*') {
        throw invalid(`--coverage ${quoted(glob)}: ** must be a whole path segment`, 'write a/**/b or a/*b, not a**b');
      }
      tokens.push({ kind: 'star' });
      i += 1;
    } else if (ch === '?') {
      tokens.push({ kind: 'any' });
      i += 1;
    } else if (ch === '[') {
      const parsed = parseClass(chars, i, glob);
      tokens.push(parsed.token);
      i = parsed.next;
    } else {
      tokens.push({ kind: 'char', ch });
      i += 1;
    }
  }
  return { kind: 'tokens', tokens };
}

/** Parse a glob (bounded first), refusing what is not a relative path pattern (CHECK_INVALID). */
export function parseCoverageGlob(glob: string): CoverageGlob {
  checkLength(glob);
  const parts = glob.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw invalid(
      `--coverage ${quoted(glob)} is not a relative path pattern (empty, . or .. segment)`,
      'write it relative to the workspace root, segments joined by single /, e.g. src/**/*.ts',
    );
  }
  const segments: Segment[] = [];
  for (const part of parts) {
    const segment = parseSegment(part, glob);
    // `**/**` is the same as `**`.
    if (segment.kind === 'globstar' && segments.at(-1)?.kind === 'globstar') continue;
    segments.push(segment);
  }
  // A trailing `**` is everything inside the directory (`a/**` is `a/**/*`), never `a` itself.
  if (segments.at(-1)?.kind === 'globstar') segments.push({ kind: 'tokens', tokens: [{ kind: 'star' }] });
  return { text: glob, segments };
}

function charMatches(token: CharToken, ch: string): boolean {
  if (token.kind === 'any') return true;
  if (token.kind === 'char') return token.ch === ch;
  const code = ch.codePointAt(0) as number;
  return token.ranges.some(([lo, hi]) => code >= lo && code <= hi) !== token.negate;
}

/**
 * Wildcard matching with one backtrack point (the last star): O(units × pattern) steps, never
 * exponential. `unit(t, i)` says whether the non-star pattern unit t matches subject unit i.
 */
function wildcard(
  patternLength: number,
  subjectLength: number,
  isStar: (t: number) => boolean,
  unit: (t: number, i: number) => boolean,
): boolean {
  let t = 0;
  let i = 0;
  let starT = -1;
  let starI = 0;
  while (i < subjectLength) {
    if (t < patternLength && isStar(t)) {
      starT = t;
      starI = i;
      t += 1;
    } else if (t < patternLength && unit(t, i)) {
      t += 1;
      i += 1;
    } else if (starT >= 0) {
      t = starT + 1;
      starI += 1;
      i = starI;
    } else {
      return false;
    }
  }
  while (t < patternLength && isStar(t)) t += 1;
  return t === patternLength;
}

function segmentMatches(tokens: readonly Token[], name: string): boolean {
  const chars = [...name];
  return wildcard(
    tokens.length,
    chars.length,
    (t) => tokens[t]?.kind === 'star',
    (t, i) => charMatches(tokens[t] as CharToken, chars[i] as string),
  );
}

/** Whether a workspace path (segments joined by `/`) matches the parsed glob. */
export function coverageGlobMatches(glob: CoverageGlob, path: string): boolean {
  const names = path.split('/');
  const { segments } = glob;
  return wildcard(
    segments.length,
    names.length,
    (t) => segments[t]?.kind === 'globstar',
    (t, i) => {
      const segment = segments[t] as Segment & { kind: 'tokens' };
      return segmentMatches(segment.tokens, names[i] as string);
    },
  );
}

function underChecksDir(path: string): boolean {
  return isRelativePathWithin(CHECKS_DIR, path);
}

/**
 * The paths a checkpoint of the workspace would record, sorted by bytes, without
 * `.agentscm-checks/`: the same scan, ignore rules and exclusions as `agentscm checkpoint`. An
 * incomplete scan is refused as a checkpoint refuses it.
 */
export function checkpointablePaths(root: string, store: Pick<Store, 'dataDir'>): string[] {
  const dataDir = canonicalDataDir(store.dataDir);
  const scan = scanWorkspace(root, { bounds: scanBoundsFromEnv(), excludeDirs: dataDirExclusions(root, { dataDir }) });
  if (!scan.complete) {
    throw new AgentscmError(
      scan.problemCode ?? 'WORKSPACE_SCAN_INCOMPLETE',
      `the workspace scan is incomplete: ${scan.problem ?? 'unknown reason'}; nothing was written`,
      { hint: 'add the offending files to .gitignore or remove them, then add the check again' },
    );
  }
  return scan.table.paths.filter((p) => !underChecksDir(p));
}

/** A `--coverage` entry, checked: an exact path or a parsed glob. */
export type CoverageEntry = string | CoverageGlob;

/** Bound and parse the `--coverage` entries (before anything is read or written). */
export function parseCoverageEntries(entries: readonly string[]): CoverageEntry[] {
  if (entries.length === 0 || entries.length > MAX_COVERAGE_ENTRIES) {
    throw invalid(
      `${entries.length} --coverage entries: give 1-${MAX_COVERAGE_ENTRIES}`,
      'use a glob for many paths, e.g. --coverage "src/**/*.ts"',
    );
  }
  for (const entry of entries) checkLength(entry);
  return entries.map((entry) => (isCoverageGlob(entry) ? parseCoverageGlob(entry) : entry));
}

/**
 * Expand the checked `--coverage` entries against the workspace's files (sorted, without
 * `.agentscm-checks/`): the sorted, de-duplicated exact paths, 1-256 of them. An exact entry
 * must be one of the files; a glob must match at least one.
 */
export function expandCoverage(globs: readonly CoverageEntry[], files: readonly string[]): string[] {
  const known = new Set(files);
  const covered = new Set<string>();
  for (const glob of globs) {
    if (typeof glob === 'string') {
      if (underChecksDir(glob) || !known.has(glob)) {
        throw invalid(
          `--coverage ${quoted(glob)} is not a file a checkpoint of the workspace would record`,
          underChecksDir(glob)
            ? `${CHECKS_DIR}/ is never covered; cover the files under review`
            : 'give a path relative to the workspace root of a file that is not ignored, or a glob',
        );
      }
      covered.add(glob);
      continue;
    }
    let matched = false;
    for (const file of files) {
      if (!coverageGlobMatches(glob, file)) continue;
      matched = true;
      covered.add(file);
    }
    if (!matched) {
      throw invalid(
        `--coverage ${quoted(glob.text)} matches no file a checkpoint of the workspace would record`,
        `fix the glob (docs/checks.md "Review checks"); ignored files and ${CHECKS_DIR}/ are never covered`,
      );
    }
  }
  if (covered.size > REVIEW_LIMITS.maxCoveragePaths) {
    throw invalid(
      `--coverage expands to ${covered.size} paths, over the ${REVIEW_LIMITS.maxCoveragePaths} a review step covers`,
      'narrow the glob (a subdirectory or an extension), or split the review into several checks',
    );
  }
  return [...covered].sort(compareUtf8);
}

function parentOf(path: string): string | null {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? null : path.slice(0, slash);
}

/**
 * The review policy's exposure for the covered paths: the paths themselves while there are at
 * most 64 (the policy's bound on exposure prefixes); otherwise directories replace them, one
 * merge at a time, always the directory that exposes the fewest files beyond the coverage (ties:
 * the one that merges most entries, then the first by bytes). Refused (CHECK_INVALID) when no
 * directory is left to merge (more than 64 covered files at the workspace root).
 */
export function exposureFor(coverage: readonly string[], files: readonly string[]): string[] {
  const limit = REVIEW_LIMITS.maxExposurePrefixes;
  if (coverage.length <= limit) return [...coverage];
  const coveredSet = new Set(coverage);
  const ancestors = new Set<string>();
  for (const path of coverage) for (let d = parentOf(path); d !== null; d = parentOf(d)) ancestors.add(d);
  // Uncovered files under each ancestor of a covered path: what exposing that directory adds.
  const extra = new Map<string, number>();
  for (const file of files) {
    if (coveredSet.has(file)) continue;
    for (let d = parentOf(file); d !== null; d = parentOf(d)) {
      if (ancestors.has(d)) extra.set(d, (extra.get(d) ?? 0) + 1);
    }
  }
  let entries = [...coverage];
  while (entries.length > limit) {
    const merged = new Map<string, number>();
    for (const entry of entries) {
      for (let d = parentOf(entry); d !== null; d = parentOf(d)) merged.set(d, (merged.get(d) ?? 0) + 1);
    }
    let best: { dir: string; extra: number; merged: number } | null = null;
    for (const [dir, count] of merged) {
      if (count < 2) continue;
      const c = { dir, extra: extra.get(dir) ?? 0, merged: count };
      const better =
        best === null ||
        c.extra < best.extra ||
        (c.extra === best.extra &&
          (c.merged > best.merged || (c.merged === best.merged && compareUtf8(dir, best.dir) < 0)));
      if (better) best = c;
    }
    if (best === null) {
      throw invalid(
        `the ${coverage.length} covered paths need more than ${limit} exposure prefixes (too many files at the root)`,
        `cover at most ${limit} files at the workspace root, or split the review into several checks`,
      );
    }
    const { dir } = best;
    entries = [...entries.filter((e) => !isRelativePathWithin(dir, e)), dir].sort(compareUtf8);
  }
  return entries;
}
