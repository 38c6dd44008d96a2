/**
 * install-stop (docs/stop-hooks.md "install-stop"): merge one Stop command hook running an
 * agentscm Stop hook — `skill-workflow stop` (server-executed) or `skill-workflow task-stop` /
 * `task-codex-stop` (agent-owned) — into a Claude Code settings file or a Codex hooks file,
 * through the installers' one settings merge (agent-state/hook-settings.ts). Its own entry is any
 * handler running one of those three commands: installing again replaces it, --remove takes it
 * out, and every other setting and hook stays as it was. The default file is the per-user one
 * (Claude Code `.claude/settings.local.json`; Codex `.codex/hooks.json`, its only project file),
 * added to the workspace's exclude list so that the hook never lands in a Change
 * (hook-location.ts); `--scope project` for Claude Code writes the shared `.claude/settings.json`,
 * which is recorded unless excluded.
 */
import { isAbsolute } from 'node:path';

import { editHookSettings, hookSettingsFile, quoteShellArg, type HookClient } from '../agent-state/hook-settings.js';
import { AgentscmError } from '../contracts/errors.js';
import { validateId } from '../contracts/ids.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { EXCLUDE_FILE_LABEL, excludeHookFile, hookLocation } from './hook-location.js';
import { checkTaskStopTarget, type TaskStopTarget } from './stop/target.js';

export const STOP_MODES = ['task-stop', 'stop'] as const;
export type StopMode = (typeof STOP_MODES)[number];
export const STOP_SCOPES = ['local', 'project', 'user'] as const;
export type StopScope = (typeof STOP_SCOPES)[number];

/** The scope install-stop uses without --scope: the per-user file in the project. */
export function defaultStopScope(client: HookClient): StopScope {
  return client === 'claude-code' ? 'local' : 'project';
}

/** Seconds the client waits: a server-executed stop runs containers, a task-stop one HTTP call (30 s) and two reads. */
export const STOP_TIMEOUT_SECONDS: Readonly<Record<StopMode, number>> = { stop: 900, 'task-stop': 60 };
/** Where an agent finds the workflow-task guidance (printed in task-stop mode). */
export const TASK_GUIDANCE_POINTER =
  'the "Workflow tasks" section of the agentscm block in AGENTS.md (written by `agentscm init-repo` or `agentscm ' +
  'instructions write`), and docs/stop-hooks.md';

const OWN_COMMAND = /(^|\s)skill-workflow (stop|task-stop|task-codex-stop)(\s|$)/;

export interface InstallStopInput {
  readonly client: HookClient;
  readonly mode: StopMode;
  readonly scope: StopScope;
  readonly change: string;
  /** Absolute workspace path the hook checks. */
  readonly workspace: string;
  /** Absolute native data directory the hook uses. */
  readonly dataDir: string;
  /** Project root (project scope). */
  readonly repo: string;
  readonly executable: string;
  /** task-stop mode only. */
  readonly task?: TaskStopTarget;
  /** Both modes: the target whose requirement the hook uses (stop: runs; task-stop: the one the hub profile pins). */
  readonly target?: string;
  readonly docker?: { readonly docker: string; readonly dockerSocket: string };
  readonly remove: boolean;
  readonly dryRun: boolean;
  readonly home?: string;
}

export interface InstallStopOutcome {
  readonly client: HookClient;
  readonly mode: StopMode;
  readonly scope: StopScope;
  readonly settings_file: string;
  /** The hook command (also when removing: the one that would be installed). */
  readonly command: string;
  readonly action: 'installed' | 'removed';
  readonly changed: boolean;
  readonly dry_run: boolean;
  /** The settings file's content after the change (null: the file is, or would be, removed). */
  readonly content: JsonObject | null;
  /** task-stop mode: where the workflow-task guidance is. */
  readonly instructions: string | null;
  /** The workspace exclude list the file is (or would be) added to, or null when none applies. */
  readonly exclude_file: string | null;
  /** The patterns this run added (or, dry run, would add) to the exclude list. */
  readonly excluded_added: string[];
  /** True when a checkpoint of the workspace records the settings file (inside it, not excluded). */
  readonly recorded: boolean;
}

