/**
 * Text from the command line or from input shown inside an error message (docs/wire.md "CLI
 * conventions": one stderr line per error). A path or name is shown as a JSON string, the way
 * identifiers are, so a newline, escape sequence or other control character in it can neither
 * split the line nor reach the terminal raw; nor can a bidirectional override reorder it.
 */
import { unicodeEscape, unsafeTextPattern } from './display-text.js';

/**
 * Every control character (C0, DEL and C1), the line and paragraph separators, and the
 * bidirectional formatting characters that reorder what a terminal shows (display-text.ts).
 */
const CONTROL = unsafeTextPattern();
const escapeUnit = unicodeEscape;

/** `value` as a quoted JSON string, cut after `maxChars` characters (with "…" and the length). */
export function quoteForMessage(value: string, maxChars = 200): string {
  const cut = value.length > maxChars;
  // JSON.stringify escapes C0; DEL, C1, the separators and the bidi characters it leaves raw are escaped here.
  const quoted = JSON.stringify(cut ? value.slice(0, maxChars) : value).replace(CONTROL, escapeUnit);
  return cut ? `${quoted}… (${value.length} characters)` : quoted;
}

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A message made safe to print as one line: every control character (C0, DEL, C1, the Unicode
 * line and paragraph separators) and bidirectional formatting character becomes its escape. The
 * last guard of the one-line contract for text that reached a message without quoteForMessage.
 */
export function oneLine(text: string): string {
  return text.replace(CONTROL, (c) => SHORT[c] ?? escapeUnit(c));
}
