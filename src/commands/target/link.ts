import { Args, Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { linkTarget } from '../../git/land-mirror.js';
import { withStore } from '../../tasks/store.js';

export default class TargetLink extends BaseCommand {
  static override summary = "Mirror a target's landings to a git branch.";
  static override description =
    'Records, in the authority, that every later landing of the target is also written as one git commit on BRANCH ' +
    'of the git work tree at --git-repo (docs/git.md "Landing to git"): its tree is byte for byte the landed ' +
    'revision, its parent the previous mirrored commit (the branch as it is now for the first), its trailers name ' +
    "the Change, revision, receipt and landing. Author and committer are --author, or git's own identity read " +
    "now. --sign signs with git's signing configuration (the commit ID is then reproducible only with the same key). " +
    '--push pushes the branch to --remote after each mirror. Linking again replaces the link.';
  static override examples = [
    '<%= config.bin %> target link main --git-repo ../app --branch main',
    '<%= config.bin %> target link main --git-repo ../app --branch main --remote origin --push --json',
  ];
  static override args = {
    name: Args.string({ description: 'Target to link.', required: true }),
  };
  static override flags = {
    'git-repo': Flags.string({ description: 'Git work tree to write to.', required: true, helpValue: 'PATH' }),
    branch: Flags.string({ description: 'Branch the landings move.', required: true, helpValue: 'BRANCH' }),
    remote: Flags.string({ description: 'Remote to push the branch to (with --push).', helpValue: 'REMOTE' }),
    author: Flags.string({ description: 'Author and committer, "Name <email>".', helpValue: '"NAME <EMAIL>"' }),
    sign: Flags.boolean({ description: "Sign the commits with git's signing configuration.", default: false }),
    push: Flags.boolean({ description: 'Push the branch to --remote after each mirror.', default: false }),
    repository: repositoryFlag,
  };

  async run(): Promise<JsonObject> {
    const { args, flags } = await this.parse(TargetLink);
    const link = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      linkTarget(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        target: args.name,
        gitRepo: flags['git-repo'],
        branch: flags.branch,
        remote: flags.remote,
        author: flags.author,
        sign: flags.sign,
        push: flags.push,
        nowMs: Date.now(),
      }),
    );
    this.log(
      `linked: target ${link.target} mirrors to ${link.git_repo} branch ${link.branch} (at ` +
        `${link.base_commit ?? 'no commit yet'}) as ${link.author}`,
    );
    return { ...link };
  }
}
