/**
 * The signer rule of `agentscm receipt verify` (docs/receipts.md "receipt verify"): the pure
 * verifier proves a bundle consistent under the keys it holds; the command accepts it only when
 * those keys were pinned, or when the caller said any signer will do.
 */
import { AgentscmError } from '../../contracts/errors.js';
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
