/**
 * `agentscm receipt verify`: read one receipt bundle file (or stdin for `-`) through the bounded
 * reader — its size is checked against the bundle limit before a byte is read — and verify it
 * with the pure offline verifier. No store, no data directory, no network.
 */
import { parsePublicKeyHex } from '../../contracts/key-file.js';
import { RECEIPT_BUNDLE_LIMITS } from '../../contracts/receipt-bundle.js';
import { readBoundedInput } from '../../native/bounded-input.js';
import type { ReceiptBundleVerification } from '../../tasks/receipt-bundle-verify.js';
import { verifyReceiptBundle } from '../../tasks/receipt-bundle-verify.js';

/** Verify the bundle in FILE; every --public-key is checked (64 hex, a usable Ed25519 point) before the file is read. */
export function verifyReceiptBundleFile(file: string, publicKeys: readonly string[]): ReceiptBundleVerification {
  for (const key of publicKeys) parsePublicKeyHex(key);
  const bytes = readBoundedInput(file, {
    limit: RECEIPT_BUNDLE_LIMITS.maxBundleBytes,
    what: 'the receipt bundle',
    tooLargeHint: `a receipt bundle is at most ${RECEIPT_BUNDLE_LIMITS.maxBundleBytes} bytes (32 transfers of 16 MiB with its manifest and receipt)`,
    stdin: true,
  });
  return verifyReceiptBundle(bytes, { publicKeys });
}
