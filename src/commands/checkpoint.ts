import { Flags } from '@oclif/core';

import { displayText, UNSAFE_TEXT_MARKER } from '../contracts/display-text.js';
import { ERROR_CODES } from '../contracts/errors.js';
import { counted } from '../contracts/json/counted.js';
import { oneLine } from '../contracts/message-text.js';
import { bindGitWorkTree } from '../git/work-tree-binding.js';
import { checkGenericId } from '../native/checks.js';
import { openStore, withStore } from '../tasks/store.js';
import { checkpointWithContexts, type CheckpointWithContexts } from '../workflows/checkpoint-contexts.js';
import { gitCheckpointWithContexts } from '../workflows/git-checkpoint-contexts.js';
import type { CheckpointResult } from '../workspace/checkpoint.js';
import { workspaceDataDir } from '../workspace/locate.js';
import { BaseCommand } from './_base.js';
import { requireWorkspaceRepository, workspaceRepositoryFlag } from './_bound-repository.js';

export default class Checkpoint extends BaseCommand {
  static override description =
    'Record the workspace as an immutable revision and append it to a Change as its next version (the first use ' +
    'creates the Change at version 1). An unchanged tree makes no new version. File names are recorded ' +
    'byte-exact; a name added with a control or bidirectional formatting character (e.g. U+202E) is reported on ' +
    'stderr, escaped and marked [!], and in the unsafe_names field of --json. When the installed requirement of ' +
    '--target has command steps, the review context of the new version is created for each recipe and printed ' +
    '(docs/workspace.md "Contexts of the new version"); a failure there keeps the checkpoint and exits non-zero.';

  static override examples = [
    '<%= config.bin %> checkpoint --change fix-parser',
    '<%= config.bin %> checkpoint --change fix-parser --workspace ./my-project --full --json',
    '<%= config.bin %> checkpoint --change fix-parser --target release',
    '<%= config.bin %> checkpoint --change fix-parser --from-git agent/fix-parser',
  ];

  static override flags = {
    change: Flags.string({ description: 'Change ID (^[A-Za-z0-9._-]{1,128}$).', required: true, helpValue: 'ID' }),
    workspace: Flags.string({
      description: 'Workspace directory (default: the nearest one at or above the current directory).',
      helpValue: 'PATH',
    }),
    full: Flags.boolean({ description: 'Rehash every file instead of trusting the stat cache.', default: false }),
    target: Flags.string({
      description: 'Target whose installed requirement says which review contexts the new version needs.',
      default: 'main',
      helpValue: 'NAME',
    }),
    repository: workspaceRepositoryFlag,
    'from-git': Flags.string({
      description:
        'Record the tree of this git commit (anything git resolves) instead of the workspace files; neither the ' +
        'work tree nor the workspace state is touched (docs/git.md "Checkpointing a git commit").',
      helpValue: 'REV',
    }),
    'git-repo': Flags.string({
      description: 'Top level of the git repository --from-git reads (default: the workspace root).',
      helpValue: 'PATH',
      dependsOn: ['from-git'],
    }),
  };

  async run(): Promise<CheckpointWithContexts> {
    const { flags } = await this.parse(Checkpoint);
    const explicitDataDir = flags['data-dir'] === undefined ? undefined : this.resolveDataDir(flags['data-dir']);
    // The Change ID is refused before the workspace is looked for, as checkpointWorkspace does.
    checkGenericId(flags.change, 'Change ID');
    const dataDir = explicitDataDir ?? workspaceDataDir(flags.workspace);
    requireWorkspaceRepository(dataDir, flags);
    const result =
      flags['from-git'] === undefined
        ? withStore(dataDir, 'write', (store) =>
            checkpointWithContexts(store, {
              change: flags.change,
              workspace: flags.workspace,
              full: flags.full,
              onProgress: this.progressSink,
              target: flags.target,
              checkScan: (root, scan) => {
                bindGitWorkTree(root, scan, false);
              },
            }),
          )
        : await this.fromGit(dataDir, flags['from-git'], flags);
    if (result.reconciled !== null)
      this.log(
        `An interrupted earlier operation was ${result.reconciled === 'committed' ? 'completed' : 'discarded'}.`,
      );
    if (result.created) {
      this.log(`Change ${result.change} version ${result.version}: revision ${result.revision}`);
      this.log(
        `  previous revision ${result.previous_revision ?? '(none)'}; generation ${result.generation}; ` +
          `${result.hashed_files} of ${counted(result.files, 'file')} hashed`,
      );
    } else {
      this.log(
        `Change ${result.change} already at this tree: version ${result.version}, revision ${result.revision} ` +
          `(no new version)`,
      );
    }
    this.warnUnsafeNames(result.unsafe_names);
    for (const c of result.contexts)
      this.log(
        `context ${c.context_digest} (step${c.steps.length > 1 ? 's' : ''} ${c.steps.join(', ')}, ` +
          `recipe ${c.recipe_path})`,
      );
    const failure = result.context_error;
    if (failure !== null) {
      process.stderr.write(
        `error[${failure.code}]: the checkpoint is recorded, but the review contexts of target ${result.target} ` +
          `were not created: ${oneLine(failure.message)}; ${oneLine(failure.hint)}\n`,
      );
      process.exitCode = ERROR_CODES[failure.code].exit;
    }
    return result;
  }

  /** `--from-git REV`: the commit's tree as the Change's next version (src/git/checkpoint-from-git.ts). */
  private async fromGit(
    dataDir: string,
    rev: string,
    flags: { change: string; workspace?: string; target: string; 'git-repo'?: string },
  ): Promise<CheckpointWithContexts> {
    const store = openStore(dataDir, { mode: 'write' });
    try {
      const result = await gitCheckpointWithContexts(store, {
        change: flags.change,
        rev,
        gitRepo: flags['git-repo'],
        workspace: flags.workspace,
        onProgress: this.progressSink,
        target: flags.target,
      });
      this.log(`git commit ${result.git.commit} (tree ${result.git.tree})`);
      return result;
    } finally {
      store.close();
    }
  }

  /**
   * A revision that gains a name with a control or bidirectional formatting character is recorded
   * as it is, and said on stderr (with --json too: the `unsafe_names` field holds the exact names),
   * each name escaped and marked as every human output shows it (docs/workspace.md).
   */
  private warnUnsafeNames(unsafe: CheckpointResult['unsafe_names']): void {
    if (unsafe.count === 0) return;
    const lines = [
      `warning: this checkpoint adds ${counted(unsafe.count, 'name')} with control or bidirectional formatting ` +
        `characters, which can make a name read as another; shown escaped and marked ${UNSAFE_TEXT_MARKER}:`,
      ...unsafe.paths.map((path) => `  ${displayText(path)}`),
      ...(unsafe.count > unsafe.paths.length ? [`  … and ${unsafe.count - unsafe.paths.length} more`] : []),
    ];
    process.stderr.write(`${lines.join('\n')}\n`);
  }
}
