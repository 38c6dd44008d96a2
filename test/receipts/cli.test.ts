/**
 * `agentscm receipt show | export | verify` as processes (docs/receipts.md): show and export by
 * digest or unique prefix against the real stores, export's file rules (0644, never over a file),
 * and verify in a process that has no store, no data directory and an empty HOME, with exit
 * codes and the refusing check's code for pinned keys, tampered, truncated, oversize and
 * unknown-version bundles.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { decodeReceiptBundle, RECEIPT_BUNDLE_LIMITS } from '../../src/contracts/receipt/bundle.js';
import { generateKeyPair } from '../../src/crypto/ed25519.js';
import { verifyReceiptBundle } from '../../src/tasks/admission/receipt-bundle-verify.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { frameBundle, makeReceipt, openBundle } from '../support/receipts.js';

function codeOf(bytes: Uint8Array): string {
  try {
    verifyReceiptBundle(bytes);
    return 'VERIFIED';
  } catch (error) {
    if (!(error instanceof AgentscmError)) throw error;
    return error.code;
  }
}

/** A process with no store anywhere it could look: empty HOME, no XDG_DATA_HOME, no AGENTSCM_DATA_DIR, an empty working directory. */
function storeless(dir: string): { cwd: string; env: Record<string, string | undefined>; home: string } {
  const home = join(dir, 'empty-home');
  const cwd = join(dir, 'elsewhere');
  mkdirSync(home);
  mkdirSync(cwd);
  return { cwd, home, env: { HOME: home, XDG_DATA_HOME: undefined, AGENTSCM_DATA_DIR: undefined } };
}

test('receipt show prints the retained receipt by full digest or 8-hex prefix; a short, unknown or missing-store reference is refused with its code', async (t) => {
  const { ev, receiptDigest } = makeReceipt(t);
  const dataDir = ev.store.dataDir;
  const full = await runCli(['--data-dir', dataDir, 'receipt', 'show', receiptDigest, '--json']);
  assert.equal(full.code, 0, full.stderr);
  const shown = jsonOf<{
    receipt_digest: string;
    receipt: { state: string; tasks: { step_id: string; transfer_digest?: string }[] };
  }>(full);
  assert.equal(shown.receipt_digest, receiptDigest);
  assert.equal(shown.receipt.state, 'completed_with_omissions');
  assert.match(shown.receipt.tasks.find((row) => row.step_id === 'unit')?.transfer_digest ?? '', /^[0-9a-f]{64}$/);
  const prefix = await runCli(['--data-dir', dataDir, 'receipt', 'show', receiptDigest.slice(0, 8)]);
  assert.equal(prefix.code, 0, prefix.stderr);
  assert.match(prefix.stdout, new RegExp(`^receipt ${receiptDigest}\\n`));
  const short = await runCli(['--data-dir', dataDir, 'receipt', 'show', receiptDigest.slice(0, 7)]);
  assert.equal(short.code, 2);
  assert.match(short.stderr, /^error\[ID_INVALID\]/);
  const unknownPrefix = receiptDigest.startsWith('0') ? 'ffffffff' : '00000000';
  const unknown = await runCli(['--data-dir', dataDir, 'receipt', 'show', unknownPrefix]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^error\[RECEIPT_NOT_FOUND\]/);
  const missing = await runCli(['--data-dir', join(ev.dir, 'no-store'), 'receipt', 'show', receiptDigest]);
  assert.equal(missing.code, 4);
  assert.match(missing.stderr, /^error\[STORE_NOT_INITIALIZED\]/);
});