function usage(message: string, hint: string): AgentscmError {
  return new AgentscmError('USAGE', message, { hint });
}

/** Check the flags of a mode and build the hook's argv (without quoting). */
export function stopHookArgv(input: Omit<InstallStopInput, 'scope' | 'repo' | 'remove' | 'dryRun' | 'home'>): string[] {
  validateId(input.change, '--change');
  if (!isAbsolute(input.workspace) || !isAbsolute(input.dataDir))
    throw new AgentscmError('INTERNAL', 'the workspace and data directory must be resolved to absolute paths');
  const head = [input.executable, '--data-dir', input.dataDir, 'skill-workflow'];
  if (input.mode === 'stop') {
    if (input.task !== undefined)
      throw usage(
        '--endpoint, --repository, --profile and --token-file belong to --mode task-stop',
        'drop them, or use --mode task-stop',
      );
    return [
      ...head,
      'stop',
      input.change,
      '--workspace',
      input.workspace,
      ...(input.target === undefined ? [] : ['--target', input.target]),
      ...(input.client === 'codex' ? ['--client', 'codex'] : []),
      ...(input.docker === undefined
        ? []
        : ['--docker', input.docker.docker, '--docker-socket', input.docker.dockerSocket]),
    ];
  }
  if (input.docker !== undefined)
    throw usage('--docker and --docker-socket belong to --mode stop', 'drop them, or use --mode stop');
  const task = input.task;
  if (task === undefined)
    throw usage(
      '--mode task-stop needs --endpoint, --repository, --profile and --token-file',
      'pass all four (the token file as an absolute path)',
    );
  checkTaskStopTarget({ ...task, ...(input.target === undefined ? {} : { target: input.target }) });
  return [
    ...head,
    input.client === 'codex' ? 'task-codex-stop' : 'task-stop',
    input.change,
    '--endpoint',
    task.endpoint,
    '--repository',
    task.repository,
    '--profile',
    task.profile,
    '--token-file',
    task.tokenFile,
    '--workspace',
    input.workspace,
    ...(input.target === undefined ? [] : ['--target', input.target]),
  ];
}

/** Install (or remove) the Stop hook entry (see the module comment). */
export function installStop(input: InstallStopInput): InstallStopOutcome {
  const command = stopHookArgv(input).map(quoteShellArg).join(' ');
  const file = hookSettingsFile(input.client, input.scope, input.repo, input.home);
  // The exclude list is read (and checked) before anything is written.
  const location = hookLocation(input.client, input.scope, file, input.repo, input.workspace);
  excludeHookFile(location, true);
  const handler: JsonObject = { type: 'command', command, timeout: STOP_TIMEOUT_SECONDS[input.mode] };
  const outcome = editHookSettings({
    client: input.client,
    file,
    event: 'Stop',
    owns: (h) => h.type === 'command' && typeof h.command === 'string' && OWN_COMMAND.test(h.command),
    group: input.remove ? null : { hooks: [handler] },
    refusal: 'HOOK_SETTINGS_INVALID',
    dryRun: input.dryRun,
  });
  const added = input.remove ? [] : excludeHookFile(location, input.dryRun);
  const excluded = location.excluded || (!input.remove && location.excludeWanted);
  return {
    client: input.client,
    mode: input.mode,
    scope: input.scope,
    settings_file: file,
    command,
    action: input.remove ? 'removed' : 'installed',
    changed: outcome.changed,
    dry_run: input.dryRun,
    content: outcome.content,
    instructions: input.mode === 'task-stop' ? TASK_GUIDANCE_POINTER : null,
    exclude_file:
      location.workspace === null || location.pattern === null ? null : `${location.workspace}/${EXCLUDE_FILE_LABEL}`,
    excluded_added: added,
    recorded: location.pattern !== null && !excluded,
  };
}

/** True for a hook command install-stop owns (it runs one of the three agentscm Stop hooks). */
export function isStopHookCommand(command: string): boolean {
  return OWN_COMMAND.test(command);
}
