import { Args } from '@oclif/core';

import { BaseCommand } from '../../_base.js';
import { installCollectorProfileFile, type InstallProfileResult } from '../../../tasks/collector/profiles.js';
import { withStore } from '../../../tasks/store.js';

export default class AgentTaskProfileInstall extends BaseCommand {
  static override summary =
    'Install an immutable collector profile: one enrolled executor epoch may collect one command step.';
  static override description =
    'Reads a CollectorProfile v1 (strict JSON) and installs it under its collector_profile_id (the ' +
    'agentscm.collector-profile.v1 digest of its canonical form). The profile must name the exact current epoch ' +
    'of an enrolled executor registration with the same repository, workflow profile, step and key; a command ' +
    'step of an installed target requirement whose recipe file has SHA-256 recipe_digest; and, as recipe, ' +
    'exactly that recipe decoded. Enrollment alone never makes an executor a collector; installing is this ' +
    'separate act. Profiles are immutable: installing the same profile again changes nothing, and re-enrollment ' +
    'needs a new profile.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task profile install unit-tests.profile.json',
    '<%= config.bin %> agent-task profile install unit-tests.profile.json --json',
  ];
  static override args = {
    file: Args.string({ description: 'CollectorProfile v1 JSON file (docs/collector-profiles.md).', required: true }),
  };

  async run(): Promise<InstallProfileResult> {
    const { args, flags } = await this.parse(AgentTaskProfileInstall);
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      installCollectorProfileFile(store, args.file, Date.now()),
    );
    this.log(
      `${result.installed ? 'installed' : 'already installed'} collector profile ${result.collector_profile_id}`,
    );
    if (result.bound_by !== null)
      this.log(
        `  bound by target ${result.bound_by.target} (requirement ${result.bound_by.requirement_digest}), recipe ` +
          `${result.bound_by.recipe_path}`,
      );
    return result;
  }
}
