import { BaseCommand, listRepositoryFlag } from '../_base.js';
import { listGrantsInStore, type Grant } from '../../native/grants.js';
import { withStore } from '../../tasks/store.js';

export default class GrantList extends BaseCommand {
  static override summary = 'List grants with their actor, scope, generation and state (never a token).';
  static override description =
    'Reads the native authority only. Without --repository every grant of the store is listed, oldest first.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data grant list',
    '<%= config.bin %> grant list --repository demo --json',
  ];
  static override flags = {
    repository: listRepositoryFlag,
  };

  async run(): Promise<{ grants: Grant[] }> {
    const { flags } = await this.parse(GrantList);
    const grants = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      listGrantsInStore(store, this.repositoryOf(flags.repository, store.dataDir)),
    );
    if (grants.length === 0) this.log('no grants');
    for (const g of grants)
      this.log(
        `${g.grant_id}  ${g.owner_id}/${g.agent_id}  repository ${g.repository}  scope ${g.scope}  generation ` +
          `${g.generation}  ${g.state}`,
      );
    return { grants };
  }
}
