/**
 * The installed-hooks side of `agentscm doctor` (docs/doctor.md "hooks"): the Claude Code and
 * Codex settings files of the workspace and of the user's home, read strictly and without
 * change (readHookCommands), and each agentscm entry in them — the Stop hooks of install-stop
 * and the edit hook of install-edit-hook — checked against this agentscm: its executable
 * resolves to this installation's entry, its --data-dir holds a store, and the token file a
 * task-stop hook names is handed to the grants check. Each entry's location is reported too:
 * the file, its scope, and whether the workspace's exclude list keeps it out of every Change.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

import {
  HOOK_CLIENTS,
  hookSettingsFile,
  readHookCommands,
  splitShellWords,
  type HookClient,
  type HookSettingsLevel,
} from '../agent-state/hook-settings.js';
import { isEditHookCommand } from '../agent-state/install-edit-hook.js';
import { hookLocation } from '../hooks/hook-location.js';
import { isStopHookCommand } from '../hooks/install-stop.js';
import { isStoreInitialized } from '../native/store.js';
import { describeError, finding, passed, type DoctorFinding } from './finding.js';
import type { TokenFileRef } from './store-contents.js';

export interface HookCheckInput {
  /** The workspace whose project files are read, or null (then only the home files). */
  readonly workspace: string | null;
  readonly home: string;
  /** Real paths of this agentscm's entries (bin/run.js, bin/dev.js of the running installation). */
  readonly entries: readonly string[];
  /** PATH, to resolve a bare executable name as the client's shell would. */
  readonly path: string;
}

/** Where one installed agentscm hook lives (docs/stop-hooks.md "Where the hook lives"). */
export interface HookLocationReport {
  readonly client: HookClient;
  readonly scope: HookSettingsLevel;
  readonly event: string;
  readonly file: string;
  /** True: the workspace's exclude list keeps the file out; false: a checkpoint records it; null: outside. */
  readonly excluded: boolean | null;
}

export interface HookCheck {
  readonly findings: DoctorFinding[];
  /** Every agentscm hook entry found, in file order. */
  readonly locations: HookLocationReport[];
  /** Token files named by installed task-stop hooks. */
  readonly tokenFiles: TokenFileRef[];
}

/** The real paths of the entries of the installation that `script` (process.argv[1]) belongs to. */
export function agentscmEntries(script: string | undefined): string[] {
  if (script === undefined) return [];
  const entries = new Set<string>();
  for (const candidate of [script, join(dirname(script), 'run.js'), join(dirname(script), 'dev.js')]) {
    try {
      entries.add(realpathSync(candidate));
    } catch {
      // an entry that does not exist is no entry
    }
  }
  return [...entries];
}

