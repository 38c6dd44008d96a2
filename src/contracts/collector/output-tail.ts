/**
 * The `command_output_tail` record of a command transfer (docs/collector-transfer.md "The
 * command_output_tail record"): the last bytes of the command's stdout and stderr, a diagnostic
 * signed with the transfer. It never changes an outcome, a qualification or an admission; the
 * import checks only that it is well formed and that its byte counts are the ExecutionRecord's.
 * Also the bounded text an answer shows of it (at most 40 lines and 4 KiB per failure). Pure.
 */
import { AgentscmError } from '../errors.js';
import { encodeCanonical } from '../json/canonical-json.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import { parseStrictJson } from '../json/strict-json.js';

export const OUTPUT_TAIL_LIMITS = {
  /** The most raw bytes of one stream a tail covers. */
  maxTailBytes: 16_384,
  /** The most bytes the encoded record may hold. */
  maxRecordBytes: 48 * 1024,
  /** What an answer shows of one failure's tail: at most this many lines… */
  shownLines: 40,
  /** …and this many UTF-8 bytes, both streams together. */
  shownBytes: 4096,
  /** The most tail text one qualification answer carries, all failures together. */
  answerBytes: 16_384,
} as const;

export const OUTPUT_TAIL_KIND = 'command_output_tail';

export interface StreamTail {
  /** The stream's full byte count (the ExecutionRecord's observed_bytes). */
  readonly bytes: bigint;
  /** How many of the stream's last raw bytes `tail` covers. */
  readonly tail_bytes: bigint;
  readonly tail: string;
}

export interface CommandOutputTail {
  readonly version: 1;
  readonly kind: typeof OUTPUT_TAIL_KIND;
  readonly stdout: StreamTail;
  readonly stderr: StreamTail;
}

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/**
 * Decode the last raw bytes of a stream: when they start inside a UTF-8 sequence (the stream has
 * more bytes before them), its continuation bytes are dropped; invalid sequences become U+FFFD.
 */
export function decodeTailBytes(raw: Uint8Array, cut: boolean): string {
  let start = 0;
  if (cut) while (start < 3 && start < raw.byteLength && ((raw[start] ?? 0) & 0xc0) === 0x80) start += 1;
  return decoder.decode(raw.subarray(start));
}

function streamTail(raw: Uint8Array, total: number): StreamTail {
  const take = Math.min(raw.byteLength, OUTPUT_TAIL_LIMITS.maxTailBytes, total);
  const last = raw.subarray(raw.byteLength - take);
  return { bytes: BigInt(total), tail_bytes: BigInt(take), tail: decodeTailBytes(last, take < total) };
}

function streamJson(stream: StreamTail): JsonObject {
  return { bytes: stream.bytes, tail_bytes: stream.tail_bytes, tail: stream.tail };
}

export function outputTailToJson(tail: CommandOutputTail): JsonObject {
  return { version: 1, kind: OUTPUT_TAIL_KIND, stdout: streamJson(tail.stdout), stderr: streamJson(tail.stderr) };
}

export function encodeOutputTail(tail: CommandOutputTail): Buffer {
  return encodeCanonical(outputTailToJson(tail));
}

/**
 * The record of one run: `stdout` and `stderr` are the last raw bytes the collector kept of each
 * stream (at least the last 16 KiB), the totals the ExecutionRecord's observed counts. A tail whose
 * JSON escapes would pass 48 KiB is shortened from its start until the record fits.
 */
export function buildOutputTail(
  stdout: { readonly last: Uint8Array; readonly total: number },
  stderr: { readonly last: Uint8Array; readonly total: number },
): CommandOutputTail {
  let out = stdout.last.subarray(Math.max(0, stdout.last.byteLength - OUTPUT_TAIL_LIMITS.maxTailBytes));
  let err = stderr.last.subarray(Math.max(0, stderr.last.byteLength - OUTPUT_TAIL_LIMITS.maxTailBytes));
  for (;;) {
    const tail: CommandOutputTail = {
      version: 1,
      kind: OUTPUT_TAIL_KIND,
      stdout: streamTail(out, stdout.total),
      stderr: streamTail(err, stderr.total),
    };
    if (encodeOutputTail(tail).byteLength <= OUTPUT_TAIL_LIMITS.maxRecordBytes) return tail;
    // Shorten the longer tail by a quarter; both reach zero long before the loop could not end.
    if (out.byteLength >= err.byteLength) out = out.subarray(Math.ceil(out.byteLength / 4));
    else err = err.subarray(Math.ceil(err.byteLength / 4));
  }
}

function invalid(message: string, field: string, limit?: number): never {
  throw new AgentscmError('IMPORT_RECORD_INVALID', message, {
    hint: 'the collector must send the command_output_tail record it built, unchanged',
    details: limit === undefined ? { field } : { field, limit },
  });
}

