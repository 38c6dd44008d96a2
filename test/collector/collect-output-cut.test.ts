/**
 * `collect`'s human output labels each stream of the output tail by its own cut: a stream whose
 * record kept only its last bytes (tail_bytes < bytes) says "(earlier output left out)", the other
 * stream does not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { CollectResult } from '../../src/collector/collect-upload.js';
import { printCollectResult } from '../../src/commands/agent-task/_collect-output.js';
import {
  buildOutputTail,
  OUTPUT_TAIL_LIMITS,
  shownStreamCuts,
  showOutputTail,
} from '../../src/contracts/collector/output-tail.js';

function resultOf(stdout: string, stderr: string, stdoutTotal?: number): CollectResult {
  const out = Buffer.from(stdout);
  const err = Buffer.from(stderr);
  const tail = buildOutputTail(
    { last: out, total: stdoutTotal ?? out.byteLength },
    { last: err, total: err.byteLength },
  );
  const shown = showOutputTail(tail);
  return {
    upload_request_id: 'u1',
    ran: true,
    task_id: 't1',
    attempt_id: 'a1',
    outcome: 'failed',
    exit_code: 1,
    output_tail: shown,
    output_tail_cut: shownStreamCuts(tail, shown),
    transfer_digest: 'd'.repeat(64),
    envelope_bytes: 10,
    envelope_file: '/tmp/x',
    upload: { target: 'local', answer: {} },
  } as unknown as CollectResult;
}

function printed(result: CollectResult): string[] {
  const lines: string[] = [];
  printCollectResult((line) => lines.push(line), result);
  return lines;
}

test('only the stream whose head was left out is labelled', () => {
  // stdout: 100 bytes written, the record kept the last 20; stderr whole.
  const lines = printed(resultOf('line-a\nline-b\nline-c\n', 'boom\n', 100));
  assert.ok(lines.includes('stdout, last lines (earlier output left out):'), lines.join('\n'));
  assert.ok(lines.includes('stderr, last lines:'), lines.join('\n'));
  assert.ok(lines.includes('  | boom'));
});

test('a stream cut only by the 40-line bound is labelled; a whole one at the bound is not', () => {
  const lines = (n: number): string => Array.from({ length: n }, (_, i) => `l${i}`).join('\n') + '\n';
  const atBound = printed(resultOf('', lines(OUTPUT_TAIL_LIMITS.shownLines)));
  assert.ok(atBound.includes('stderr, last lines:'), atBound.join('\n'));
  assert.equal(atBound.filter((l) => l.startsWith('  | ')).length, OUTPUT_TAIL_LIMITS.shownLines);
  const past = printed(resultOf('', lines(OUTPUT_TAIL_LIMITS.shownLines + 1)));
  assert.ok(past.includes('stderr, last lines (earlier output left out):'), past.join('\n'));
  assert.ok(!past.includes('  | l0'));
  assert.ok(past.includes(`  | l${OUTPUT_TAIL_LIMITS.shownLines}`));
});

test('neither stream cut: no label on either', () => {
  const lines = printed(resultOf('out\n', 'err\n'));
  assert.ok(lines.includes('stdout, last lines:'));
  assert.ok(lines.includes('stderr, last lines:'));
});