function executableOnPath(name: string, pathList: string): string | null {
  for (const dir of pathList.split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** What the hook runs as agentscm: its first word, or the script after `node`. */
function hookExecutable(words: readonly string[]): string | undefined {
  const first = words[0];
  return first !== undefined && basename(first) === 'node' ? words[1] : first;
}

function valueAfter(words: readonly string[], flag: string): string | undefined {
  const at = words.indexOf(flag);
  return at === -1 ? undefined : words[at + 1];
}

interface SettingsFile {
  readonly client: HookClient;
  readonly level: HookSettingsLevel;
  readonly file: string;
  /** Where a relative executable of this file resolves from (the project or the home directory). */
  readonly base: string;
}

function settingsFiles(input: HookCheckInput): SettingsFile[] {
  const files: SettingsFile[] = [];
  for (const client of HOOK_CLIENTS) {
    const levels: HookSettingsLevel[] = client === 'claude-code' ? ['project', 'local', 'user'] : ['project', 'user'];
    for (const level of levels) {
      if (level !== 'user' && input.workspace === null) continue;
      const base = level === 'user' ? input.home : (input.workspace ?? input.home);
      files.push({ client, level, file: hookSettingsFile(client, level, base, input.home), base });
    }
  }
  return files;
}

/** Every agentscm hook entry of the workspace's and the user's settings files. */
export function checkHooks(input: HookCheckInput): HookCheck {
  const findings: DoctorFinding[] = [];
  const tokenFiles: TokenFileRef[] = [];
  const locations: HookLocationReport[] = [];
  const reinstall =
    'install it again with this agentscm: agentscm install-stop … --executable PATH (or install-edit-hook … ' +
    "--executable PATH), PATH being this installation's bin/run.js or the agentscm on PATH";
  let seen = 0;
  for (const settings of settingsFiles(input)) {
    let commands;
    try {
      commands = readHookCommands(settings.client, settings.file, 'HOOK_SETTINGS_INVALID');
    } catch (error) {
      const { code, message } = describeError(error);
      findings.push(
        finding(
          'hooks',
          'HOOK_FILE_INVALID',
          `${settings.client} ${settings.level} settings: ${code}: ${message}`,
          'fix the file by hand (strict JSON valid for the client), then run doctor again',
        ),
      );
      seen += 1;
      continue;
    }
    if (commands === null) continue;
    seen += 1;
    const ours = commands.filter((c) => isStopHookCommand(c.command) || isEditHookCommand(c.command));
    if (ours.length === 0) {
      findings.push(
        finding(
          'hooks',
          'NO_AGENTSCM_HOOKS',
          `${settings.file} (${settings.client}, ${settings.level}) holds no agentscm hook`,
          'nothing to do unless agents should run agentscm hooks here (agentscm install-stop, agentscm ' +
            'install-edit-hook)',
        ),
      );
      continue;
    }
    const excluded = locationExcluded(settings, input.workspace);
    for (const entry of ours) {
      locations.push({
        client: settings.client,
        scope: settings.level,
        event: entry.event,
        file: settings.file,
        excluded,
      });
      const subject = `${settings.file} ${entry.event} hook`;
      const words = splitShellWords(entry.command);
      if (words === null) {
        findings.push(
          finding(
            'hooks',
            'HOOK_COMMAND_UNPARSEABLE',
            `${subject} runs a shell command agentscm did not write (${JSON.stringify(entry.command.slice(0, 200))})`,
            reinstall,
          ),
        );
        continue;
      }
      const executable = hookExecutable(words) ?? '';
      let resolved: string | null;
      if (executable.includes('/')) resolved = resolve(settings.base, executable);
      else resolved = executableOnPath(executable, input.path);
      let real: string | null = null;
      if (resolved !== null) {
        try {
          real = realpathSync(resolved);
        } catch {
          real = null;
        }
      }
      if (real === null || !input.entries.includes(real)) {
        const why =
          resolved === null
            ? `${executable} is not on PATH`
            : real === null
              ? `${resolved} does not exist`
              : `${executable} is ${real}, not this agentscm (${input.entries.join(' or ') || 'unknown'})`;
        findings.push(finding('hooks', 'HOOK_STALE', `${subject} runs another agentscm: ${why}`, reinstall));
        continue;
      }
      const dataDir = valueAfter(words, '--data-dir');
      if (dataDir !== undefined && !isStoreInitialized(dataDir)) {
        findings.push(
          finding(
            'hooks',
            'HOOK_DATA_DIR_MISSING',
            `${subject} uses --data-dir ${dataDir}, which holds no native store`,
            "install the hook again with the store's data directory, or restore that store",
          ),
        );
        continue;
      }
      const tokenFile = valueAfter(words, '--token-file');
      if (tokenFile !== undefined) tokenFiles.push({ path: tokenFile, source: `named by ${settings.file}` });
      findings.push(
        passed(
          'hooks',
          `${subject} runs this agentscm (${real})${dataDir === undefined ? '' : ` with the store ${dataDir}`}`,
        ),
      );
    }
  }
  if (seen === 0) {
    findings.push(
      finding(
        'hooks',
        'NO_HOOK_FILES',
        `no Claude Code or Codex settings file in ${input.workspace ?? '(no workspace)'} or ${input.home}`,
        'nothing to do unless agents should run agentscm hooks (agentscm install-stop, agentscm install-edit-hook)',
      ),
    );
  }
  return { findings, tokenFiles, locations };
}

/** Whether the workspace's exclude list keeps a settings file out (null: not in the workspace, or unreadable). */
function locationExcluded(settings: SettingsFile, workspace: string | null): boolean | null {
  if (settings.level === 'user' || workspace === null) return null;
  try {
    const location = hookLocation(settings.client, settings.level, settings.file, settings.base, workspace);
    return location.pattern === null ? null : location.excluded;
  } catch {
    return null;
  }
}
