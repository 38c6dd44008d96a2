import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { readPublicKeyFile } from '../../native/public-key-file.js';
import { requirePinnedSigner } from '../../tasks/admission/receipt-bundle-pin.js';
import type { ReceiptBundleVerification } from '../../tasks/admission/receipt-bundle-verify.js';
import { verifyReceiptBundleFile } from './_bundle-file.js';

export default class ReceiptVerify extends BaseCommand {
  static override summary = 'Verify a receipt bundle offline: no store, no network.';
  static override description =
    'Reads BUNDLE (a file `agentscm receipt export` wrote, or - for stdin; at most 537001996 bytes) and checks, ' +
    'in order: the frame and manifest, that the receipt decodes and has the digest the manifest names, that the ' +
    "bundle holds exactly the transfers and registrations the receipt names, that each registration's key id is " +
    "its public key's SHA-256 (and, with --public-key, that the key is one of those pinned) and that it is " +
    'scoped to the rows it backs, then for each transfer its SHA-256, its framing, its strict Ed25519 signature ' +
    "under the registration's key, every header field against the receipt, every record digest, the " +
    "ExecutionRequest against the receipt's subject, task and attempt, the ExecutionRecord with the import's own " +
    "checks, and that the record's outcome is the one its row names (a passed row needs a passed record; an " +
    'omitted optional step names the record that made it one). Any change to any byte is refused with the ' +
    "failing check's code (docs/receipts.md). Without --public-key the signer is not pinned: the command prints " +
    'what it checked and exits 1 (RECEIPT_BUNDLE_SIGNER_NOT_PINNED) unless --allow-unpinned accepts any signer. ' +
    'It needs no --data-dir and reads no store. Exit status: 0 verified, 1 a check failed or the signer is not ' +
    'pinned, 2 an unreadable or malformed bundle or key.';
  static override examples = [
    '<%= config.bin %> receipt verify receipt.agscmrb --allow-unpinned',
    '<%= config.bin %> receipt verify receipt.agscmrb --public-key ' +
      'ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c --json',
  ];

  static override args = {
    bundle: Args.string({ description: 'Receipt bundle file, or - for stdin.', required: true }),
  };

  static override flags = {
    'public-key': Flags.string({
      description:
        'Pin an expected signer: an Ed25519 public key (64 lowercase hex); repeat it for several. When given, a ' +
        'registration whose key is not listed is refused.',
      helpValue: 'HEX',
      multiple: true,
    }),
    'public-key-file': Flags.string({
      description:
        "Pin the signer whose public key FILE holds (64 hex), or of a signing key file such as the collector's " +
        'signing-key.json; repeatable, and combines with --public-key.',
      helpValue: 'FILE',
      multiple: true,
    }),
    'allow-unpinned': Flags.boolean({
      description:
        'Accept a bundle whose signer no --public-key pins (exit 0, "verified, signer not pinned"); without it ' +
        'and without --public-key the command exits 1.',
      exclusive: ['public-key', 'public-key-file'],
    }),
  };

  async run(): Promise<ReceiptBundleVerification> {
    const { args, flags } = await this.parse(ReceiptVerify);
    const pinned = [...(flags['public-key'] ?? []), ...(flags['public-key-file'] ?? []).map(readPublicKeyFile)];
    const result = verifyReceiptBundleFile(args.bundle, pinned);
    const allowUnpinned = flags['allow-unpinned'];
    const lead = result.public_keys_pinned
      ? 'verified:'
      : allowUnpinned
        ? 'verified, signer not pinned:'
        : 'checked, signer not pinned:';
    // Without a pin and without --allow-unpinned, --json prints only the refusal (its details say what passed).
    if (!this.jsonEnabled() || result.public_keys_pinned || allowUnpinned) this.report(lead, result);
    requirePinnedSigner(result, allowUnpinned);
    return result;
  }

  private report(lead: string, result: ReceiptBundleVerification): void {
    this.log(
      `${lead} receipt ${result.receipt_digest} (${result.receipt.state as string}), ` +
        `${result.transfers.length} signed transfer(s), ${result.bundle_length} bytes`,
    );
    for (const row of result.transfers)
      this.log(
        `  signed   ${row.step_id}${row.required ? '' : ' (optional)'} ${row.task_id}: record ` +
          `${row.record_outcome}, transfer ${row.transfer_digest}, key ${row.verification_key_id}`,
      );
    for (const row of result.unsigned_rows)
      this.log(
        `  unsigned ${row.step_id}${row.required ? '' : ' (optional)'} ${row.task_id}: ` +
          `${row.outcome}${row.evidence === 'result_digest' ? ' (native result digest)' : ''}`,
      );
    if (result.public_keys_pinned) this.log('  every registration key is one of the pinned --public-key values');
    else {
      this.log(`  ${result.checks.length - 1} checks passed; public_key_pinned: no --public-key was given`);
      for (const key of result.unpinned_public_keys) this.log(`  signer key ${key} (pin it with --public-key ${key})`);
    }
  }
}
