import { Args } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { catRevisionFile, catRevisionFileJson, type CatJsonView } from '../../native/views.js';
import { withStore } from '../../tasks/store.js';

export default class RevisionCat extends BaseCommand {
  static override description =
    'Write the exact bytes of one file of a revision to stdout (a symlink gives its target). With --json, the ' +
    'file comes base64-encoded in one document (at most 16 MiB).';

  static override examples = [
    '<%= config.bin %> revision cat REV src/main.ts > main.ts',
    '<%= config.bin %> revision cat REV README.md --json',
  ];

  static override args = {
    revision: Args.string({
      description: 'Revision ID (64 lowercase hex), or a unique prefix of at least 8 hex digits.',
      required: true,
    }),
    path: Args.string({ description: 'Canonical relative path of the file.', required: true }),
  };

  static override flags = {
    repository: repositoryFlag,
  };

  async run(): Promise<CatJsonView | undefined> {
    const { args, flags } = await this.parse(RevisionCat);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const query = {
      repository: this.repositoryOf(flags.repository, dataDir),
      revision: args.revision,
      path: args.path,
    };
    return withStore(dataDir, 'read', (store) => {
      if (this.jsonEnabled()) return catRevisionFileJson(store.authority(), query);
      catRevisionFile(store.authority(), query, (chunk) => process.stdout.write(chunk));
      return undefined;
    });
  }
}
