import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { signObservationFile } from '../../collector/observation-files.js';
import { formatJson } from '../../contracts/json/canonical-json.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { assertionToJson } from '../../contracts/task/result.js';

export default class AgentTaskSignObservation extends BaseCommand {
  static override summary = 'Sign a registered observation with an executor key file.';
  static override description =
    'Decodes the assertion strictly, checks that the key file is owner-private and that its key is the ' +
    'verification_key_id the executor binding names, then prints the assertion with executor_provenance ' +
    '(observation_digest, signature) filled.';
  static override examples = [
    '<%= config.bin %> agent-task sign-observation observation.json --key ~/.agentscm-collector/signing-key.json ' +
      '> signed.json',
  ];
  static override args = {
    file: Args.string({
      description: 'Assertion JSON file (trust_class registered_executor_observation), or - for stdin.',
      required: true,
    }),
  };
  static override flags = {
    key: Flags.string({ description: 'Key file written by `agent-task key`.', required: true, helpValue: 'KEYFILE' }),
  };

  async run(): Promise<JsonObject> {
    const { args, flags } = await this.parse(AgentTaskSignObservation);
    const signed = assertionToJson(signObservationFile(args.file, flags.key));
    this.log(formatJson(signed));
    return signed;
  }
}
