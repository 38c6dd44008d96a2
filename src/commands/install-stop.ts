import { resolve } from 'node:path';
import { Flags } from '@oclif/core';

import { HOOK_CLIENTS, type HookClient } from '../agent-state/hook-settings.js';
import { AgentscmError } from '../contracts/errors.js';
import { formatJson } from '../contracts/json/canonical-json.js';
import {
  defaultStopScope,
  installStop,
  STOP_MODES,
  STOP_SCOPES,
  type InstallStopOutcome,
  type StopMode,
  type StopScope,
} from '../hooks/install-stop.js';
import { BaseCommand } from './_base.js';

export default class InstallStop extends BaseCommand {
  static override summary =
    'Install an agentscm Stop hook for Claude Code or Codex (server-executed `stop` or agent-owned `task-stop`).';
  static override description =
    'Merges one Stop command hook into a settings file, leaving every other setting and hook as it was: by ' +
    "default the project's per-user file (Claude Code .claude/settings.local.json, --scope local; Codex " +
    '.codex/hooks.json, --scope project), which is added to the workspace exclude list .agentscm/exclude so that ' +
    'it is never recorded; --scope project for Claude Code writes the shared .claude/settings.json, recorded ' +
    'with the Change unless excluded; --scope user ~/.claude/settings.json or ~/.codex/hooks.json. --mode stop ' +
    'runs `agentscm --data-dir D skill-workflow stop CHANGE ' +
    "--workspace PATH` (checkpoint, run the target's requirement, block with the failures); --mode task-stop " +
    'runs `skill-workflow task-stop` (Claude Code) or `task-codex-stop` (Codex) against a hub with --endpoint, ' +
    '--repository, --profile and --token-file (an absolute path) and, when the hub profile pins a target other ' +
    'than main, --target, which pass only when the hub qualifies exactly the checkpointed, clean workspace. ' +
    "Installing again replaces agentscm's own Stop entry instead of adding a second; --remove takes it out; " +
    '--dry-run prints the resulting file without writing it. A file that is not strict JSON valid under the ' +
    "client's own schema is refused (HOOK_SETTINGS_INVALID) and left untouched.";
  static override examples = [
    '<%= config.bin %> --data-dir /srv/agentscm install-stop --client claude-code --mode stop --change ' +
      'fix-parser --workspace . --docker /usr/bin/docker --docker-socket /var/run/docker.sock',
    '<%= config.bin %> install-stop --client codex --mode task-stop --change fix-parser --workspace . --endpoint ' +
      'https://hub.example:8443 --repository acme/widgets --profile ci --token-file /home/me/.config/agentscm/token',
    '<%= config.bin %> install-stop --client claude-code --mode stop --change fix-parser --workspace . --remove ' +
      '--dry-run',
  ];
  static override flags = {
    client: Flags.string({
      description: 'The agent client whose hooks file to edit.',
      options: [...HOOK_CLIENTS],
      required: true,
    }),
    mode: Flags.string({
      description:
        'stop: server-executed (checkpoint and run the requirement locally); task-stop: agent-owned tasks ' +
        'qualified by a hub.',
      options: [...STOP_MODES],
      required: true,
    }),
    scope: Flags.string({
      description:
        'local (Claude Code default): .claude/settings.local.json under --repo, excluded from the workspace; ' +
        'project: .claude/settings.json (recorded unless excluded) or .codex/hooks.json (Codex default, ' +
        "excluded); user: the home directory's file.",
      options: [...STOP_SCOPES],
    }),
    change: Flags.string({ description: 'Change ID the hook checks.', required: true, helpValue: 'ID' }),
    workspace: Flags.string({
      description: 'Workspace directory the hook checks (stored as an absolute path).',
      required: true,
      helpValue: 'PATH',
    }),
    repo: Flags.string({
      description: 'Project root whose .claude/ or .codex/ file is edited (--scope project).',
      default: '.',
      helpValue: 'DIR',
    }),
    executable: Flags.string({ description: 'How the hook invokes agentscm.', default: 'agentscm', helpValue: 'PATH' }),
    endpoint: Flags.string({ description: 'task-stop: the hub URL.', helpValue: 'URL' }),
    repository: Flags.string({ description: 'task-stop: the repository as OWNER/NAME.', helpValue: 'OWNER/NAME' }),
    profile: Flags.string({ description: 'task-stop: the agent task profile ID.', helpValue: 'ID' }),
    'token-file': Flags.string({
      description: 'task-stop: the grant token file, as an absolute path.',
      helpValue: 'ABS_PATH',
    }),
    target: Flags.string({
      description:
        'The target whose installed requirement the hook uses (default main). stop: the requirement it runs; ' +
        'task-stop: the target the hub profile pins, written into the hook command as --target.',
      helpValue: 'NAME',
    }),
    docker: Flags.string({
      description: 'stop: Docker executable for command steps (with --docker-socket).',
      helpValue: 'PATH',
    }),
    'docker-socket': Flags.string({
      description: 'stop: Docker Engine API socket (with --docker).',
      helpValue: 'PATH',
    }),
    remove: Flags.boolean({ description: "Take agentscm's Stop entry out instead of installing it.", default: false }),
    'dry-run': Flags.boolean({ description: 'Print the resulting file; write nothing.', default: false }),
  };

