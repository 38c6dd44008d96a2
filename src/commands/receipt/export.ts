import { Args, Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { AgentscmError } from '../../contracts/errors.js';
import { receiptOfChange } from '../../tasks/admission/change-receipt.js';
import { exportReceiptBundle, type ReceiptExportResult } from '../../tasks/admission/receipt-bundle.js';
import { withStore } from '../../tasks/store.js';

export default class ReceiptExport extends BaseCommand {
  static override summary = 'Export a receipt with its signed evidence as a bundle for offline verification.';
  static override description =
    'Writes the receipt bundle of the v2 receipt DIGEST names (64 lowercase hex, or a unique prefix of at least ' +
    "8): the receipt's canonical bytes, every transfer envelope it names exactly as the authority retained it, " +
    'and the executor registrations (public keys) they were verified with (docs/receipts.md "Bundle format"). ' +
    'The bundle is verified before it is written; --out is created 0644, atomically, and never over an existing ' +
    'file. Reads the stores read-only. `agentscm receipt verify BUNDLE` checks it anywhere, with no store. ' +
    'With --change instead of DIGEST: the receipt the Change landed on --target with, else the receipt of its ' +
    'current version when that qualifies now.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data receipt export 5f3ce2a1 --out receipt.agscmrb',
    '<%= config.bin %> receipt export 5f3ce2a1b0c4d9e8 --out receipt.agscmrb --json',
    '<%= config.bin %> receipt export --change fix-parser --out fix-parser.agscmrb',
  ];
  static override args = {
    digest: Args.string({
      description: 'Receipt digest (64 lowercase hex) or a unique prefix of at least 8 hex digits (or --change).',
    }),
  };

  static override flags = {
    out: Flags.string({
      description: 'New file to write the bundle to (an existing file is refused).',
      required: true,
      helpValue: 'BUNDLE',
    }),
    change: Flags.string({
      description: 'Export the receipt of this Change (its landing on --target, else its qualified current version).',
      helpValue: 'ID',
    }),
    target: Flags.string({
      description: 'With --change: the target it landed on or qualifies for.',
      default: 'main',
      helpValue: 'NAME',
    }),
    repository: repositoryFlag,
  };

  async run(): Promise<ReceiptExportResult> {
    const { args, flags } = await this.parse(ReceiptExport);
    if ((args.digest === undefined) === (flags.change === undefined)) {
      throw new AgentscmError('USAGE', 'name the receipt by DIGEST or by --change, exactly one of them', {
        hint: '`agentscm receipt export --change ID --out FILE`, or a digest `agentscm qualification` printed',
      });
    }
    const change = flags.change;
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) => {
      const digest =
        change === undefined
          ? (args.digest ?? '')
          : receiptOfChange(store, {
              repository: this.repositoryOf(flags.repository, store.dataDir),
              change,
              target: flags.target,
            }).receipt_digest;
      return exportReceiptBundle(store, digest, flags.out);
    });
    this.log(
      `exported receipt ${result.receipt_digest} to ${result.out}: ${result.length} bytes, ${result.transfers} ` +
        `transfer(s), ${result.registrations} registration(s), sha256 ${result.bundle_sha256}`,
    );
    return result;
  }
}