test('receipt export writes the bundle 0644 (whatever the umask), the same bytes as the export core, and never over an existing file', async (t) => {
  const { ev, receiptDigest, bundle } = makeReceipt(t);
  const out = join(ev.dir, 'cli.agscmrb');
  const first = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'receipt',
    'export',
    receiptDigest.slice(0, 10),
    '--out',
    out,
    '--json',
  ]);
  assert.equal(first.code, 0, first.stderr);
  const answer = jsonOf<{
    receipt_digest: string;
    out: string;
    length: number;
    transfers: number;
    registrations: number;
  }>(first);
  assert.deepEqual(
    [answer.receipt_digest, answer.out, answer.length, answer.transfers, answer.registrations],
    [receiptDigest, out, bundle.byteLength, 1, 1],
  );
  assert.equal(statSync(out).mode & 0o777, 0o644);
  assert.ok(readFileSync(out).equals(bundle), 'the export is deterministic');
  writeFileSync(join(ev.dir, 'taken.agscmrb'), 'mine\n');
  const again = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'receipt',
    'export',
    receiptDigest,
    '--out',
    join(ev.dir, 'taken.agscmrb'),
  ]);
  assert.equal(again.code, 3);
  assert.match(again.stderr, /^error\[RECEIPT_BUNDLE_EXISTS\]/);
  assert.equal(readFileSync(join(ev.dir, 'taken.agscmrb'), 'utf8'), 'mine\n');
  assert.deepEqual(
    readdirSync(ev.dir).filter((name) => name.endsWith('.tmp')),
    [],
    'no temporary file is left behind',
  );
});

test('receipt verify runs with no store, no data directory and an empty HOME: exit 0 and the verified receipt digest; --public-key pins the signer', async (t) => {
  const { ev, receiptDigest, bundleFile } = makeReceipt(t);
  const where = storeless(ev.dir);
  const ok = await runCli(['receipt', 'verify', bundleFile, '--allow-unpinned', '--json'], {
    cwd: where.cwd,
    env: where.env,
  });
  assert.equal(ok.code, 0, ok.stderr);
  const result = jsonOf<{
    verified: boolean;
    receipt_digest: string;
    transfers: unknown[];
    public_keys_pinned: boolean;
  }>(ok);
  assert.deepEqual(
    [result.verified, result.receipt_digest, result.transfers.length, result.public_keys_pinned],
    [true, receiptDigest, 1, false],
  );
  assert.deepEqual(readdirSync(where.home), [], 'nothing was created in HOME');
  assert.deepEqual(readdirSync(where.cwd), [], 'nothing was created in the working directory');

  const pinned = await runCli(['receipt', 'verify', bundleFile, '--public-key', ev.key.publicKeyHex], {
    cwd: where.cwd,
    env: where.env,
  });
  assert.equal(pinned.code, 0, pinned.stderr);
  assert.match(pinned.stdout, new RegExp(`^verified: receipt ${receiptDigest}`));
  const other = Buffer.from(generateKeyPair().publicKey).toString('hex');
  const wrong = await runCli(['receipt', 'verify', bundleFile, '--public-key', other, '--json'], {
    cwd: where.cwd,
    env: where.env,
  });
  assert.equal(wrong.code, 1);
  assert.equal(jsonOf<{ error: { code: string } }>(wrong).error.code, 'RECEIPT_BUNDLE_KEY_NOT_PINNED');
  const both = await runCli(
    ['receipt', 'verify', bundleFile, '--public-key', other, '--public-key', ev.key.publicKeyHex],
    { cwd: where.cwd, env: where.env },
  );
  assert.equal(both.code, 0, both.stderr);
  const malformed = await runCli(['receipt', 'verify', bundleFile, '--public-key', 'abc'], {
    cwd: where.cwd,
    env: where.env,
  });
  assert.equal(malformed.code, 2);
  assert.match(malformed.stderr, /^error\[PUBLIC_KEY_INVALID\]/);
});

