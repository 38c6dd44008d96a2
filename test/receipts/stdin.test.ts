/**
 * `agentscm receipt verify -` reads stdin through the bounds a file has (issue #25 item 7): the
 * frame is checked as its first bytes arrive, so another magic is refused after 8 bytes — from an
 * endless /dev/zero or from a pipe that stays open — and no more than the bundle bound is ever
 * held. A valid bundle on stdin verifies; a stream of exactly the bound is read whole and one
 * byte more is INPUT_TOO_LARGE. Every case is the real CLI as a process with a real stream on
 * its stdin.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import test from 'node:test';

import { decodeReceiptBundle, RECEIPT_BUNDLE_LIMITS } from '../../src/contracts/receipt/bundle.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, TEST_XDG_DATA_HOME } from '../helpers/cli.js';
import { makeReceipt } from '../support/receipts.js';

const GNU_TIME = '/usr/bin/time';

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cliEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && key !== 'AGENTSCM_DATA_DIR') env[key] = value;
  env.XDG_DATA_HOME = TEST_XDG_DATA_HOME;
  return env;
}

/** `agentscm receipt verify - --json` with the given stdin, optionally under GNU time (`%M`: peak RSS in KiB, last stderr line). */
function verifyStdin(stdin: 'pipe' | number, timed = false): { child: ChildProcess; finished: Promise<Finished> } {
  const argv = [...cliEntryArgv(), 'receipt', 'verify', '-', '--allow-unpinned', '--json'];
  const child = timed
    ? spawn(GNU_TIME, ['-f', '%M', process.execPath, ...argv], {
        cwd: REPO_ROOT,
        env: cliEnv(),
        stdio: [stdin, 'pipe', 'pipe'],
      })
    : spawn(process.execPath, argv, { cwd: REPO_ROOT, env: cliEnv(), stdio: [stdin, 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin?.on('error', () => undefined);
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, finished };
}

function errorCode(result: Finished): string {
  return jsonOf<{ error: { code: string } }>({ ...result, signal: null, stdoutBytes: Buffer.from(result.stdout) }).error
    .code;
}

/** Write `head` then zeros up to `total` bytes into the child's stdin, with backpressure; resolves with the bytes the child took. */
async function stream(child: ChildProcess, head: Buffer, total: number): Promise<number> {
  const stdin = child.stdin;
  assert.ok(stdin !== null);
  const zeros = Buffer.alloc(1024 * 1024);
  let written = 0;
  let broken = false;
  stdin.on('error', () => (broken = true));
  const write = (chunk: Buffer): Promise<void> =>
    new Promise((resolve) => {
      stdin.write(chunk, (error) => {
        if (error) broken = true;
        else written += chunk.byteLength;
        resolve();
      });
    });
  await write(head);
  while (!broken && written < total) await write(zeros.subarray(0, Math.min(zeros.byteLength, total - written)));
  if (!broken) stdin.end();
  return written;
}

test('receipt verify - with stdin from /dev/zero: refused with RECEIPT_BUNDLE_MAGIC_INVALID after the first 8 bytes, in bounded memory', async () => {
  const zero = openSync('/dev/zero', 'r');
  const timed = existsSync(GNU_TIME);
  try {
    const started = Date.now();
    const { finished } = verifyStdin(zero, timed);
    const result = await finished;
    assert.equal(result.code, 2, result.stderr);
    assert.equal(errorCode(result), 'RECEIPT_BUNDLE_MAGIC_INVALID');
    assert.match(result.stdout, /"first_bytes_hex": ?"0000000000000000"/);
    if (timed) {
      // Reading the whole bound first took the process past 580 MiB; the refusal holds 8 bytes.
      const peakKiB = Number(result.stderr.trim().split('\n').at(-1));
      assert.ok(Number.isInteger(peakKiB) && peakKiB > 0, result.stderr);
      assert.ok(peakKiB < 300 * 1024, `peak RSS ${peakKiB} KiB`);
    }
    assert.ok(Date.now() - started < 60_000);
  } finally {
    closeSync(zero);
  }
});

test('receipt verify - answers a pipe that sent 8 bytes of another magic and stays open, without waiting for more', async () => {
  const { child, finished } = verifyStdin('pipe');
  child.stdin?.write(Buffer.from('AGSCMTR1'));
  // The pipe is never closed: before, the reader waited for end of input.
  const result = await Promise.race([
    finished,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 90_000)),
  ]);
  child.stdin?.destroy();
  if (result === null) {
    child.kill('SIGKILL');
    assert.fail('receipt verify - was still reading a pipe after 8 bytes of another magic');
  }
  assert.equal(result.code, 2, result.stderr);
  assert.equal(errorCode(result), 'RECEIPT_BUNDLE_MAGIC_INVALID');
});

test('receipt verify - verifies a valid bundle on stdin, and takes a stream of exactly the bundle bound whole but refuses one byte more with INPUT_TOO_LARGE', async (t) => {
  const { bundle, receiptDigest } = makeReceipt(t);
  const ok = await runCli(['receipt', 'verify', '-', '--allow-unpinned', '--json'], { input: bundle });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(jsonOf<{ receipt_digest: string }>(ok).receipt_digest, receiptDigest);

  // A valid frame head (magic, manifest, receipt) followed by zeros: every head check passes, so
  // the stream is read to its end or to the bound.
  const parts = decodeReceiptBundle(bundle);
  const head = bundle.subarray(
    0,
    RECEIPT_BUNDLE_LIMITS.prefixBytes + parts.manifestBytes.byteLength + parts.receiptBytes.byteLength,
  );
  const limit = RECEIPT_BUNDLE_LIMITS.maxBundleBytes;

  const at = verifyStdin('pipe');
  const [atWritten, atResult] = await Promise.all([stream(at.child, head, limit), at.finished]);
  assert.equal(atWritten, limit);
  assert.equal(atResult.code, 2, atResult.stderr);
  // Read whole: the frame refuses what follows the declared bundle, not the size.
  assert.equal(errorCode(atResult), 'RECEIPT_BUNDLE_TRAILING_BYTES');

  const past = verifyStdin('pipe');
  const [pastWritten, pastResult] = await Promise.all([stream(past.child, head, limit + 1), past.finished]);
  assert.equal(pastResult.code, 2, pastResult.stderr);
  assert.equal(errorCode(pastResult), 'INPUT_TOO_LARGE');
  // The reader stops at the bound plus one byte; what it took is at most that (plus the pipe's own buffer).
  assert.ok(pastWritten <= limit + 1, `${pastWritten} bytes written`);
});
