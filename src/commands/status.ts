import { Flags } from '@oclif/core';

import { displayText } from '../contracts/display-text.js';
import { counted } from '../contracts/json/counted.js';
import { withStore } from '../tasks/store.js';
import { workspaceDataDir } from '../workspace/locate.js';
import { readWorkspaceStatus, type WorkspaceStatus } from '../workspace/status.js';
import { BaseCommand } from './_base.js';
import { requireWorkspaceRepository, workspaceRepositoryFlag } from './_bound-repository.js';

export default class Status extends BaseCommand {
  static override description =
    'Compare the workspace with its base revision without writing anything: clean or dirty with the changed ' +
    'paths, base revision, generation, pending operation, scan completeness.';

  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --workspace ./my-project --json'];

  static override flags = {
    workspace: Flags.string({
      description: 'Workspace directory (default: the nearest one at or above the current directory).',
      helpValue: 'PATH',
    }),
    repository: workspaceRepositoryFlag,
  };

  async run(): Promise<WorkspaceStatus> {
    const { flags } = await this.parse(Status);
    const explicitDataDir = flags['data-dir'] === undefined ? undefined : this.resolveDataDir(flags['data-dir']);
    const dataDir = explicitDataDir ?? workspaceDataDir(flags.workspace);
    requireWorkspaceRepository(dataDir, flags);
    const status = withStore(dataDir, 'read', (store) => readWorkspaceStatus(store, { workspace: flags.workspace }));
    for (const line of statusLines(status)) this.log(line);
    return status;
  }
}

/** The human form of exactly the --json document: every line is read from one of its fields. */
function statusLines(status: WorkspaceStatus): string[] {
  const repository =
    status.repository_name === null
      ? `${status.repository} (name unavailable: the store cannot be read)`
      : `${status.repository_name} (${status.repository})`;
  const lines = [`Workspace ${status.workspace}`, `  repository ${repository}, store ${status.data_dir}`];
  lines.push(
    status.state === 'ready' ? '  binding complete' : '  binding unfinished: run `agentscm init-repo` for it again',
  );
  lines.push(`  base revision ${status.base_revision ?? '(none)'}, generation ${status.generation}`);
  const pending = status.pending_operation;
  if (pending !== null) lines.push(`  pending operation: ${pending.kind} of revision ${pending.revision}`);
  if (!status.complete) lines.push(`  scan INCOMPLETE: ${status.incomplete_reason ?? ''}`);
  lines.push(status.clean ? '  clean' : `  dirty: ${counted(status.changes.length, 'changed path')}`);
  for (const change of status.changes) lines.push(`    ${change.kind.padEnd(8)} ${displayText(change.path)}`);
  const reasons = [
    ...(status.state === 'ready' ? [] : ['binding unfinished']),
    ...(pending === null ? [] : [`pending ${pending.kind}`]),
    ...(status.complete ? [] : ['scan incomplete']),
    ...(status.changes.length === 0 ? [] : [counted(status.changes.length, 'changed path')]),
  ];
  lines.push(status.ready ? 'ready: yes' : `ready: no (${reasons.length > 0 ? reasons.join('; ') : 'not clean'})`);
  return lines;
}
