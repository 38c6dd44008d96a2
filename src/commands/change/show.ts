import { Args } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import type { Change } from '../../native/changes.js';
import { showChange } from '../../native/views.js';
import { withStore } from '../../tasks/store.js';

export default class ChangeShow extends BaseCommand {
  static override description =
    'Show a Change: its current version and every version with its revision and the revision it replaced.';

  static override examples = [
    '<%= config.bin %> change show fix-parser',
    '<%= config.bin %> change show fix-parser --repository demo --json',
  ];

  static override args = {
    id: Args.string({ description: 'Change ID.', required: true }),
  };

  static override flags = {
    repository: repositoryFlag,
  };

  async run(): Promise<Change> {
    const { args, flags } = await this.parse(ChangeShow);
    const change = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      showChange(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        change: args.id,
      }),
    );
    this.log(`Change ${change.id} of repository ${change.repository}: current version ${change.current_version}`);
    for (const version of change.versions) {
      this.log(`  v${version.version} ${version.revision} (previous ${version.previous_revision ?? 'none'})`);
    }
    return change;
  }
}
