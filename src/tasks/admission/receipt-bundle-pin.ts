/**
 * The signer rule of `agentscm receipt verify` (docs/receipts.md "receipt verify"): the pure
 * verifier proves a bundle consistent under the keys it holds; the command accepts it only when
 * those keys were pinned, or when the caller said any signer will do.
 */
import { AgentscmError } from '../../contracts/errors.js';
import { decodeKeyFile, KEY_FILE_MAX_BYTES, parsePublicKeyHex } from '../../contracts/key-file.js';
import { readBoundedInput } from '../../native/bounded-input.js';
import type { ReceiptBundleVerification } from './receipt-bundle-verify.js';

/**
 * A bundle whose checks all passed is accepted only with its signer pinned (--public-key), or
 * when the caller accepts any signer (--allow-unpinned): anyone can make a key and a bundle that
 * is consistent under it (docs/receipts.md "What a verified bundle proves, and what it does not").
 */
export function requirePinnedSigner(result: ReceiptBundleVerification, allowUnpinned: boolean): void {
  if (result.public_keys_pinned || allowUnpinned) return;
  const keys = result.unpinned_public_keys;
  throw new AgentscmError(
    'RECEIPT_BUNDLE_SIGNER_NOT_PINNED',
    `every check passed, but the signer ${keys.length === 1 ? 'key' : 'keys'} ${keys.join(', ')} ` +
      `${keys.length === 1 ? 'is' : 'are'} not pinned, so the bundle is not accepted`,
    {
      hint:
        'pass the enrolled executor key with --public-key HEX (agentscm agent-task registration list --json), ' +
        'or --allow-unpinned to accept a bundle signed by any key',
      details: {
        receipt_digest: result.receipt_digest,
        public_keys_pinned: false,
        unpinned_public_keys: keys,
        checks: result.checks,
      },
    },
  );
}

/** The most a --public-key-file may hold: a key file (KEY_FILE_MAX_BYTES) is the largest form. */
const PUBLIC_KEY_FILE_MAX_BYTES = KEY_FILE_MAX_BYTES;

/**
 * The public key a `--public-key-file` pins: the file holds the 64 lowercase hex digits (one
 * trailing newline allowed), or it is a signing key file (`agent-task key`, `collector add`), whose
 * `public_key` is checked against its private key before it is used.
 */
export function readPinnedPublicKeyFile(path: string): string {
  const bytes = readBoundedInput(path, {
    limit: PUBLIC_KEY_FILE_MAX_BYTES,
    what: 'the public key file',
    missingHint: 'pass a file holding the signer public key (64 hex), or the signing-key.json of the collector',
    tooLargeHint: 'a public key file holds 64 hex digits or one signing key file',
  });
  const text = bytes.toString('utf8');
  const hex = /^([0-9a-f]{64})\n?$/.exec(text)?.[1];
  if (hex !== undefined) {
    parsePublicKeyHex(hex);
    return hex;
  }
  if (text.trimStart().startsWith('{')) return decodeKeyFile(bytes).publicKeyHex;
  throw new AgentscmError(
    'PUBLIC_KEY_INVALID',
    `${path} holds neither a public key (64 lowercase hex) nor a key file`,
    {
      hint: 'pass the public_key printed by `agentscm agent-task collector add`, or its signing-key.json',
    },
  );
}
