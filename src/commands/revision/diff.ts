import { Args } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { displayText } from '../../contracts/display-text.js';
import { diffRevisionView, type RevisionDiffView } from '../../native/views.js';
import { withStore } from '../../tasks/store.js';

export default class RevisionDiff extends BaseCommand {
  static override description =
    'List the files that differ between two revisions: added, deleted, or modified (content or kind: file, ' +
    'executable, symlink), in path order. Directories whose trees are equal are not read.';

  static override examples = [
    '<%= config.bin %> revision diff 3f9c12ab 7d01e5c2',
    '<%= config.bin %> revision diff FROM TO --repository demo --json',
  ];

  static override args = {
    from: Args.string({
      description: 'Revision to compare from (64 lowercase hex, or a unique prefix of at least 8 hex digits).',
      required: true,
    }),
    to: Args.string({
      description: 'Revision to compare to (64 lowercase hex, or a unique prefix of at least 8 hex digits).',
      required: true,
    }),
  };

  static override flags = {
    repository: repositoryFlag,
  };

  async run(): Promise<RevisionDiffView> {
    const { args, flags } = await this.parse(RevisionDiff);
    const view = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      diffRevisionView(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        from: args.from,
        to: args.to,
      }),
    );
    const mark = { added: 'A', deleted: 'D', modified: 'M' } as const;
    for (const change of view.changes) {
      const kinds =
        change.change === 'modified' && change.before !== change.after
          ? ` (${change.before ?? ''} -> ${change.after ?? ''})`
          : ` (${change.after ?? change.before ?? ''})`;
      this.log(`${mark[change.change]} ${displayText(change.path)}${kinds}`);
    }
    if (view.changes.length === 0) this.log('no differences');
    return view;
  }
}
