import { BaseCommand, repositoryFlag } from '../_base.js';
import { showPolicy, type PolicyView } from '../../native/views.js';
import { withStore } from '../../tasks/store.js';

export default class PolicyShow extends BaseCommand {
  static override description = "Show the store's authority_id, a repository's current policy epoch and its targets.";

  static override examples = [
    '<%= config.bin %> policy show',
    '<%= config.bin %> policy show --repository demo --json',
  ];

  static override flags = {
    repository: repositoryFlag,
  };

  async run(): Promise<PolicyView> {
    const { flags } = await this.parse(PolicyShow);
    const view = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      showPolicy(store.authority(), { repository: this.repositoryOf(flags.repository, store.dataDir) }),
    );
    this.log(`authority ${view.authority_id}`);
    this.log(`repository ${view.name} (${view.repository}): policy epoch ${view.policy_epoch}`);
    for (const target of view.targets) this.log(`  target ${target.name} → ${target.revision}`);
    return view;
  }
}
