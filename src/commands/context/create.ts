import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
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
    repository: Flags.string({
      description: 'Repository ID or name (default: the only repository of the store).',
      helpValue: 'ID_OR_NAME',
    }),
  };

  async run(): Promise<CreatedContextView> {
    const { flags } = await this.parse(ContextCreate);
    const view = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      createReviewContextInStore({ store, repository: flags.repository, change: flags.change, runner: flags.runner }),
    );
    this.log(view.context_digest);
    return view;
  }
}
