import { BaseCommand, listRepositoryFlag } from '../_base.js';
import { listChangesInStore, type ChangeListItem } from '../../native/listings.js';
import { withStore } from '../../tasks/store.js';

export default class ChangeList extends BaseCommand {
  static override summary = 'List the Changes of the store.';
  static override description =
    'Read-only: every Change with its repository (name and ID), current version and current revision, by ' +
    'repository and creation order.';
  static override examples = [
    '<%= config.bin %> change list',
    '<%= config.bin %> change list --repository demo --json',
  ];
  static override flags = {
    repository: listRepositoryFlag,
  };

  async run(): Promise<{ changes: ChangeListItem[] }> {
    const { flags } = await this.parse(ChangeList);
    const list = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      listChangesInStore(store.authority(), { repository: this.repositoryOf(flags.repository, store.dataDir) }),
    );
    if (list.changes.length === 0)
      this.log('no Changes (a Change is created by its first `agentscm checkpoint --change ID`)');
    for (const c of list.changes)
      this.log(`${c.repository_name} (${c.repository})  ${c.id}  v${c.current_version}  ${c.current_revision}`);
    return list;
  }
}