test('receipt verify refuses a tampered bundle with exit 1 and the check, a truncated or unknown-version one with exit 2, and an oversize file before reading it', async (t) => {
  const { ev, bundle } = makeReceipt(t);
  const where = storeless(ev.dir);
  const file = (name: string, bytes: Uint8Array): string => {
    const path = join(ev.dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  const tampered = Buffer.from(bundle);
  tampered[tampered.byteLength - 1] = (tampered[tampered.byteLength - 1] as number) ^ 0x01;
  const bad = await runCli(['receipt', 'verify', file('tampered.agscmrb', tampered)], {
    cwd: where.cwd,
    env: where.env,
  });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^error\[RECEIPT_BUNDLE_TRANSFER_DIGEST_MISMATCH\]/);
  const cut = await runCli(
    ['receipt', 'verify', file('cut.agscmrb', bundle.subarray(0, bundle.byteLength - 1)), '--json'],
    { cwd: where.cwd, env: where.env },
  );
  assert.equal(cut.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(cut).error.code, 'RECEIPT_BUNDLE_TRUNCATED');
  // A sparse file one byte over the limit: refused from its size, before a byte is read.
  const huge = join(ev.dir, 'huge.agscmrb');
  writeFileSync(huge, bundle.subarray(0, 16));
  truncateSync(huge, RECEIPT_BUNDLE_LIMITS.maxBundleBytes + 1);
  const oversize = await runCli(['receipt', 'verify', huge], { cwd: where.cwd, env: where.env });
  assert.equal(oversize.code, 2);
  assert.match(oversize.stderr, /^error\[INPUT_TOO_LARGE\]/);
  const open = openBundle(bundle);
  open.manifest.version = 2;
  const future = await runCli(
    [
      'receipt',
      'verify',
      file(
        'v2.agscmrb',
        frameBundle(encodeCanonical(open.manifest), decodeReceiptBundle(bundle).receiptBytes, open.envelopes),
      ),
    ],
    { cwd: where.cwd, env: where.env },
  );
  assert.equal(future.code, 2);
  assert.match(future.stderr, /^error\[RECEIPT_BUNDLE_VERSION_UNSUPPORTED\]/);
});

test('the frame is checked before anything is held: every truncation point, trailing bytes, another magic, a non-canonical or oversize manifest, and a manifest declaring 32 × 16 MiB in a small file', (t) => {
  const { bundle } = makeReceipt(t);
  // Inside the prefix, the manifest, the receipt or an envelope: each cut is a truncation, never a parse of partial bytes.
  for (let length = 0; length < bundle.byteLength; length++)
    assert.equal(codeOf(bundle.subarray(0, length)), 'RECEIPT_BUNDLE_TRUNCATED', `cut at ${length}`);
  assert.equal(codeOf(Buffer.concat([bundle, Buffer.from([0])])), 'RECEIPT_BUNDLE_TRAILING_BYTES');
  const open = openBundle(bundle);
  const receiptBytes = decodeReceiptBundle(bundle).receiptBytes;
  assert.equal(
    codeOf(frameBundle(encodeCanonical(open.manifest), receiptBytes, open.envelopes, 'AGSCMRB2')),
    'RECEIPT_BUNDLE_MAGIC_INVALID',
  );
  assert.equal(
    codeOf(frameBundle(encodeCanonical(open.manifest), receiptBytes, open.envelopes, 'AGSCMTR1')),
    'RECEIPT_BUNDLE_MAGIC_INVALID',
  );
  const spaced = Buffer.from(JSON.stringify(JSON.parse(encodeCanonical(open.manifest).toString('utf8')), null, 1));
  assert.equal(codeOf(frameBundle(spaced, receiptBytes, open.envelopes)), 'RECEIPT_BUNDLE_MANIFEST_INVALID');
  const longManifest = Buffer.from(bundle);
  longManifest.writeUInt32BE(RECEIPT_BUNDLE_LIMITS.maxManifestBytes + 1, 8);
  assert.equal(codeOf(longManifest), 'RECEIPT_BUNDLE_MANIFEST_INVALID');
  const transfer = (open.manifest.transfers as JsonObject[])[0] as JsonObject;
  open.manifest.transfers = Array.from({ length: 32 }, (_, i) => ({
    ...transfer,
    task_id: `t-${i}`,
    length: BigInt(RECEIPT_BUNDLE_LIMITS.maxEnvelopeBytes),
  }));
  assert.equal(
    codeOf(frameBundle(encodeCanonical(open.manifest), receiptBytes, open.envelopes)),
    'RECEIPT_BUNDLE_TRUNCATED',
  );
  open.manifest.transfers = Array.from({ length: 33 }, (_, i) => ({ ...transfer, task_id: `t-${i}` }));
  assert.equal(
    codeOf(frameBundle(encodeCanonical(open.manifest), receiptBytes, open.envelopes)),
    'RECEIPT_BUNDLE_MANIFEST_INVALID',
  );
});
