import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { exportReceiptBundle, type ReceiptExportResult } from '../../tasks/admission/receipt-bundle.js';
import { withStore } from '../../tasks/store.js';

export default class ReceiptExport extends BaseCommand {
  static override summary = 'Export a receipt with its signed evidence as a bundle for offline verification.';
  static override description =
    'Writes the receipt bundle of the v2 receipt DIGEST names (64 lowercase hex, or a unique prefix of at least ' +
    "8): the receipt's canonical bytes, every transfer envelope it names exactly as the authority retained it, " +
    'and the executor registrations (public keys) they were verified with (docs/receipts.md "Bundle format"). ' +
    'The bundle is verified before it is written; --out is created 0644, atomically, and never over an existing ' +
    'file. Reads the stores read-only. `agentscm receipt verify BUNDLE` checks it anywhere, with no store.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data receipt export 5f3ce2a1 --out receipt.agscmrb',
    '<%= config.bin %> receipt export 5f3ce2a1b0c4d9e8 --out receipt.agscmrb --json',
  ];
  static override args = {
    digest: Args.string({
      description: 'Receipt digest (64 lowercase hex) or a unique prefix of at least 8 hex digits.',
      required: true,
    }),
  };

  static override flags = {
    out: Flags.string({
      description: 'New file to write the bundle to (an existing file is refused).',
      required: true,
      helpValue: 'BUNDLE',
    }),
  };

  async run(): Promise<ReceiptExportResult> {
    const { args, flags } = await this.parse(ReceiptExport);
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      exportReceiptBundle(store, args.digest, flags.out),
    );
    this.log(
      `exported receipt ${result.receipt_digest} to ${result.out}: ${result.length} bytes, ${result.transfers} ` +
        `transfer(s), ${result.registrations} registration(s), sha256 ${result.bundle_sha256}`,
    );
    return result;
  }
}
