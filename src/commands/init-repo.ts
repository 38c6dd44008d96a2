import { Args, Flags } from '@oclif/core';

import { counted } from '../contracts/json/counted.js';
import { bindGitWorkTree } from '../git/work-tree-binding.js';
import { withStore } from '../tasks/store.js';
import { initRepo, type InitRepoResult } from '../workspace/init.js';
import type { InstructionFileOutcome } from '../workspace/instruction-block.js';
import { BaseCommand } from './_base.js';

/** How each instruction file outcome is shown (docs/workspace.md). */
const INSTRUCTION_ACTION: Record<InstructionFileOutcome['action'], (path: string) => string> = {
  created: (path) => `wrote ${path} (new file with the managed block)`,
  appended: (path) => `wrote ${path} (managed block appended)`,
  replaced: (path) => `wrote ${path} (managed block replaced)`,
  unchanged: (path) => `kept ${path} (managed block already current)`,
};

export default class InitRepo extends BaseCommand {
  static override description =
    'Create the native store if absent, register a repository, bind PATH as its workspace and checkpoint it onto ' +
    'target main. Unless --no-instructions is given, the managed agentscm instruction block is first written ' +
    'into AGENTS.md, .cursor/rules/agentscm.mdc and .github/copilot-instructions.md (replaced in place, other ' +
    'content kept), so the first revision holds it. A directory that is the top level of a git work tree is ' +
    'bound to it (--git requires one): .git/info/exclude is honoured, and submodules and attributes that make git ' +
    'change bytes are refused (docs/git.md "Binding a git work tree").';

  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data init-repo ./my-project --name my-project',
    '<%= config.bin %> init-repo --name demo --json',
    '<%= config.bin %> init-repo ./my-git-checkout --name app --git',
  ];

  static override args = {
    path: Args.string({
      description: 'Directory to bind as the workspace (default: the current directory).',
      required: false,
    }),
  };

  static override flags = {
    name: Flags.string({
      description: 'Repository name, unique in the store (^[A-Za-z0-9._-]{1,128}$).',
      required: true,
      helpValue: 'NAME',
    }),
    instructions: Flags.boolean({
      description:
        'Write the managed agentscm instruction block into AGENTS.md, .cursor/rules/agentscm.mdc and ' +
        '.github/copilot-instructions.md before the first revision (--no-instructions: leave the tree as it is).',
      allowNo: true,
      default: true,
    }),
    git: Flags.boolean({
      description:
        'Require PATH to be the top level of a git work tree and bind the workspace to it (without --git, a git ' +
        'work tree is detected and bound all the same).',
      default: false,
    }),
  };

  async run(): Promise<InitRepoResult> {
    const { args, flags } = await this.parse(InitRepo);
    const dataDir = this.resolveDataDir(flags['data-dir'], args.path ?? process.cwd());
    const result = withStore(dataDir, 'write', (store) =>
      initRepo(store, {
        path: args.path ?? process.cwd(),
        name: flags.name,
        instructions: flags.instructions,
        onProgress: this.progressSink,
        bindGit: (root, scan) => bindGitWorkTree(root, scan, flags.git),
      }),
    );
    this.log(
      `${result.resumed ? 'Adopted the finished' : 'Initialized'} repository ${result.name} (${result.repository})`,
    );
    this.log(`  workspace  ${result.workspace}`);
    this.log(`  data dir   ${result.data_dir}`);
    this.log(
      `  revision   ${result.revision} on target ${result.target} (${counted(result.files, 'file')}, ` +
        `${counted(result.total_bytes, 'byte')})`,
    );
    this.log(`  policy epoch ${result.policy_epoch}`);
    if (result.git_work_tree !== null) this.log(`  git work tree ${result.git_work_tree}`);
    if (result.instruction_files.length === 0) this.log('  instruction files not written (--no-instructions)');
    for (const file of result.instruction_files) this.log(`  ${INSTRUCTION_ACTION[file.action](file.path)}`);
    return result;
  }
}
