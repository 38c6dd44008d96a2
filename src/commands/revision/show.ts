import { Args } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { displayText } from '../../contracts/display-text.js';
import { showRevision, type RevisionView } from '../../native/views.js';
import { withStore } from '../../tasks/store.js';

export default class RevisionShow extends BaseCommand {
  static override description =
    'Show an immutable revision: parent, size and every entry (path, mode, size, blob digest).';

  static override examples = [
    '<%= config.bin %> revision show 3f9c…e1 --json',
    '<%= config.bin %> revision show REV --repository demo',
  ];

  static override args = {
    revision: Args.string({
      description: 'Revision ID (64 lowercase hex), or a unique prefix of at least 8 hex digits.',
      required: true,
    }),
  };

  static override flags = {
    repository: repositoryFlag,
  };

  async run(): Promise<RevisionView> {
    const { args, flags } = await this.parse(RevisionShow);
    const view = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      showRevision(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        revision: args.revision,
      }),
    );
    this.log(`revision ${view.id}`);
    this.log(`repository ${view.repository}`);
    this.log(`parent ${view.parent ?? '(none)'}`);
    this.log(`${view.entry_count} entries, ${view.total_bytes} bytes`);
    for (const entry of view.entries)
      this.log(`${entry.mode.padEnd(10)} ${String(entry.size).padStart(10)} ${entry.blob} ${displayText(entry.path)}`);
    return view;
  }
}
