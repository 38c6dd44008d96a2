/**
 * install-edit-hook (docs/agent-state.md "Installing the edit hook"): merges one PreToolUse
 * command hook running `agentscm agent-state edit-hook` into a Claude Code settings file or a
 * Codex hooks file, leaving every other entry as it is. Installing twice changes nothing. The merge
 * itself is the installers' shared one (hook-settings.ts): a file that is not a JSON object
 * agentscm can rewrite exactly, or that does not conform to the client's schema, is refused and
 * left untouched.
 */
import type { JsonObject } from '../contracts/json/json-value.js';
import { editHookSettings, HOOK_CLIENTS, hookSettingsFile, quoteShellArg } from './hook-settings.js';

export const EDIT_HOOK_CLIENTS = HOOK_CLIENTS;
export type EditHookClient = (typeof EDIT_HOOK_CLIENTS)[number];
export const EDIT_HOOK_SETTINGS = ['project', 'local', 'user'] as const;
export type EditHookSettings = (typeof EDIT_HOOK_SETTINGS)[number];

/** Claude Code's file-editing tools; Codex gets no matcher (the hook ignores inputs that edit no file). */
export const CLAUDE_EDIT_MATCHER = 'Edit|MultiEdit|Write|NotebookEdit';
/** Seconds the client waits for the hook. */
export const EDIT_HOOK_TIMEOUT_SECONDS = 10;

export interface InstallEditHookInput {
  readonly client: EditHookClient;
  readonly settings: EditHookSettings;
  /** Repository root for project and local settings. */
  readonly repo: string;
  /** The agent the hook runs for (its own scopes never warn), or null. */
  readonly agentId: string | null;
  /** How to invoke agentscm (default `agentscm`). */
  readonly executable: string;
  /** Home directory for user settings (default: the user's). */
  readonly home?: string;
}

export interface InstallEditHookOutcome {
  readonly client: EditHookClient;
  readonly settings_file: string;
  readonly command: string;
  readonly changed: boolean;
}

/** The settings file a client reads for a level (docs/agent-state.md "Installing the edit hook"). */
export function editHookSettingsFile(
  client: EditHookClient,
  settings: EditHookSettings,
  repo: string,
  home?: string,
): string {
  return hookSettingsFile(client, settings, repo, home);
}

/** Merge the edit hook into the client's settings file; unchanged when it is already there. */
export function installEditHook(input: InstallEditHookInput): InstallEditHookOutcome {
  const file = editHookSettingsFile(input.client, input.settings, input.repo, input.home);
  const command = [
    input.executable,
    'agent-state',
    'edit-hook',
    ...(input.agentId === null ? [] : ['--agent', input.agentId]),
  ]
    .map(quoteShellArg)
    .join(' ');
  const handler: JsonObject = { type: 'command', command, timeout: EDIT_HOOK_TIMEOUT_SECONDS };
  const group: JsonObject =
    input.client === 'claude-code' ? { matcher: CLAUDE_EDIT_MATCHER, hooks: [handler] } : { hooks: [handler] };
  const outcome = editHookSettings({
    client: input.client,
    file,
    event: 'PreToolUse',
    owns: (h) => h.command === command,
    group,
    refusal: 'AGENT_STATE_HOOK_SETTINGS_INVALID',
  });
  return { client: input.client, settings_file: file, command, changed: outcome.changed };
}

/** True for a hook command install-edit-hook writes (it runs `agent-state edit-hook`). */
export function isEditHookCommand(command: string): boolean {
  return /(^|\s)agent-state edit-hook(\s|$)/.test(command);
}
