import { Args, Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { verifyCommit } from '../../git/verify.js';
import { withStore } from '../../tasks/store.js';

export default class GitVerify extends BaseCommand {
  static override summary = 'Say which landing, Change, revision and receipt produced a git commit.';
  static override description =
    "Reads the commit's Agentscm-* trailers, checks them against the authority's records (the landing, its Change, " +
    "revision and receipt; or the exported revision), and recomputes the revision's git tree from the authority to " +
    'check that it is the commit\'s tree (docs/git.md "Verifying a commit"). GIT_COMMIT_UNPROVEN (exit 1) otherwise.';
  static override examples = [
    '<%= config.bin %> git verify HEAD --git-repo ../app',
    '<%= config.bin %> git verify 3f786850e387550fdab836ed7e6dc881de23001b --json',
  ];
  static override args = {
    commit: Args.string({ description: 'Commit (any name git resolves).', required: true }),
  };
  static override flags = {
    'git-repo': Flags.string({ description: 'Git work tree (default: the current directory).', helpValue: 'PATH' }),
    repository: repositoryFlag,
  };

  async run(): Promise<JsonObject> {
    const { args, flags } = await this.parse(GitVerify);
    const answer = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      verifyCommit(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        gitRepo: flags['git-repo'] ?? process.cwd(),
        commit: args.commit,
      }),
    );
    this.log(`commit ${answer.commit}: tree ${answer.tree} is revision ${answer.revision}`);
    if (answer.kind === 'landing')
      this.log(
        `  landing ${String(answer.landing_id)} of Change ${answer.change_id ?? ''} version ` +
          `${answer.change_version ?? ''} on ${answer.target ?? ''}, receipt ${answer.receipt ?? ''}`,
      );
    else {
      const candidate =
        answer.change_id === null ? '' : ` Change ${answer.change_id} version ${answer.change_version ?? ''}`;
      this.log(`  exported${candidate}`);
    }
    return { ...answer };
  }
}
