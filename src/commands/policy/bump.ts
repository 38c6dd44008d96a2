import { BaseCommand, repositoryFlag } from '../_base.js';
import type { PolicyBump } from '../../native/policy.js';
import { bumpPolicy } from '../../native/views.js';
import { withStore } from '../../tasks/store.js';

export default class PolicyBumpCommand extends BaseCommand {
  static override description =
    "Increment a repository's policy epoch by one; evidence bound to an older epoch stops being current.";

  static override examples = [
    '<%= config.bin %> policy bump',
    '<%= config.bin %> policy bump --repository demo --json',
  ];

  static override flags = {
    repository: repositoryFlag,
  };

  async run(): Promise<PolicyBump> {
    const { flags } = await this.parse(PolicyBumpCommand);
    const bump = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      bumpPolicy(store.authority(), { repository: this.repositoryOf(flags.repository, store.dataDir) }),
    );
    this.log(`policy epoch of ${bump.repository}: ${bump.previous_epoch} → ${bump.policy_epoch}`);
    return bump;
  }
}
