/**
 * Where an installed hook lives relative to the workspace (docs/stop-hooks.md "Where the hook
 * lives"): a hook file inside the workspace is part of what a checkpoint records unless the
 * workspace's exclude list (`.agentscm/exclude`, docs/workspace.md "Excluded paths") excludes
 * it. The installers add per-user files — Claude Code's `.claude/settings.local.json`, Codex's
 * `.codex/hooks.json` (Codex has no per-user file inside a project) — to that list, so that the
 * hook, with the operator's data directory, hub URL and token path, never lands in a Change.
 */
import { join, relative } from 'node:path';

import type { HookClient, HookSettingsLevel } from '../agent-state/hook-settings.js';
import {
  editHookSettingsFile,
  installEditHook,
  type EditHookClient,
  type EditHookSettings,
  type InstallEditHookInput,
  type InstallEditHookOutcome,
} from '../agent-state/install-edit-hook.js';
import {
  addExcludePatterns,
  anchoredPattern,
  EXCLUDE_FILE_LABEL,
  isExcludedPath,
  readExcludeRules,
} from '../workspace/exclude.js';
import { canonicalDataDir, findEnclosingWorkspace } from '../workspace/locate.js';

export interface HookLocation {
  /** The workspace root whose exclude list applies, or null (the file is outside every workspace given). */
  readonly workspace: string | null;
  /** The file's anchored exclude pattern (`/.claude/settings.local.json`), or null outside the workspace. */
  readonly pattern: string | null;
  /** True when the installer adds the file to the exclude list (a per-user file inside the workspace). */
  readonly excludeWanted: boolean;
  /** True when the exclude list excludes the file now. */
  readonly excluded: boolean;
  /** True when a checkpoint of the workspace records the file (inside it and not excluded). */
  readonly recorded: boolean;
}

/** The workspace root of a directory: the enclosing initialized one, else the directory itself. */
export function workspaceRootOf(dir: string): string {
  return findEnclosingWorkspace(dir) ?? canonicalDataDir(dir);
}

/**
 * Locate a hook settings file of `level` (under `repo`) relative to the workspace at
 * `workspace`; reads the exclude list (an invalid one is WORKSPACE_EXCLUDE_INVALID).
 */
export function hookLocation(
  client: HookClient,
  level: HookSettingsLevel,
  file: string,
  repo: string,
  workspace: string,
  afterAdding = false,
): HookLocation {
  if (level === 'user')
    return { workspace: null, pattern: null, excludeWanted: false, excluded: false, recorded: false };
  const root = workspaceRootOf(workspace);
  const canonicalFile = join(canonicalDataDir(repo), relative(repo, file));
  const pattern = anchoredPattern(root, canonicalFile);
  if (pattern === null)
    return { workspace: root, pattern: null, excludeWanted: false, excluded: false, recorded: false };
  const excludeWanted = level === 'local' || client === 'codex';
  const excluded =
    (afterAdding && excludeWanted) || isExcludedPath(readExcludeRules(root), relative(root, canonicalFile));
  return { workspace: root, pattern, excludeWanted, excluded, recorded: !excluded };
}

/** Add the file to the exclude list when the installer wants it there; the patterns added. */
export function excludeHookFile(location: HookLocation, dryRun: boolean): string[] {
  if (!location.excludeWanted || location.workspace === null || location.pattern === null) return [];
  return addExcludePatterns(location.workspace, [location.pattern], dryRun).added;
}

export { EXCLUDE_FILE_LABEL };

export interface InstallEditHookExcludedOutcome extends InstallEditHookOutcome {
  readonly settings: EditHookSettings;
  /** The patterns this run added to the workspace exclude list. */
  readonly excluded_added: string[];
  /** True when a checkpoint of the workspace under --repo records the settings file. */
  readonly recorded: boolean;
}

/** The settings level install-edit-hook uses without --settings: the per-user file in the project. */
export function defaultEditHookSettings(client: EditHookClient): EditHookSettings {
  return client === 'claude-code' ? 'local' : 'project';
}

/**
 * install-edit-hook with the per-user file added to the exclude list of the workspace under
 * `repo` (the list is read and checked first: an invalid one is refused before anything is written).
 */
export function installEditHookExcluded(
  input: Omit<InstallEditHookInput, 'settings'> & { readonly settings?: EditHookSettings },
): InstallEditHookExcludedOutcome {
  const settings = input.settings ?? defaultEditHookSettings(input.client);
  const file = editHookSettingsFile(input.client, settings, input.repo, input.home);
  const location = hookLocation(input.client, settings, file, input.repo, input.repo);
  excludeHookFile(location, true);
  const outcome = installEditHook({ ...input, settings });
  const added = excludeHookFile(location, false);
  return {
    ...outcome,
    settings,
    excluded_added: added,
    recorded: location.pattern !== null && !location.excluded && !location.excludeWanted,
  };
}
