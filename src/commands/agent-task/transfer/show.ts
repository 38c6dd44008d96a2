import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../../_base.js';
import { formatJson } from '../../../contracts/json/canonical-json.js';
import { showTransferEnvelopeFile, type TransferShowResult } from './_envelope-file.js';

export default class AgentTaskTransferShow extends BaseCommand {
  static override summary =
    'Print the header, records and signature check of a collector transfer envelope, without uploading it.';
  static override description =
    'Reads a collector transfer envelope v1 (at most 16 MiB), checks its framing (magic AGSCMTR1, header length, ' +
    'header, exact length, nothing after the last record) and the SHA-256 of every record against its header, ' +
    'and prints the header, each record (kind, length, digest), the header digest, the transfer digest (SHA-256 ' +
    'of the whole envelope) and the signature. With --public-key the signature is verified with strict Ed25519 ' +
    'over the header digest and must be made by the key the header names; without it the signature is reported ' +
    'as not checked. Nothing is uploaded, imported or written; a signature that verifies is still not evidence ' +
    'until the authority imports the transfer. Each refusal has its own TRANSFER_* code ' +
    '(docs/collector-transfer.md).';

  static override examples = [
    '<%= config.bin %> agent-task transfer show retained.agscmtr',
    '<%= config.bin %> agent-task transfer show retained.agscmtr --public-key ' +
      'ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c --json',
  ];

  static override args = {
    envelope: Args.string({ description: 'Transfer envelope file, or - for stdin.', required: true }),
  };

  static override flags = {
    'public-key': Flags.string({
      description:
        'Ed25519 public key (64 lowercase hex) to verify the signature with; without it the signature is not checked.',
      helpValue: 'HEX',
    }),
  };

  async run(): Promise<TransferShowResult> {
    const { args, flags } = await this.parse(AgentTaskTransferShow);
    const result = showTransferEnvelopeFile(args.envelope, flags['public-key']);
    this.log(`transfer envelope v1: ${result.length} bytes, transfer digest ${result.transfer_digest}`);
    this.log(`header digest ${result.header_digest}`);
    this.log(`header: ${formatJson(result.header).replaceAll('\n', '\n  ')}`);
    this.log('records:');
    result.records.forEach((record, index) =>
      this.log(`  ${index} ${record.kind} ${record.length} bytes sha256 ${record.digest}`),
    );
    const signature = result.signature;
    this.log(
      signature.check === 'valid'
        ? `signature ${signature.hex}: valid (strict Ed25519, key ${signature.verification_key_id ?? ''})`
        : `signature ${signature.hex}: not checked (pass --public-key HEX to verify it)`,
    );
    return result;
  }
}
