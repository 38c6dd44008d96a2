/**
 * `receipt verify` without `--public-key` (docs/receipts.md "receipt verify"): a bundle that passes
 * every check under keys nobody pinned is not accepted — the command prints what it checked and the
 * signer key, never the word "verified", and exits 1 (RECEIPT_BUNDLE_SIGNER_NOT_PINNED) — unless
 * `--allow-unpinned` accepts any signer (exit 0, "verified, signer not pinned"). Spawned as a user
 * runs it, with no store.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { makeReceipt } from '../support/receipts.js';

interface Verification {
  verified: boolean;
  receipt_digest: string;
  public_keys_pinned: boolean;
  unpinned_public_keys: string[];
  registrations: { public_key: string; pinned: boolean }[];
}

test('without --public-key: what was checked and the signer key, never "verified", exit 1 with the fix', async (t) => {
  const { ev, receiptDigest, bundleFile } = makeReceipt(t);
  const key = ev.key.publicKeyHex;
  const human = await runCli(['receipt', 'verify', bundleFile], { cwd: ev.dir });
  assert.equal(human.code, 1, human.stderr);
  assert.doesNotMatch(human.stdout + human.stderr, /verified/i);
  const lines = human.stdout.trimEnd().split('\n');
  assert.match(lines[0] ?? '', new RegExp(`^checked, signer not pinned: receipt ${receiptDigest} \\(`));
  assert.ok(lines.includes('  14 checks passed; public_key_pinned: no --public-key was given'), human.stdout);
  assert.equal(lines.at(-1), `  signer key ${key} (pin it with --public-key ${key})`);
  assert.match(
    human.stderr,
    new RegExp(
      `^error\\[RECEIPT_BUNDLE_SIGNER_NOT_PINNED\\]: every check passed, but the signer key ${key} is not pinned, ` +
        'so the bundle is not accepted; pass the enrolled executor key with --public-key HEX .*--allow-unpinned',
    ),
  );
  assert.equal(human.stderr.trimEnd().split('\n').length, 1, 'one error line');

  const json = await runCli(['receipt', 'verify', bundleFile, '--json'], { cwd: ev.dir });
  assert.equal(json.code, 1);
  const { error } = jsonOf<{
    error: {
      code: string;
      details: { receipt_digest: string; public_keys_pinned: boolean; unpinned_public_keys: string[] };
    };
  }>(json);
  assert.equal(error.code, 'RECEIPT_BUNDLE_SIGNER_NOT_PINNED');
  assert.deepEqual(error.details.receipt_digest, receiptDigest);
  assert.equal(error.details.public_keys_pinned, false);
  assert.deepEqual(error.details.unpinned_public_keys, [key]);
});

test('--allow-unpinned: exit 0, "verified, signer not pinned", and --json says the key was not pinned', async (t) => {
  const { ev, receiptDigest, bundleFile } = makeReceipt(t);
  const key = ev.key.publicKeyHex;
  const human = await runCli(['receipt', 'verify', bundleFile, '--allow-unpinned'], { cwd: ev.dir });
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`^verified, signer not pinned: receipt ${receiptDigest} \\(`));
  assert.match(human.stdout, new RegExp(`\n  signer key ${key} \\(pin it with --public-key ${key}\\)\n$`));
  const json = await runCli(['receipt', 'verify', bundleFile, '--allow-unpinned', '--json'], { cwd: ev.dir });
  assert.equal(json.code, 0, json.stderr);
  const body = jsonOf<Verification>(json);
  assert.deepEqual([body.verified, body.public_keys_pinned, body.unpinned_public_keys], [true, false, [key]]);
  assert.deepEqual(
    body.registrations.map((r) => [r.public_key, r.pinned]),
    [[key, false]],
  );
});

test('with --public-key: "verified:", no unpinned keys; --allow-unpinned cannot be combined with it', async (t) => {
  const { ev, bundleFile } = makeReceipt(t);
  const key = ev.key.publicKeyHex;
  const pinned = await runCli(['receipt', 'verify', bundleFile, '--public-key', key, '--json'], { cwd: ev.dir });
  assert.equal(pinned.code, 0, pinned.stderr);
  const body = jsonOf<Verification>(pinned);
  assert.deepEqual([body.verified, body.public_keys_pinned, body.unpinned_public_keys], [true, true, []]);
  assert.deepEqual(
    body.registrations.map((r) => [r.public_key, r.pinned]),
    [[key, true]],
  );
  const human = await runCli(['receipt', 'verify', bundleFile, '--public-key', key], { cwd: ev.dir });
  assert.match(human.stdout, /^verified: receipt /);
  assert.match(human.stdout, /every registration key is one of the pinned --public-key values\n$/);
  const both = await runCli(['receipt', 'verify', bundleFile, '--public-key', key, '--allow-unpinned']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^error\[USAGE\]/);
});
