/**
 * The command_output_tail record (docs/collector-transfer.md "The command_output_tail record"): a
 * live failing command's tail is printed by collect, carried in the stored transfer and shown in
 * qualification's collector_not_passed failure; the import refuses a tail whose counts differ from
 * the ExecutionRecord or whose tail passes 16384 bytes; a passing command's tail changes nothing.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import {
  decodeOutputTail,
  encodeOutputTail,
  OUTPUT_TAIL_LIMITS,
  showOutputTail,
  type CommandOutputTail,
} from '../../src/contracts/collector/output-tail.js';
import {
  encodeTransferEnvelope,
  readTransferEnvelope,
  transferRecordEntry,
} from '../../src/contracts/collector/transfer.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { openAuthority } from '../../src/native/store.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { callWithTokenFile } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { requireEngine } from '../support/collector.js';
import { collectArgs, makeCollection } from '../support/evidence-collect.js';
import { authorization, claim, makeEvidence, transferParts, type Evidence } from '../support/evidence.js';
import { CHANGE_ID, PROFILE } from '../support/tasks.js';

function storedEnvelopes(dataDir: string): Buffer[] {
  const auth = openAuthority(dataDir, { mode: 'read' });
  try {
    return (
      auth.db.prepare('SELECT envelope FROM collector_transfers ORDER BY seq').all() as { envelope: Buffer }[]
    ).map((row) => row.envelope);
  } finally {
    auth.close();
  }
}

function tailOf(envelope: Buffer): CommandOutputTail {
  const entry = readTransferEnvelope(envelope).records.find((r) => r.kind === 'command_output_tail');
  assert.ok(entry !== undefined, 'the transfer carries a command_output_tail record');
  return decodeOutputTail(entry.bytes);
}

test('a failing command: collect prints its tail, the stored transfer carries it, qualification shows it', async (t) => {
  await requireEngine();
  const script = 'i=1; while [ $i -le 100 ]; do echo "line $i"; i=$((i+1)); done; echo "boom: it broke" >&2; exit 1';
  const c = await makeCollection(t, { argv: ['sh', '-c', script] });
  const run = await runCli(collectArgs(c));
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /verdict is failed \(exit 1\)/);
  assert.match(run.stdout, /stderr, last lines[^\n]*:\n {2}\| boom: it broke/);
  assert.match(run.stdout, /stdout, last lines \(earlier output left out\):/);
  assert.match(run.stdout, /\| line 100\n/);
  assert.doesNotMatch(run.stdout, /\| line 60\n/);
  // The same envelope again (nothing runs): the --json document carries the shown tail.
  const again = jsonOf<{ output_tail: { stdout: string; stderr: string; truncated: boolean } }>(
    await runCli(collectArgs(c, ['--json'])),
  );
  assert.equal(again.output_tail.stderr, 'boom: it broke');
  const lines = again.output_tail.stdout.split('\n');
  assert.equal(lines.length, 39, 'stdout and stderr share 40 lines');
  assert.equal(lines.at(-1), 'line 100');
  assert.equal(again.output_tail.truncated, true);
  // The authority stores the transfer with the record; its counts are the ExecutionRecord's.
  const [envelope] = storedEnvelopes(c.dataDir);
  assert.ok(envelope !== undefined);
  const read = readTransferEnvelope(envelope);
  assert.deepEqual(
    read.header.records.map((r) => r.kind),
    ['execution_request', 'execution_record', 'command_output_tail'],
  );
  const tail = tailOf(envelope);
  let expected = '';
  for (let i = 1; i <= 100; i += 1) expected += `line ${i}\n`;
  assert.equal(tail.stdout.bytes, BigInt(expected.length));
  assert.equal(tail.stdout.tail, expected);
  assert.equal(tail.stderr.tail, 'boom: it broke\n');
  const record = JSON.parse(Buffer.from(read.records[1]?.bytes ?? []).toString('utf8')) as JsonObject;
  assert.equal((record.stdout as JsonObject).observed_bytes, expected.length);
  // Qualification: the collector_not_passed failure carries the tail, bounded.
  const answer = callWithTokenFile({
    store: openStore(c.dataDir, { mode: 'read' }),
    tokenFile: c.tokenFile,
    operation: 'qualification',
    input: null,
    profile: PROFILE,
    target: 'main',
    subject: { change_id: CHANGE_ID, context_digest: c.store.contextDigest },
  }) as { qualified: boolean; failures: { code: string; output_tail?: { stdout: string; stderr: string } }[] };
  assert.equal(answer.qualified, false);
  const failure = answer.failures.find((f) => f.code === 'collector_not_passed');
  assert.ok(failure?.output_tail !== undefined, JSON.stringify(answer));
  assert.equal(failure.output_tail.stderr, 'boom: it broke');
  assert.match(failure.output_tail.stdout, /line 100$/);
});

function importAs(ev: Evidence, envelope: Uint8Array): JsonObject {
  return withStore(ev.store.dataDir, 'write', (held) => importCollectorTransfer(held, envelope, authorization(ev)));
}

function countTransfers(ev: Evidence): number {
  const auth = openAuthority(ev.store.dataDir, { mode: 'read' });
  try {
    return (auth.db.prepare('SELECT count(*) AS n FROM collector_transfers').get() as { n: number }).n;
  } finally {
    auth.close();
  }
}

/** The transfer of `ev`'s claim with a tail record, signed with the enrolled collector key. */
function envelopeWithTail(ev: Evidence, tail: JsonObject, record?: (r: JsonObject) => void): Buffer {
  const parts = transferParts(claim(ev));
  record?.(parts.record);
  const bytes = [encodeCanonical(parts.request), encodeCanonical(parts.record), encodeCanonical(tail)];
  return encodeTransferEnvelope(
    {
      ...parts.header,
      records: [
        transferRecordEntry('execution_request', bytes[0] as Buffer),
        transferRecordEntry('execution_record', bytes[1] as Buffer),
        transferRecordEntry('command_output_tail', bytes[2] as Buffer),
      ],
    },
    bytes,
    ev.key.privateKey,
  );
}

