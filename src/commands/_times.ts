/**
 * Human output beside raw milliseconds: every `*_at_ms` member of a JSON document is an instant
 * in Unix milliseconds (a lease expiry, a creation time); people read ISO 8601, programs read the
 * exact integer, so human output shows both and --json keeps only the integer.
 */
import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';

/** Largest instant a JavaScript Date holds (ECMAScript: ±8.64e15 ms around the epoch). */
const MAX_DATE_MS = 8_640_000_000_000_000n;

/** `1764555555000` → `2025-12-01T02:19:15.000Z`; an instant no Date can hold is said to be so. */
export function isoOfMs(ms: bigint | number): string {
  const value = BigInt(ms);
  return value <= MAX_DATE_MS ? new Date(Number(value)).toISOString() : 'beyond the representable date range';
}

/** One line `PATH MS (ISO)` per `*_at_ms` integer of `value`, in document order. */
export function instantLines(value: JsonValue, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => instantLines(item, `${path}[${index}]`));
  if (!isJsonObject(value)) return [];
  const lines: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    const memberPath = path === '' ? key : `${path}.${key}`;
    if (
      key.endsWith('_at_ms') &&
      (typeof member === 'bigint' || (typeof member === 'number' && Number.isSafeInteger(member) && member >= 0))
    ) {
      lines.push(`${memberPath} ${String(member)} (${isoOfMs(member)})`);
    } else {
      lines.push(...instantLines(member, memberPath));
    }
  }
  return lines;
}
