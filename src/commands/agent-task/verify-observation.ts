import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { verifyObservationFile } from '../../collector/observation-files.js';
import type { ObservationVerification } from '../../contracts/collector/observation.js';

export default class AgentTaskVerifyObservation extends BaseCommand {
  static override summary = 'Verify the signature of a registered observation (exit 0 valid, 1 invalid).';
  static override description =
    'Recomputes the observation digest, checks that it equals executor_provenance.observation_digest, that the ' +
    'public key is the one the executor binding names, and verifies the Ed25519 signature strictly (RFC 8032, ' +
    'small-order keys refused). A valid signature is not admission: enrollment currency is checked separately.';
  static override examples = [
    '<%= config.bin %> agent-task verify-observation signed.json --public-key ' +
      '3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29 --json',
  ];
  static override args = {
    file: Args.string({ description: 'Signed assertion JSON file, or - for stdin.', required: true }),
  };
  static override flags = {
    'public-key': Flags.string({
      description: 'Ed25519 public key, 64 lowercase hex.',
      required: true,
      helpValue: 'HEX',
    }),
  };

  async run(): Promise<ObservationVerification> {
    const { args, flags } = await this.parse(AgentTaskVerifyObservation);
    const result = verifyObservationFile(args.file, flags['public-key']);
    this.log(
      `valid: observation_digest ${result.observation_digest}, verification_key_id ${result.verification_key_id}`,
    );
    return result;
  }
}
