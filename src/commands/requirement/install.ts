import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { installRequirementFile, type RequirementInstallResult } from '../../workflows/requirement.js';

export default class RequirementInstall extends BaseCommand {
  static override summary =
    "Install a workflow definition as a target's required workflow and print its requirement digest.";
  static override description =
    'Compiles the definition against the native authority exactly as `skill-workflow plan` does (repository, ' +
    'revision, current policy epoch, packaged skill bytes, graph, command bindings) and, in the same authority ' +
    'transaction, makes it the required workflow of the target. The requirement digest is the plan digest of the ' +
    'compiled definition. Reinstalling the same definition changes nothing.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data requirement install --target main workflow.json',
    '<%= config.bin %> requirement install --target main workflow.json --json',
  ];
  static override args = {
    file: Args.string({ description: 'Workflow definition JSON file.', required: true }),
  };
  static override flags = {
    target: Flags.string({
      description: 'Protected target the workflow is required for.',
      required: true,
      helpValue: 'NAME',
    }),
    repository: Flags.string({
      description: "Repository ID or name; must be the one the definition binds (default: the definition's).",
      helpValue: 'ID_OR_NAME',
    }),
  };

  async run(): Promise<RequirementInstallResult> {
    const { args, flags } = await this.parse(RequirementInstall);
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      installRequirementFile(store, { repository: flags.repository, target: flags.target, file: args.file }),
    );
    this.log(`requirement_digest: ${result.requirement_digest}`);
    this.log(
      `target ${result.target} of ${result.repository} requires workflow ${result.name} (${result.steps.length} ` +
        `steps)${result.changed ? '' : ' — unchanged'}`,
    );
    return result;
  }
}