function closed(value: JsonValue | undefined, fields: readonly string[], at: string): JsonObject {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value))
    invalid(`the command_output_tail member ${JSON.stringify(at)} is not an object`, at);
  for (const key of Object.keys(value))
    if (!fields.includes(key))
      invalid(`the command_output_tail member ${JSON.stringify(`${at}.${key}`)} is not a member`, `${at}.${key}`);
  for (const key of fields)
    if (!Object.hasOwn(value, key))
      invalid(`the command_output_tail member ${JSON.stringify(`${at}.${key}`)} is missing`, `${at}.${key}`);
  return value;
}

function u64(value: JsonValue | undefined, field: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return invalid(`the command_output_tail member ${field} is not an unsigned integer`, field);
}

function decodeStream(value: JsonValue | undefined, name: 'stdout' | 'stderr'): StreamTail {
  const object = closed(value, ['bytes', 'tail_bytes', 'tail'], `command_output_tail.${name}`);
  const at = `command_output_tail.${name}`;
  const bytes = u64(object.bytes, `${at}.bytes`);
  const tailBytes = u64(object.tail_bytes, `${at}.tail_bytes`);
  if (tailBytes > BigInt(OUTPUT_TAIL_LIMITS.maxTailBytes))
    invalid(
      `the ${name} tail covers ${tailBytes} bytes, more than ${OUTPUT_TAIL_LIMITS.maxTailBytes}`,
      `${at}.tail_bytes`,
      OUTPUT_TAIL_LIMITS.maxTailBytes,
    );
  if (tailBytes > bytes)
    invalid(`the ${name} tail covers ${tailBytes} bytes of a ${bytes}-byte stream`, `${at}.tail_bytes`);
  const tail = object.tail;
  // Each raw byte decodes to at most one UTF-16 code unit (a 4-byte sequence to two).
  if (typeof tail !== 'string' || BigInt(tail.length) > tailBytes)
    invalid(`the ${name} tail is not text decoded from its ${tailBytes} bytes`, `${at}.tail`);
  return { bytes, tail_bytes: tailBytes, tail };
}

/**
 * Decode a command_output_tail record strictly (IMPORT_RECORD_INVALID with the member in
 * details.field): at most 48 KiB, strict JSON in its canonical encoding, exactly the declared
 * members, each tail at most 16384 bytes and at most its stream.
 */
export function decodeOutputTail(bytes: Uint8Array): CommandOutputTail {
  if (bytes.byteLength > OUTPUT_TAIL_LIMITS.maxRecordBytes)
    invalid(
      `the command_output_tail record holds ${bytes.byteLength} bytes, more than ${OUTPUT_TAIL_LIMITS.maxRecordBytes}`,
      'command_output_tail',
      OUTPUT_TAIL_LIMITS.maxRecordBytes,
    );
  let value: JsonValue;
  try {
    value = parseStrictJson(bytes, { maxBytes: bytes.byteLength });
  } catch {
    return invalid('the command_output_tail record is not strict JSON', 'command_output_tail');
  }
  const object = closed(value, ['version', 'kind', 'stdout', 'stderr'], 'command_output_tail');
  if (object.version !== 1 && object.version !== 1n)
    invalid('the command_output_tail version is not 1', 'command_output_tail.version');
  if (object.kind !== OUTPUT_TAIL_KIND)
    invalid(`the command_output_tail kind is not ${OUTPUT_TAIL_KIND}`, 'command_output_tail.kind');
  const tail: CommandOutputTail = {
    version: 1,
    kind: OUTPUT_TAIL_KIND,
    stdout: decodeStream(object.stdout, 'stdout'),
    stderr: decodeStream(object.stderr, 'stderr'),
  };
  if (!encodeOutputTail(tail).equals(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)))
    invalid('the command_output_tail record is not its canonical encoding', 'command_output_tail');
  return tail;
}

/**
 * The tail's byte counts must be the ExecutionRecord's observed counts of the same streams
 * (IMPORT_RECORD_INVALID, field `command_output_tail.STREAM.bytes`).
 */
export function checkOutputTailCounts(tail: CommandOutputTail, observed: { stdout: bigint; stderr: bigint }): void {
  for (const name of ['stdout', 'stderr'] as const) {
    if (tail[name].bytes !== observed[name])
      invalid(
        `the command_output_tail counts ${tail[name].bytes} ${name} bytes; the ExecutionRecord observed ` +
          `${observed[name]}`,
        `command_output_tail.${name}.bytes`,
      );
  }
}

/** What an answer shows of a tail: the last lines of each stream, control characters made visible. */
export interface ShownOutputTail {
  readonly stdout: string;
  readonly stderr: string;
  /** True when lines or bytes of the retained tail were left out. */
  readonly truncated: boolean;
}

