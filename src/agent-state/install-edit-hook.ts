/**
 * install-edit-hook (docs/agent-state.md "Installing the edit hook"): merges one PreToolUse
 * command hook running `agentscm agent-state edit-hook` into a Claude Code settings file or a
 * Codex hooks file, leaving every other entry as it is. Installing twice changes nothing. A file
 * that is not a JSON object agentscm can rewrite exactly is refused and left untouched.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { formatJson } from '../contracts/canonical-json.js';
import { AgentscmError } from '../contracts/errors.js';
import { isJsonObject } from '../contracts/json-value.js';
import type { JsonObject, JsonValue } from '../contracts/json-value.js';
import { parseStrictJson } from '../contracts/strict-json.js';

export const EDIT_HOOK_CLIENTS = ['claude-code', 'codex'] as const;
export type EditHookClient = (typeof EDIT_HOOK_CLIENTS)[number];
export const EDIT_HOOK_SETTINGS = ['project', 'local', 'user'] as const;
export type EditHookSettings = (typeof EDIT_HOOK_SETTINGS)[number];

/** Claude Code's file-editing tools; Codex gets no matcher (the hook ignores inputs that edit no file). */
export const CLAUDE_EDIT_MATCHER = 'Edit|MultiEdit|Write|NotebookEdit';
/** Seconds the client waits for the hook. */
export const EDIT_HOOK_TIMEOUT_SECONDS = 10;
const MAX_SETTINGS_BYTES = 4 * 1024 * 1024;

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
export function editHookSettingsFile(client: EditHookClient, settings: EditHookSettings, repo: string, home = homedir()): string {
  if (client === 'claude-code') {
    if (settings === 'project') return join(repo, '.claude', 'settings.json');
    if (settings === 'local') return join(repo, '.claude', 'settings.local.json');
    return join(home, '.claude', 'settings.json');
  }
  if (settings === 'local') {
    throw new AgentscmError('USAGE', 'Codex has no local (personal, per-repository) hooks file', { hint: 'use --settings project (<repo>/.codex/hooks.json) or --settings user (~/.codex/hooks.json)' });
  }
  return settings === 'project' ? join(repo, '.codex', 'hooks.json') : join(home, '.codex', 'hooks.json');
}

function quoteArg(arg: string): string {
  return /^[A-Za-z0-9._/:=@+-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

function refuse(file: string, why: string, cause?: unknown): AgentscmError {
  return new AgentscmError('AGENT_STATE_HOOK_SETTINGS_INVALID', `${file}: ${why}; it was not changed`, {
    hint: 'fix the file by hand (a JSON object; "hooks" an object of arrays), then install again',
    ...(cause === undefined ? {} : { cause }),
  });
}

function hasCommand(groups: readonly JsonValue[], command: string): boolean {
  return groups.some((group) => isJsonObject(group) && Array.isArray(group.hooks) && group.hooks.some((hook) => isJsonObject(hook) && hook.command === command));
}

/** Merge the edit hook into the client's settings file; unchanged when it is already there. */
export function installEditHook(input: InstallEditHookInput): InstallEditHookOutcome {
  const file = editHookSettingsFile(input.client, input.settings, input.repo, input.home);
  const command = [input.executable, 'agent-state', 'edit-hook', ...(input.agentId === null ? [] : ['--agent', input.agentId])].map(quoteArg).join(' ');
  // A settings file that is a symlink (a dotfiles manager) is written through, not replaced.
  const target = existsSync(file) ? realpathSync(file) : file;
  let root: JsonObject = {};
  let mode = 0o644;
  if (existsSync(target)) {
    let value: JsonValue;
    try {
      mode = statSync(target).mode & 0o777;
      value = parseStrictJson(readFileSync(target), { maxBytes: MAX_SETTINGS_BYTES });
    } catch (error) {
      throw refuse(file, `it cannot be read as strict JSON (${error instanceof Error ? error.message : 'unreadable'})`, error);
    }
    if (!isJsonObject(value)) throw refuse(file, 'it is not a JSON object');
    root = value;
  }
  const hooks = root.hooks ?? {};
  if (!isJsonObject(hooks)) throw refuse(file, '"hooks" is not an object');
  const groups = hooks.PreToolUse ?? [];
  if (!Array.isArray(groups)) throw refuse(file, '"hooks.PreToolUse" is not an array');
  if (hasCommand(groups, command)) return { client: input.client, settings_file: file, command, changed: false };
  const handler: JsonObject = { type: 'command', command, timeout: EDIT_HOOK_TIMEOUT_SECONDS };
  const group: JsonObject = input.client === 'claude-code' ? { matcher: CLAUDE_EDIT_MATCHER, hooks: [handler] } : { hooks: [handler] };
  const updated: JsonObject = { ...root, hooks: { ...hooks, PreToolUse: [...groups, group] } };
  try {
    mkdirSync(dirname(target), { recursive: true });
    const aside = `${target}.agentscm-${process.pid}.tmp`;
    writeFileSync(aside, `${formatJson(updated)}\n`, { mode });
    renameSync(aside, target);
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
  return { client: input.client, settings_file: file, command, changed: true };
}