function tailJson(stdout: { bytes: number; tail_bytes: number; tail: string }): JsonObject {
  return {
    version: 1,
    kind: 'command_output_tail',
    stdout: { bytes: stdout.bytes, tail_bytes: stdout.tail_bytes, tail: stdout.tail },
    stderr: { bytes: 0, tail_bytes: 0, tail: '' },
  };
}

test('a passing command with its tail imports as passed; a tail whose byte count differs from the record is refused, nothing stored', (t) => {
  const ev = makeEvidence(t);
  // transferParts' record observes 3 stdout bytes and 0 stderr bytes.
  const good = importAs(ev, envelopeWithTail(ev, tailJson({ bytes: 3, tail_bytes: 3, tail: 'ok\n' })));
  assert.equal(good.outcome, 'passed');
  assert.equal(countTransfers(ev), 1);
  const ev2 = makeEvidence(t);
  const hostile = envelopeWithTail(ev2, tailJson({ bytes: 4, tail_bytes: 3, tail: 'ok\n' }));
  const error = codeOf(() => importAs(ev2, hostile));
  assert.equal(error, 'IMPORT_RECORD_INVALID');
  assert.equal(countTransfers(ev2), 0);
});

test('tail_bytes 16384 imports; 16385 is refused', (t) => {
  const big = 'x'.repeat(OUTPUT_TAIL_LIMITS.maxTailBytes);
  const at = makeEvidence(t);
  const setCount = (n: number) => (r: JsonObject) => {
    r.stdout = { ...(r.stdout as JsonObject), observed_bytes: n };
  };
  const answer = importAs(
    at,
    envelopeWithTail(at, tailJson({ bytes: 20_000, tail_bytes: 16_384, tail: big }), setCount(20_000)),
  );
  assert.equal(answer.status, 'imported');
  const past = makeEvidence(t);
  const refused = envelopeWithTail(
    past,
    tailJson({ bytes: 20_000, tail_bytes: 16_385, tail: `${big}x` }),
    setCount(20_000),
  );
  assert.equal(
    codeOf(() => importAs(past, refused)),
    'IMPORT_RECORD_INVALID',
  );
  assert.equal(countTransfers(past), 0);
});

test('decodeOutputTail refuses unknown members and non-canonical bytes; shown tails keep 40 lines and 4 KiB', () => {
  const tail: CommandOutputTail = {
    version: 1,
    kind: 'command_output_tail',
    stdout: { bytes: 5n, tail_bytes: 5n, tail: 'a\nb\n\u001b' },
    stderr: { bytes: 0n, tail_bytes: 0n, tail: '' },
  };
  const bytes = encodeOutputTail(tail);
  assert.deepEqual(decodeOutputTail(bytes), tail);
  assert.equal(
    codeOf(() => decodeOutputTail(Buffer.from(bytes.toString('utf8').replace('{"version"', '{"extra":1,"version"')))),
    'IMPORT_RECORD_INVALID',
  );
  assert.equal(
    codeOf(() => decodeOutputTail(Buffer.from(` ${bytes.toString('utf8')}`))),
    'IMPORT_RECORD_INVALID',
  );
  assert.equal(showOutputTail(tail).stdout, 'a\nb\n\\x1b');
  const many = Array.from({ length: 500 }, (_, i) => `row ${i} ${'y'.repeat(20)}`).join('\n');
  const long: CommandOutputTail = {
    ...tail,
    stdout: { bytes: 99_999n, tail_bytes: 16_384n, tail: many.slice(-16_000) },
    stderr: { bytes: 9n, tail_bytes: 9n, tail: 'err line\n' },
  };
  const shown = showOutputTail(long);
  assert.equal(shown.stdout.split('\n').length + shown.stderr.split('\n').length, 40);
  assert.ok(Buffer.byteLength(shown.stdout + shown.stderr) <= 4096);
  assert.match(shown.stdout, /row 499 y+$/);
  assert.equal(shown.truncated, true);
  // One line longer than 4 KiB: its end, at most 4096 bytes.
  const wide = showOutputTail({ ...tail, stdout: { bytes: 9000n, tail_bytes: 9000n, tail: 'z'.repeat(9000) } });
  assert.equal(Buffer.byteLength(wide.stdout), 4096);
});
