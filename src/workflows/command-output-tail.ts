/**
 * The output tail of a command step that did not pass (docs/skill-workflows.md "Status view"): the
 * last lines of its stdout and stderr, bounded and escaped as qualification shows a collected
 * command's tail (40 lines, 4 KiB, src/contracts/collector/output-tail.ts). A stream's last bytes
 * are its retained head when that is the whole stream, else those kept past the output bound
 * (command_attempt_output_tails); a stream cut before that table existed shows nothing. Read only.
 */
import {
  buildOutputTail,
  shownStreamCuts,
  showOutputTail,
  type ShownOutputTail,
  type ShownStreamCuts,
} from '../contracts/collector/output-tail.js';
import { isJsonObject } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import type { SqliteDatabase } from '../native/sqlite.js';
import { getCommandAttempt, getCommandAttemptOutput, type CommandAttemptSummary } from './command-attempts.js';

export interface StepOutputTail {
  readonly output_tail: ShownOutputTail;
  readonly output_tail_cut: ShownStreamCuts;
}

const RECORD_MAX = 4 * 1024 * 1024;

function observedBytes(record: Buffer, name: 'stdout' | 'stderr'): number | null {
  const value = parseStrictJson(record, { maxBytes: RECORD_MAX });
  const stream = isJsonObject(value) ? value[name] : undefined;
  const observed = isJsonObject(stream) ? stream.observed_bytes : undefined;
  if (typeof observed === 'number') return observed;
  if (typeof observed === 'bigint') return Number(observed);
  return null;
}

/** The shown tail of a finished attempt whose outcome is not passed; null otherwise (call in a read snapshot). */
export function attemptOutputTail(db: SqliteDatabase, summary: CommandAttemptSummary): StepOutputTail | null {
  if (summary.record_digest === null || summary.outcome === null || summary.outcome === 'passed') return null;
  const record = getCommandAttempt(db, summary.attempt_id).record_json;
  if (record === null) return null;
  const attempt = { attempt_id: summary.attempt_id, record_json: record };
  const heads = getCommandAttemptOutput(db, attempt.attempt_id);
  const kept = db
    .prepare('SELECT stream, bytes FROM command_attempt_output_tails WHERE attempt_id = ?')
    .all(attempt.attempt_id) as { stream: string; bytes: Buffer }[];
  const source = (name: 'stdout' | 'stderr'): { last: Uint8Array; total: number } => {
    const head = heads[name];
    const total = observedBytes(attempt.record_json, name) ?? head.length;
    const last = kept.find((row) => row.stream === name)?.bytes;
    if (last !== undefined) return { last, total: Math.max(total, last.length) };
    // Without a kept tail, only a head that is the whole stream is its end.
    return head.length >= total ? { last: head, total: head.length } : { last: Buffer.alloc(0), total };
  };
  const tail = buildOutputTail(source('stdout'), source('stderr'));
  const shown = showOutputTail(tail);
  if (shown.stdout === '' && shown.stderr === '') return null;
  return { output_tail: shown, output_tail_cut: shownStreamCuts(tail, shown) };
}
