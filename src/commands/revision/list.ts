import { Flags } from '@oclif/core';

import { BaseCommand, listRepositoryFlag } from '../_base.js';
import { listRevisionsInStore, type RevisionListRow } from '../../native/listings.js';
import { withStore } from '../../tasks/store.js';

export default class RevisionList extends BaseCommand {
  static override summary = 'List the revisions of the store, or the versions of one Change.';
  static override description =
    'Read-only: every revision a repository recorded, oldest first, with its parent, entry count and size; with ' +
    "--change, that Change's versions in order. Each row names the repository by name and ID.";
  static override examples = [
    '<%= config.bin %> revision list',
    '<%= config.bin %> revision list --change fix-parser --json',
  ];
  static override flags = {
    change: Flags.string({ description: 'Only the revisions of this Change, one per version.', helpValue: 'ID' }),
    repository: listRepositoryFlag,
  };

  async run(): Promise<{ revisions: RevisionListRow[] }> {
    const { flags } = await this.parse(RevisionList);
    const list = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      listRevisionsInStore(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        change: flags.change,
      }),
    );
    if (list.revisions.length === 0) this.log('no revisions');
    for (const r of list.revisions) {
      const version = r.version === null ? '' : `${r.change ?? ''} v${r.version}  `;
      this.log(
        `${r.repository_name} (${r.repository})  ${version}${r.id}  parent ${r.parent ?? '(none)'}  ` +
          `${r.entry_count} ${r.entry_count === 1 ? 'entry' : 'entries'}`,
      );
    }
    return list;
  }
}
