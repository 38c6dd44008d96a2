import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { digestObservationFile } from '../../collector/observation-files.js';
import { AgentscmError } from '../../contracts/errors.js';
import { counted } from '../../contracts/json/counted.js';

export default class AgentTaskObservationDigest extends BaseCommand {
  static override summary = 'Print the observation digest (or the exact signing bytes) of a result assertion.';
  static override description =
    'Decodes the assertion strictly, sets executor_provenance to null, encodes it in declared field order and ' +
    'prints the domain-separated SHA-256 digest and the byte length. With --bytes, writes the exact signing ' +
    'bytes to stdout instead.';
  static override examples = [
    '<%= config.bin %> agent-task observation-digest observation.json --json',
    '<%= config.bin %> agent-task observation-digest observation.json --bytes | xxd | head',
  ];
  static override args = {
    file: Args.string({ description: 'Assertion JSON file, or - for stdin.', required: true }),
  };
  static override flags = {
    bytes: Flags.boolean({ description: 'Write the exact signing bytes to stdout (no newline); not with --json.' }),
  };

  async run(): Promise<{ digest: string; length: number }> {
    const { args, flags } = await this.parse(AgentTaskObservationDigest);
    if (flags.bytes && this.jsonEnabled()) {
      throw new AgentscmError('USAGE', '--bytes writes the raw signing bytes and cannot be combined with --json', {
        hint: 'use one of --bytes or --json',
      });
    }
    const result = digestObservationFile(args.file);
    if (flags.bytes) process.stdout.write(result.bytes);
    else {
      this.log(`observation digest: ${result.digest}`);
      this.log(`signing bytes:      ${counted(result.length, 'byte')}`);
    }
    return { digest: result.digest, length: result.length };
  }
}
