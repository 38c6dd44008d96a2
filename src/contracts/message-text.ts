/**
 * Text from the command line or from input shown inside an error message (docs/wire.md "CLI
 * conventions": one stderr line per error). A path or name is shown as a JSON string, the way
 * identifiers are, so a newline, escape sequence or other control character in it can neither
 * split the line nor reach the terminal raw.
 */

/** Every control character: C0, DEL and C1 (Unicode category Cc), and the line and paragraph separators. */
const CONTROL = /[\p{Cc}\u2028\u2029]/gu;

function escapeUnit(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `value` as a quoted JSON string, cut after `maxChars` characters (with "…" and the length). */
export function quoteForMessage(value: string, maxChars = 200): string {
  const cut = value.length > maxChars;
  // JSON.stringify escapes C0; DEL, C1 and the separators it leaves raw are escaped here.
  const quoted = JSON.stringify(cut ? value.slice(0, maxChars) : value).replace(CONTROL, escapeUnit);
  return cut ? `${quoted}… (${value.length} characters)` : quoted;
}

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A message made safe to print as one line: every control character (C0, DEL, C1, the Unicode
 * line and paragraph separators) becomes its escape. The last guard of the one-line contract
 * for text that reached a message without quoteForMessage.
 */
export function oneLine(text: string): string {
  return text.replace(CONTROL, (c) => SHORT[c] ?? escapeUnit(c));
}