/** Control characters other than newline and tab as visible `\xNN` / `\u{NNNN}` text. */
export function escapeControls(text: string): string {
  const out: string[] = [];
  for (const c of text.replace(/\r\n/g, '\n')) {
    const code = c.codePointAt(0) ?? 0;
    const control = (code < 0x20 && c !== '\n' && c !== '\t') || (code >= 0x7f && code <= 0x9f) || code === 0x2028;
    if (!control && code !== 0x2029) out.push(c);
    else out.push(code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`);
  }
  return out.join('');
}

/** The last lines of `text` within `lines` lines and `bytes` UTF-8 bytes (whole lines, else a line's end). */
function lastLines(text: string, lines: number, bytes: number): { text: string; cut: boolean } {
  const all = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  if (text === '') return { text: '', cut: false };
  const kept: string[] = [];
  let used = 0;
  for (let i = all.length - 1; i >= 0 && kept.length < lines; i -= 1) {
    const line = all[i] ?? '';
    const size = Buffer.byteLength(line, 'utf8') + (kept.length > 0 ? 1 : 0);
    if (used + size > bytes) {
      if (kept.length === 0) {
        // One line longer than the budget: its end, cut at a character boundary.
        const chars = Array.from(line);
        let end = '';
        for (let j = chars.length - 1; j >= 0; j -= 1) {
          const next = (chars[j] ?? '') + end;
          if (Buffer.byteLength(next, 'utf8') > bytes) break;
          end = next;
        }
        kept.unshift(end);
      }
      break;
    }
    kept.unshift(line);
    used += size;
  }
  const joined = kept.join('\n');
  return { text: joined, cut: kept.length < all.length || joined.length < (all.at(-1) ?? '').length };
}

/**
 * The shown form of a tail within `maxBytes` (at most 4 KiB) and 40 lines, both streams together:
 * stderr keeps at least half of each budget when it needs it, stdout the rest.
 */
export function showOutputTail(
  tail: CommandOutputTail,
  maxBytes: number = OUTPUT_TAIL_LIMITS.shownBytes,
): ShownOutputTail {
  const bytes = Math.min(maxBytes, OUTPUT_TAIL_LIMITS.shownBytes);
  const lines = OUTPUT_TAIL_LIMITS.shownLines;
  const out = escapeControls(tail.stdout.tail);
  const err = escapeControls(tail.stderr.tail);
  const outAll = lastLines(out, lines, bytes);
  const outLines = outAll.text === '' ? 0 : outAll.text.split('\n').length;
  const errLines = Math.max(Math.floor(lines / 2), lines - outLines);
  const errBytes = Math.max(Math.floor(bytes / 2), bytes - Buffer.byteLength(outAll.text, 'utf8'));
  const errShown = lastLines(err, errLines, errBytes);
  const usedLines = errShown.text === '' ? 0 : errShown.text.split('\n').length;
  const outShown = lastLines(out, lines - usedLines, bytes - Buffer.byteLength(errShown.text, 'utf8'));
  const cutBefore = tail.stdout.tail_bytes < tail.stdout.bytes || tail.stderr.tail_bytes < tail.stderr.bytes;
  return { stdout: outShown.text, stderr: errShown.text, truncated: cutBefore || outShown.cut || errShown.cut };
}

/** Per stream, whether a shown tail leaves earlier output of that stream out. */
export interface ShownStreamCuts {
  readonly stdout: boolean;
  readonly stderr: boolean;
}

/**
 * Which streams of `shown` (showOutputTail of `tail`) start after the stream's first byte: the record
 * kept only the stream's last bytes (tail_bytes < bytes), or showing it left lines or bytes out.
 */
export function shownStreamCuts(tail: CommandOutputTail, shown: ShownOutputTail): ShownStreamCuts {
  const cut = (name: 'stdout' | 'stderr'): boolean => {
    const whole = escapeControls(tail[name].tail);
    const full = whole.endsWith('\n') ? whole.slice(0, -1) : whole;
    return tail[name].tail_bytes < tail[name].bytes || shown[name].length < full.length;
  };
  return { stdout: cut('stdout'), stderr: cut('stderr') };
}

/** What a collection shows of its output: the bounded tail and each stream's cut, or nulls. */
export interface ShownCollectionTail {
  readonly output_tail: ShownOutputTail | null;
  readonly output_tail_cut: ShownStreamCuts | null;
}

/**
 * The shown output tail of a transfer's records for a collection with this outcome: nulls when it
 * passed or carries no command_output_tail record, else the tail bounded by showOutputTail and its
 * per-stream cuts (collect's output and the dashboard's task view show the same).
 */
export function shownCollectionTail(
  records: readonly { readonly kind: string; readonly bytes: Uint8Array }[],
  outcome: string,
): ShownCollectionTail {
  const entry = records.find((record) => record.kind === 'command_output_tail');
  const tail = entry === undefined || outcome === 'passed' ? null : decodeOutputTail(entry.bytes);
  const shown = tail === null ? null : showOutputTail(tail);
  return { output_tail: shown, output_tail_cut: tail === null || shown === null ? null : shownStreamCuts(tail, shown) };
}
