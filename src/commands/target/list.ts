import { BaseCommand, listRepositoryFlag } from '../_base.js';
import { listTargetsInStore, type TargetListItem } from '../../native/listings.js';
import { withStore } from '../../tasks/store.js';

export default class TargetList extends BaseCommand {
  static override summary = 'List the protected targets of the store.';
  static override description =
    'Read-only: every target with its repository (name and ID), the revision it points at and its installed ' +
    'workflow requirement (or none).';
  static override examples = [
    '<%= config.bin %> target list',
    '<%= config.bin %> target list --repository demo --json',
  ];
  static override flags = {
    repository: listRepositoryFlag,
  };

  async run(): Promise<{ targets: TargetListItem[] }> {
    const { flags } = await this.parse(TargetList);
    const list = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      listTargetsInStore(store.authority(), { repository: this.repositoryOf(flags.repository, store.dataDir) }),
    );
    if (list.targets.length === 0) this.log('no targets');
    for (const t of list.targets) {
      this.log(
        `${t.repository_name} (${t.repository})  ${t.name}  ${t.revision}  requirement ` +
          `${t.requirement_digest ?? '(none)'}`,
      );
    }
    return list;
  }
}