  async run(): Promise<InstallStopOutcome> {
    const { flags } = await this.parse(InstallStop);
    if ((flags.docker === undefined) !== (flags['docker-socket'] === undefined)) {
      throw new AgentscmError('USAGE', '--docker and --docker-socket are accepted only as a pair', {
        hint: 'pass both, or neither for a requirement without command steps',
      });
    }
    const taskFlags = [flags.endpoint, flags.repository, flags.profile, flags['token-file']];
    const workspace = resolve(flags.workspace);
    const client = flags.client as HookClient;
    const outcome = installStop({
      client,
      mode: flags.mode as StopMode,
      scope: (flags.scope as StopScope | undefined) ?? defaultStopScope(client),
      change: flags.change,
      workspace,
      dataDir: this.resolveDataDir(flags['data-dir'], workspace),
      repo: resolve(flags.repo),
      executable: flags.executable,
      ...(taskFlags.every((f) => f === undefined)
        ? {}
        : {
            task: {
              endpoint: flags.endpoint ?? '',
              repository: flags.repository ?? '',
              profile: flags.profile ?? '',
              tokenFile: flags['token-file'] ?? '',
            },
          }),
      ...(flags.target === undefined ? {} : { target: flags.target }),
      ...(flags.docker === undefined || flags['docker-socket'] === undefined
        ? {}
        : { docker: { docker: flags.docker, dockerSocket: flags['docker-socket'] } }),
      remove: flags.remove,
      dryRun: flags['dry-run'],
    });
    const verb = outcome.action === 'removed' ? 'removed' : 'installed';
    if (outcome.dry_run) {
      this.log(
        outcome.changed
          ? `dry run: would ${outcome.action === 'removed' ? 'remove the entry from' : 'write'} ` +
              `${outcome.settings_file}`
          : `dry run: ${outcome.settings_file} would not change`,
      );
      this.log(
        outcome.content === null
          ? '(the file would be removed: nothing else is left in it)'
          : formatJson(outcome.content),
      );
    } else {
      this.log(
        outcome.changed
          ? `${verb}: ${outcome.command} in ${outcome.settings_file}`
          : `already ${verb}: ${outcome.settings_file} unchanged`,
      );
    }
    if (outcome.excluded_added.length > 0)
      this.log(
        `${outcome.dry_run ? 'dry run: would add' : 'added'} ${outcome.excluded_added.join(' ')} to ` +
          `${outcome.exclude_file ?? ''}: the hook file is never recorded`,
      );
    if (outcome.recorded && outcome.action === 'installed')
      this.log(
        `note: ${outcome.settings_file} is inside the workspace and is recorded with the Change (the hook command ` +
          'with its data directory and paths) unless excluded; add it to .agentscm/exclude, or install with the ' +
          'default --scope local',
      );
    if (outcome.instructions !== null) this.log(`workflow-task guidance: ${outcome.instructions}`);
    return outcome;
  }
}
