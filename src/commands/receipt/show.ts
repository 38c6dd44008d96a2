import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { formatJson } from '../../contracts/json/canonical-json.js';
import { showReceipt, type ReceiptShowResult } from '../../tasks/admission/receipt-bundle.js';
import { withStore } from '../../tasks/store.js';

export default class ReceiptShow extends BaseCommand {
  static override summary = 'Show a retained v2 receipt.';
  static override description =
    'Reads the stores of --data-dir read-only and prints the v2 receipt DIGEST names (64 lowercase hex, or a ' +
    'unique prefix of at least 8): its subject, state and one row per plan step, with the transfer, attempt, ' +
    'fence, registration and origin of every imported collector task. `agentscm qualification` prints the digest ' +
    'of a qualified subject; `receipt export` writes the receipt with its evidence for offline verification.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data receipt show 5f3ce2a1',
    '<%= config.bin %> receipt show 5f3ce2a1b0c4d9e8 --json',
  ];
  static override args = {
    digest: Args.string({
      description: 'Receipt digest (64 lowercase hex) or a unique prefix of at least 8 hex digits.',
      required: true,
    }),
  };

  async run(): Promise<ReceiptShowResult> {
    const { args, flags } = await this.parse(ReceiptShow);
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      showReceipt(store, args.digest),
    );
    this.log(`receipt ${result.receipt_digest}`);
    this.log(formatJson(result.receipt));
    return result;
  }
}
