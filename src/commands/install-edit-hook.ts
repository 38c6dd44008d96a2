import { resolve } from 'node:path';
import { Flags } from '@oclif/core';

import { EDIT_HOOK_CLIENTS, EDIT_HOOK_SETTINGS, type EditHookSettings } from '../agent-state/install-edit-hook.js';
import { validateId } from '../contracts/ids.js';
import { installEditHookExcluded, type InstallEditHookExcludedOutcome } from '../hooks/hook-location.js';
import { BaseCommand } from './_base.js';

export default class InstallEditHook extends BaseCommand {
  static override summary = 'Install `agentscm agent-state edit-hook` as a Claude Code or Codex PreToolUse hook.';
  static override description =
    "Merges one PreToolUse command hook into the client's settings, leaving every other entry as it is; " +
    'installing it again changes nothing. Claude Code: .claude/settings.local.json (--settings local, the ' +
    'default), .claude/settings.json (project) or ~/.claude/settings.json (user), matcher ' +
    '"Edit|MultiEdit|Write|NotebookEdit". Codex: .codex/hooks.json (project, the default) or ~/.codex/hooks.json ' +
    '(user), no matcher (the hook ignores tool calls that edit no file). The per-user files in the project ' +
    '(settings.local.json, .codex/hooks.json) are added to the workspace exclude list .agentscm/exclude under ' +
    '--repo, so that they are never recorded. The hook only warns and always lets the edit ' +
    'through. A settings file that is not a JSON object agentscm can rewrite exactly is refused ' +
    '(AGENT_STATE_HOOK_SETTINGS_INVALID) and left untouched.';
  static override examples = [
    '<%= config.bin %> install-edit-hook --client claude-code --agent claude-1',
    '<%= config.bin %> install-edit-hook --client codex --settings user --agent codex-1 --json',
    '<%= config.bin %> install-edit-hook --client claude-code --settings local --executable /opt/agentscm/bin/run.js',
  ];
  static override flags = {
    client: Flags.string({
      description: 'The agent client whose hooks file to edit.',
      options: [...EDIT_HOOK_CLIENTS],
      required: true,
    }),
    settings: Flags.string({
      description:
        'Which settings: local (personal, in the repository, excluded from the workspace; Claude Code default), ' +
        'project (in the repository; Codex default, excluded; Claude Code: shared, recorded unless excluded) or ' +
        'user (home directory).',
      options: [...EDIT_HOOK_SETTINGS],
    }),
    repo: Flags.string({
      description: 'Repository root for project and local settings.',
      default: '.',
      helpValue: 'DIR',
    }),
    agent: Flags.string({
      description: 'Agent ID the hook runs for: edits inside its own declared scopes never warn.',
      helpValue: 'ID',
    }),
    executable: Flags.string({ description: 'How the hook invokes agentscm.', default: 'agentscm', helpValue: 'PATH' }),
  };

  async run(): Promise<InstallEditHookExcludedOutcome> {
    const { flags } = await this.parse(InstallEditHook);
    const outcome = installEditHookExcluded({
      client: flags.client as InstallEditHookExcludedOutcome['client'],
      ...(flags.settings === undefined ? {} : { settings: flags.settings as EditHookSettings }),
      repo: resolve(flags.repo),
      agentId: flags.agent === undefined ? null : validateId(flags.agent, '--agent'),
      executable: flags.executable,
    });
    this.log(`${outcome.changed ? 'installed' : 'already installed'}: ${outcome.command} in ${outcome.settings_file}`);
    if (outcome.excluded_added.length > 0)
      this.log(`added ${outcome.excluded_added.join(' ')} to .agentscm/exclude: the hook file is never recorded`);
    if (outcome.recorded)
      this.log(
        `note: ${outcome.settings_file} is inside the workspace and is recorded with the Change unless excluded`,
      );
    return outcome;
  }
}
