import { Flags } from '@oclif/core';

import { requirementStepFlags, runtimeIdentityFlags } from '../_profile-flags.js';
import { BaseCommand } from '../../_base.js';
import { createCollectorProfile, type ProfileCreateResult } from '../../../collector/collector-profile-build.js';
import { formatJson } from '../../../contracts/json/canonical-json.js';
import { openStore } from '../../../tasks/store.js';

export default class AgentTaskProfileCreate extends BaseCommand {
  static override summary =
    'Build the command collector profile of one step for an enrolled key, without installing it.';
  static override description =
    "Reads the step's recipe from the target's installed requirement, finds the current enrollment of the key " +
    '(--state-dir DIR: the key in DIR; or --public-key HEX) for the step and observes the runtime identity on the ' +
    "recipe's image (never pulled). Prints the CollectorProfile v1 JSON, or writes it to --out (a new file, never " +
    'overwritten); `agent-task profile install FILE` installs it. Changes nothing in the store ' +
    '(docs/collector-profiles.md "Building a profile").';
  static override examples = [
    '<%= config.bin %> agent-task profile create --step unit-tests --state-dir ~/.agentscm-collector ' +
      '--out unit.profile.json',
    '<%= config.bin %> agent-task profile create --step unit-tests --public-key 3b6a27bc…29 --docker /usr/bin/docker',
  ];
  static override flags = {
    step: Flags.string({ description: 'Command step of the target requirement.', required: true, helpValue: 'ID' }),
    'state-dir': Flags.string({
      description: 'Collector state directory whose signing-key.json is enrolled (or --public-key).',
      helpValue: 'DIR',
      exclusive: ['public-key'],
    }),
    'public-key': Flags.string({
      description: 'The enrolled Ed25519 public key, 64 lowercase hex (or --state-dir).',
      helpValue: 'HEX',
    }),
    executor: Flags.string({
      description: 'Executor id of the enrollment (default: any current enrollment of the key for the step).',
      helpValue: 'ID',
    }),
    ...requirementStepFlags,
    ...runtimeIdentityFlags,
    out: Flags.string({ description: 'Write the profile to this new file instead of stdout.', helpValue: 'FILE' }),
  };

  async run(): Promise<ProfileCreateResult> {
    const { flags } = await this.parse(AgentTaskProfileCreate);
    const store = openStore(this.resolveDataDir(flags['data-dir']), { mode: 'read' });
    let result: ProfileCreateResult;
    try {
      result = await createCollectorProfile({
        store,
        step: flags.step,
        target: flags.target,
        repository: flags.repository,
        stateDir: flags['state-dir'],
        publicKey: flags['public-key'],
        executor: flags.executor,
        docker: flags.docker,
        dockerSocket: flags['docker-socket'],
        out: flags.out,
      });
    } finally {
      store.close();
    }
    if (result.out === null) {
      // The profile itself is the output, so that `profile create … > FILE` gives an installable file.
      if (!this.jsonEnabled()) process.stdout.write(`${formatJson(result.profile)}\n`);
    } else {
      this.log(`wrote ${result.out}: collector profile ${result.collector_profile_id} (not installed)`);
      this.log(`  install it with: agentscm agent-task profile install ${result.out}`);
    }
    return result;
  }
}
