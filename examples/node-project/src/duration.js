/**
 * duration-kit: parse, format and compare human durations ("1h30m", "250ms", "2d 4h").
 * Values are whole milliseconds. No dependencies; runs on Node 20 and later.
 */

/** Milliseconds per unit, largest first (the order formatDuration prints them in). */
export const UNITS = Object.freeze([
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
]);

const UNIT_MS = new Map(UNITS);
/** The longest input parseDuration reads: a bound, so hostile input costs nothing. */
export const MAX_INPUT_LENGTH = 64;
const PART = /(\d+(?:\.\d+)?)\s*(ms|d|h|m|s)/gy;

/** A duration string that cannot be read; `input` is what was given. */
export class DurationError extends Error {
  constructor(message, input) {
    super(message);
    this.name = 'DurationError';
    this.input = input;
  }
}

/**
 * Parse "1h30m", "90s", "1.5h" or "2d 4h" into milliseconds. Units appear at most once and
 * largest first; a bare number is refused (the unit is never guessed).
 */
export function parseDuration(input) {
  if (typeof input !== 'string') throw new DurationError('a duration must be a string', input);
  const text = input.trim();
  if (text.length === 0) throw new DurationError('a duration must not be empty', input);
  if (text.length > MAX_INPUT_LENGTH) {
    throw new DurationError(`a duration is at most ${MAX_INPUT_LENGTH} characters`, input);
  }
  let total = 0;
  let previous = Infinity;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const start = PART.lastIndex;
    const match = PART.exec(text);
    if (match === null) throw new DurationError(`unexpected text at position ${start}: ${text.slice(start)}`, input);
    const unit = UNIT_MS.get(match[2]);
    if (unit >= previous) throw new DurationError(`unit ${match[2]} is repeated or out of order`, input);
    previous = unit;
    total += Number(match[1]) * unit;
    while (text[PART.lastIndex] === ' ') PART.lastIndex += 1;
  }
  if (!Number.isInteger(total)) throw new DurationError('a duration must be a whole number of ms', input);
  if (!Number.isSafeInteger(total)) throw new DurationError('a duration is too large', input);
  return total;
}

/** Format milliseconds as the shortest exact string parseDuration reads back: 5400000 → "1h30m". */
export function formatDuration(ms) {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new RangeError(`expected a whole, non-negative number of ms, got ${ms}`);
  }
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const [unit, size] of UNITS) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}

/** Compare two durations (strings or ms) for sorting: negative, zero or positive. */
export function compareDurations(a, b) {
  const left = typeof a === 'number' ? a : parseDuration(a);
  const right = typeof b === 'number' ? b : parseDuration(b);
  return Math.sign(left - right);
}

/** The sum of several durations (strings or ms), as milliseconds. */
export function sumDurations(values) {
  let total = 0;
  for (const value of values) total += typeof value === 'number' ? value : parseDuration(value);
  return total;
}
