import { Flags } from '@oclif/core';
import { readWorkspaceStatus } from '../workspace/status.js';
import type { WorkspaceStatus } from '../workspace/status.js';
import { BaseCommand } from './_base.js';

export default class Status extends BaseCommand {
  static override description =
    'Compare the workspace with its base revision without writing anything: clean or dirty with the changed paths, base revision, generation, pending operation, scan completeness.';

  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --workspace ./my-project --json'];

  static override flags = {
    workspace: Flags.string({ description: 'Workspace directory (default: the nearest one at or above the current directory).', helpValue: 'PATH' }),
  };

  async run(): Promise<WorkspaceStatus> {
    const { flags, metadata } = await this.parse(Status);
    const explicitDataDir = metadata.flags['data-dir']?.setFromDefault === true ? undefined : this.resolveDataDir(flags['data-dir']);
    const status = readWorkspaceStatus({ workspace: flags.workspace, dataDir: explicitDataDir });
    this.log(`Workspace ${status.workspace} (repository ${status.repository}, ${status.state})`);
    this.log(`  base revision ${status.base_revision ?? '(none)'}, generation ${status.generation}`);
    if (status.pending_operation !== null) this.log(`  pending operation: ${status.pending_operation.kind} of revision ${status.pending_operation.revision}`);
    if (!status.complete) this.log(`  scan INCOMPLETE: ${status.incomplete_reason ?? ''}`);
    this.log(status.clean ? '  clean' : `  dirty: ${status.changes.length} changed path(s)`);
    for (const change of status.changes) this.log(`    ${change.kind.padEnd(8)} ${change.path}`);
    return status;
  }
}
