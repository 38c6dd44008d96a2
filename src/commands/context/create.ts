import { Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { createReviewContextInStore, type CreatedContextView } from '../../native/review-contexts.js';
import { withStore } from '../../tasks/store.js';

export default class ContextCreate extends BaseCommand {
  static override description =
    "Create the command/v1 review context of a Change's current version: it binds the repository, Change and " +
    "version, revision, current policy epoch, the recipe's digest and its toolchain and environment. Prints the " +
    'context_digest a command step names.';

  static override examples = [
    '<%= config.bin %> context create --change fix-parser --runner skills/tests/runner.json',
    '<%= config.bin %> --data-dir ./agentscm-data context create --change fix-parser --runner ' +
      'skills/tests/runner.json --json',
  ];

  static override flags = {
    change: Flags.string({
      description: 'Change ID; its current version and revision are bound.',
      required: true,
      helpValue: 'ID',
    }),
    runner: Flags.string({
      description:
        "The recipe's full native source path in the Change's current revision (e.g. skills/tests/runner.json), " +
        'not the path relative to the skill.',
      required: true,
      helpValue: 'PATH',
    }),
    repository: repositoryFlag,
  };

  async run(): Promise<CreatedContextView> {
    const { flags } = await this.parse(ContextCreate);
    const view = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      createReviewContextInStore({
        store,
        repository: this.repositoryOf(flags.repository, store.dataDir),
        change: flags.change,
        runner: flags.runner,
      }),
    );
    this.log(view.context_digest);
    return view;
  }
}
