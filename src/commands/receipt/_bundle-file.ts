/**
 * `agentscm receipt verify`: read one receipt bundle file (or stdin for `-`) through the bounded
 * reader — a file's size is checked against the bundle limit before a byte is read, and a file
 * or stdin alike has its frame (magic, manifest length, manifest) checked as those bytes arrive,
 * before the rest is read — and verify it with the pure offline verifier. No store, no data
 * directory, no network.
 */
import { isAgentscmError } from '../../contracts/errors.js';
import { parsePublicKeyHex } from '../../contracts/key-file.js';
import { decodeReceiptBundle, RECEIPT_BUNDLE_LIMITS } from '../../contracts/receipt/bundle.js';
import { readBoundedInput } from '../../native/bounded-input.js';
import { verifyReceiptBundle, type ReceiptBundleVerification } from '../../tasks/admission/receipt-bundle-verify.js';

/**
 * The frame checks the first bytes of a bundle allow, by the one bundle decoder: a prefix that is
 * only cut short (RECEIPT_BUNDLE_TRUNCATED) is read on, any other refusal is final. Returns the
 * next prefix length worth checking: the 12-byte prefix after the magic, then the end of the
 * manifest it declares, then none.
 */
export function checkBundleHead(head: Buffer): number | undefined {
  const L = RECEIPT_BUNDLE_LIMITS;
  try {
    decodeReceiptBundle(head);
  } catch (error) {
    if (!isAgentscmError(error) || error.code !== 'RECEIPT_BUNDLE_TRUNCATED') throw error;
    if (head.byteLength < L.prefixBytes) return L.prefixBytes;
    const manifestEnd = L.prefixBytes + head.readUInt32BE(L.magicBytes);
    return head.byteLength < manifestEnd ? manifestEnd : undefined;
  }
  return undefined;
}

/** Read a bundle from FILE (or `-`, stdin) within the bundle bound, refusing a bad frame at its first bytes. */
export function readReceiptBundleInput(file: string): Buffer {
  return readBoundedInput(file, {
    limit: RECEIPT_BUNDLE_LIMITS.maxBundleBytes,
    what: 'the receipt bundle',
    missingHint: 'pass the file `agentscm receipt export DIGEST --out BUNDLE` wrote, or - to read it from stdin',
    tooLargeHint:
      `a receipt bundle is at most ${RECEIPT_BUNDLE_LIMITS.maxBundleBytes} bytes (32 transfers of 16 MiB with its ` +
      `manifest and receipt)`,
    stdin: true,
    head: { at: RECEIPT_BUNDLE_LIMITS.magicBytes, check: checkBundleHead },
  });
}

/**
 * Verify the bundle in FILE; every --public-key is checked (64 hex, a usable Ed25519 point) before the file is read.
 */
export function verifyReceiptBundleFile(file: string, publicKeys: readonly string[]): ReceiptBundleVerification {
  for (const key of publicKeys) parsePublicKeyHex(key);
  return verifyReceiptBundle(readReceiptBundleInput(file), { publicKeys });
}
