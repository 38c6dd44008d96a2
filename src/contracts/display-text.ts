/**
 * Recorded text as a person reads it (docs/workspace.md "Names shown to people"; issue #25 item
 * 6). Workspace paths are recorded byte-exact, and any valid UTF-8 is a path: a name can hold
 * characters that reorder or hide what a terminal, a browser or an agent's transcript shows —
 * `src/evil` U+202E `sj.exe` reads as `src/evilexe.js`. Every human-facing output (command
 * terminal text, the dashboard, Stop hook feedback) shows such text through displayText: each
 * unsafe character escaped as `\uXXXX` and the whole text marked with `[!]` in front. JSON output
 * stays exact: it is machine output.
 *
 * Unsafe characters:
 * - every control character (Unicode category Cc): C0 U+0000–U+001F, DEL U+007F, C1
 *   U+0080–U+009F — terminal control sequences, line breaks, tabs;
 * - the bidirectional formatting characters: embeddings and overrides U+202A–U+202E, isolates
 *   U+2066–U+2069, and the implicit marks U+200E, U+200F and U+061C (a mark changes the
 *   direction of neutral characters such as `.` and `/` around it);
 * - the line and paragraph separators U+2028 and U+2029 (line breaks for some renderers).
 *
 * Zero-width characters that only join or separate (U+200B–U+200D, U+2060, U+FEFF) are shown as
 * they are: they reorder nothing, and ZWJ/ZWNJ are part of ordinary text in several scripts.
 *
 * In a marked text a backslash is doubled, so the shown form is unambiguous: `\u202e` in a
 * marked text is the escape, `\\u202e` six characters of the name. Unmarked text is shown as it
 * is. This module does no I/O: the commands, the hooks and the dashboard's browser bundle all
 * import it.
 */

/** Put in front of a text shown with escapes. */
export const UNSAFE_TEXT_MARKER = '[!]';

const UNSAFE_SOURCE =
  '[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]';
const UNSAFE_TEST = new RegExp(UNSAFE_SOURCE);
const UNSAFE_OR_BACKSLASH = new RegExp(`${UNSAFE_SOURCE}|\\\\`, 'g');

/** The escape of one unsafe character: `\u` and four lowercase hex digits. */
export function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** True when `text` holds a character that must not reach a reader raw (see the module comment). */
export function hasUnsafeText(text: string): boolean {
  return UNSAFE_TEST.test(text);
}

/** A global pattern of the unsafe characters, for escaping inside other formats (message-text.ts). */
export function unsafeTextPattern(): RegExp {
  return new RegExp(UNSAFE_SOURCE, 'g');
}

/**
 * `text` as shown to a person: unchanged when it holds no unsafe character; otherwise
 * `[!]` followed by the text with every unsafe character as `\uXXXX` and every backslash doubled.
 */
export function displayText(text: string): string {
  if (!hasUnsafeText(text)) return text;
  return UNSAFE_TEXT_MARKER + text.replace(UNSAFE_OR_BACKSLASH, (c) => (c === '\\' ? '\\\\' : unicodeEscape(c)));
}

/**
 * Several lines of human output at once (the last guard of a printer; a command's output tail):
 * the line breaks between lines and tabs inside them are layout and kept; a line with any other
 * unsafe character goes through displayText as a whole. A text already shown through
 * displayText is left as it is.
 */
export function displayLines(text: string): string {
  if (!hasUnsafeText(text)) return text;
  return text
    .split('\n')
    .map((line) => (hasUnsafeText(line.replaceAll('\t', ' ')) ? displayText(line) : line))
    .join('\n');
}

/**
 * A JSON text printed for people (a command's human output that is a JSON document): every
 * unsafe character inside it — only strings can hold one — as its JSON escape `\uXXXX`, the
 * structural line breaks kept. The text stays the same JSON value, so it is not marked: the
 * escape itself shows where the character was.
 */
export function displayJsonText(json: string): string {
  if (!hasUnsafeText(json)) return json;
  return json
    .split('\n')
    .map((line) => line.replace(unsafeTextPattern(), unicodeEscape))
    .join('\n');
}

/**
 * Human output of a printer: a JSON document (it starts with `{` or `[`) through displayJsonText, any other text
 * through displayLines.
 */
export function displayOutput(text: string): string {
  if (!hasUnsafeText(text)) return text;
  const first = text.trimStart()[0];
  return first === '{' || first === '[' ? displayJsonText(text) : displayLines(text);
}

/** Of `paths`, those that would be shown marked, in their order (at most `limit`), and how many there are in all. */
export function unsafeNames(paths: Iterable<string>, limit = 32): { readonly count: number; readonly paths: string[] } {
  const found: string[] = [];
  let count = 0;
  for (const path of paths) {
    if (!hasUnsafeText(path)) continue;
    count += 1;
    if (found.length < limit) found.push(path);
  }
  return { count, paths: found };
}
