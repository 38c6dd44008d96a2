/**
 * Demultiplexing of the attach stream and the output bound: frames split anywhere, stdout and
 * stderr kept apart, exactly `limit` bytes retained together, truncation reported once.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import test from 'node:test';
import fc from 'fast-check';

import { OutputCapture } from '../../src/collector/output-capture.js';

function frame(stream: 1 | 2, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

test('frames split at every byte boundary reassemble into the right streams', () => {
  const raw = Buffer.concat([
    frame(1, Buffer.from('out-1\n')),
    frame(2, Buffer.from('err\n')),
    frame(1, Buffer.from('out-2\n')),
  ]);
  for (let cut = 0; cut <= raw.length; cut++) {
    const capture = new OutputCapture(1024);
    capture.push(raw.subarray(0, cut));
    capture.push(raw.subarray(cut));
    assert.equal(capture.stdout.bytes.toString(), 'out-1\nout-2\n');
    assert.equal(capture.stderr.bytes.toString(), 'err\n');
    assert.equal(capture.exceeded, false);
  }
});

test('output exactly at the bound is kept whole; one byte more is cut and reported once', () => {
  const atBound = new OutputCapture(10);
  assert.equal(atBound.push(frame(1, Buffer.from('0123456789'))), false);
  assert.equal(atBound.stdout.truncated, false);
  assert.equal(atBound.stdout.bytes.length, 10);

  const past = new OutputCapture(10);
  assert.equal(past.push(frame(1, Buffer.from('01234'))), false);
  assert.equal(past.push(frame(2, Buffer.from('567890'))), true, 'the crossing is reported');
  assert.equal(past.push(frame(2, Buffer.from('more'))), false, 'and only once');
  assert.equal(past.stdout.bytes.toString(), '01234');
  assert.equal(past.stderr.bytes.toString(), '56789');
  assert.equal(past.stderr.truncated, true);
  assert.equal(past.stderr.observedBytes, 10);
  assert.equal(past.stderr.sha256, createHash('sha256').update('56789').digest('hex'));
});

test('a zero bound keeps nothing and reports any output', () => {
  const capture = new OutputCapture(0);
  assert.equal(capture.push(frame(1, Buffer.from('x'))), true);
  assert.equal(capture.stdout.bytes.length, 0);
  assert.equal(capture.stdout.observedBytes, 1);
});

test('property: retained = prefix of each stream in arrival order, total never above the bound', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom<1 | 2>(1, 2), fc.uint8Array({ maxLength: 40 })), { maxLength: 20 }),
      fc.nat(200),
      fc.array(fc.nat(50), { maxLength: 10 }),
      (frames, limit, cuts) => {
        const raw = Buffer.concat(frames.map(([s, b]) => frame(s, Buffer.from(b))));
        const capture = new OutputCapture(limit);
        let offset = 0;
        for (const cut of cuts) {
          capture.push(raw.subarray(offset, offset + cut));
          offset = Math.min(raw.length, offset + cut);
        }
        capture.push(raw.subarray(offset));
        let room = limit;
        const expected: [Buffer[], Buffer[]] = [[], []];
        for (const [s, b] of frames) {
          const keep = Buffer.from(b).subarray(0, room);
          room -= keep.length;
          (s === 1 ? expected[0] : expected[1]).push(keep);
        }
        assert.deepEqual(capture.stdout.bytes, Buffer.concat(expected[0]));
        assert.deepEqual(capture.stderr.bytes, Buffer.concat(expected[1]));
        const total = frames.reduce((n, [, b]) => n + b.length, 0);
        assert.equal(capture.exceeded, total > limit);
      },
    ),
  );
});
