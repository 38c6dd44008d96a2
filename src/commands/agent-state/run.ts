import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { observedRunExitCode, runObserved, type ObservedRunReport } from '../../agent-state/run.js';
import type { Scope } from '../../contracts/agent-state.js';
import { displayText } from '../../contracts/display-text.js';
import { AgentscmError } from '../../contracts/errors.js';
import type { JsonValue } from '../../contracts/json/json-value.js';

function parseScope(text: string): Scope {
  const colon = text.lastIndexOf(':');
  const access = colon < 0 ? '' : text.slice(colon + 1);
  if (access !== 'read' && access !== 'write') {
    throw new AgentscmError('USAGE', `--scope ${JSON.stringify(text.slice(0, 200))} is not PATH:read or PATH:write`, {
      hint: 'e.g. --scope src/parser:write',
    });
  }
  return { path: text.slice(0, colon), access };
}

export default class AgentStateRun extends BaseCommand {
  static override summary =
    'Run a command under the agent-state contract: lease, observed changes, scope check, contained process group.';
  static override description = [
    'Writers (at least one PATH:write scope) first take the mutation lease botte-mutation-lease-v1 of the git ' +
      'root, whichever subdirectory they start from; a lease held by another live run makes the state ' +
      'blocked/conflict and one left by a process that is gone blocked/stale_lease (reported, never removed), both ' +
      'before the command starts (exit 3).',
    'The command runs in a new process group, confirmed before it starts; every process left in the group when ' +
      'the root exits or times out is terminated (SIGTERM, then SIGKILL), with the evidence in the report.',
    'Git (HEAD and git-visible changes before and after), a hashed snapshot of the write scopes (at most 20 ' +
      'scopes, 1,000 files, 64 MiB; symlinks never followed, .git never read) and, with any scope declared, a ' +
      'metadata guard over every other path including ignored files (at most 20,000 paths) observe what changed.',
    'The final state is completed only with git, stable revisions, complete snapshots, exit 0 and every change ' +
      'inside a write scope (exit 0); failed on a non-zero exit, a signal or a time-out; blocked/scope_violation ' +
      'when anything changed outside every write scope (detection only: nothing is rolled back); idle for a ' +
      'success that cannot be verified. Those exit 1.',
    "Scope paths are relative to the git root (to the working directory without git). With --json the command's " +
      'stdout goes to stderr so that stdout stays one JSON document.',
  ].join('\n\n');
  static override examples = [
    '<%= config.bin %> agent-state run --agent builder --scope src/parser:write --scope docs:read -- npm run build',
    '<%= config.bin %> agent-state run --agent builder --task task-1 --backend codex --scope src:write --timeout ' +
      '600 --json -- ./agent.sh',
    '<%= config.bin %> agent-state run --agent probe -- true',
  ];
  static override usage =
    '<%= command.id %> --agent ID [--scope PATH:ACCESS...] [--backend NAME] [--task ID] [--timeout SECONDS] ' +
    '[--grace MS] [--json] -- COMMAND [ARG...]';
  static override strict = false;
  static override flags = {
    agent: Flags.string({
      description: 'Agent ID of the run (^[A-Za-z0-9._-]{1,128}$).',
      required: true,
      helpValue: 'ID',
    }),
    scope: Flags.string({
      description:
        'Declared scope PATH:read or PATH:write, repository-relative ("." is the whole repository); repeatable.',
      multiple: true,
      helpValue: 'PATH:ACCESS',
    }),
    backend: Flags.string({ description: 'Backend named in the envelope.', default: 'subprocess', helpValue: 'NAME' }),
    task: Flags.string({ description: 'Task ID named in the envelope.', helpValue: 'ID' }),
    timeout: Flags.integer({
      description: 'Seconds before the process group is terminated (0: no time-out).',
      default: 0,
      min: 0,
      helpValue: 'SECONDS',
    }),
    grace: Flags.integer({
      description: 'Milliseconds between SIGTERM and SIGKILL when the group is terminated.',
      default: 2000,
      min: 0,
      max: 600_000,
      helpValue: 'MS',
    }),
  };

  async run(): Promise<JsonValue> {
    const { argv, flags } = await this.parse(AgentStateRun);
    const [command, ...args] = argv as string[];
    if (command === undefined)
      throw new AgentscmError('USAGE', 'no command to run', {
        hint: 'put the command after --, e.g. agentscm agent-state run --agent a1 -- true',
      });
    const report: ObservedRunReport = await runObserved({
      agent_id: flags.agent,
      backend: flags.backend,
      task_id: flags.task ?? null,
      scopes: (flags.scope ?? []).map(parseScope),
      command,
      args,
      cwd: process.cwd(),
      timeoutMs: flags.timeout * 1000,
      graceMs: flags.grace,
      stdout: this.jsonEnabled() ? 'stderr' : 'inherit',
    });
    const final = report.state;
    const reason = final.blocked_reason === null ? '' : `/${final.blocked_reason}`;
    this.log(`${final.state}${reason}: ${final.result?.summary ?? ''}`);
    for (const path of report.observation.scope_violations) this.log(`outside scope: ${displayText(path)}`);
    process.exitCode = observedRunExitCode(report);
    return report as unknown as JsonValue;
  }
}
