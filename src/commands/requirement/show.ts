import { Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { showRequirement, type RequirementView } from '../../workflows/requirement.js';

export default class RequirementShow extends BaseCommand {
  static override summary = "Show a target's installed workflow requirement.";
  static override description =
    'Read-only: prints the requirement digest, the retained definition and its steps. A target without a ' +
    'requirement is REQUIREMENT_NOT_FOUND (exit 2).';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data requirement show --target main',
    '<%= config.bin %> requirement show --target main --json',
  ];
  static override flags = {
    target: Flags.string({ description: 'Protected target.', required: true, helpValue: 'NAME' }),
    repository: repositoryFlag,
  };

  async run(): Promise<RequirementView> {
    const { flags } = await this.parse(RequirementShow);
    const view = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      showRequirement(store, { repository: this.repositoryOf(flags.repository, store.dataDir), target: flags.target }),
    );
    this.log(`requirement_digest: ${view.requirement_digest}`);
    this.log(
      `target ${view.target} of ${view.repository}: workflow ${view.name}, installed at policy epoch ` +
        `${view.source.policy_epoch}`,
    );
    for (const step of view.steps)
      this.log(`  ${step.position + 1}. ${step.id} (${step.kind}${step.required ? '' : ', optional'})`);
    return view;
  }
}
