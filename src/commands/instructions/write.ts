import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import {
  INSTRUCTION_FILES,
  writeInstructionBlocks,
  type InstructionFileOutcome,
} from '../../workspace/instruction-block.js';
import { locateWorkspace } from '../../workspace/locate.js';

export default class InstructionsWrite extends BaseCommand {
  static override summary =
    'Write the managed agentscm instruction block into AGENTS.md, the Cursor rule and the Copilot instructions ' +
    'of a workspace.';
  static override description =
    `Writes the short "Workflow tasks" block (the discover-then-fetch flow, what a Stop block means and what to ` +
    `run next) between agentscm's marker lines into ${INSTRUCTION_FILES.join(', ')}. A file without the block gets ` +
    `it appended (a missing file is created; a new Cursor rule gets front matter with alwaysApply: true); a file ` +
    `with the block gets it replaced in place; every other byte of every file is left as it was. init-repo writes ` +
    `the same block before the first revision; this command is for a repository already registered (checkpoint the ` +
    `result like any edit). A file with unbalanced or repeated markers is refused (INSTRUCTION_BLOCK_INVALID) and ` +
    `no file is changed.`;
  static override examples = [
    '<%= config.bin %> instructions write',
    '<%= config.bin %> instructions write --workspace ./my-project --json',
  ];
  static override flags = {
    workspace: Flags.string({
      description: 'Workspace directory (default: the nearest one at or above the current directory).',
      helpValue: 'PATH',
    }),
  };

  async run(): Promise<{ workspace: string; files: InstructionFileOutcome[] }> {
    const { flags } = await this.parse(InstructionsWrite);
    const workspace = locateWorkspace(flags.workspace);
    const files = writeInstructionBlocks(workspace);
    for (const file of files) this.log(`${file.action.padEnd(9)} ${file.path}`);
    return { workspace, files };
  }
}
