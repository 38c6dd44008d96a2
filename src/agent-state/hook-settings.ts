/**
 * The one settings-file merge of agentscm's hook installers (install-edit-hook, install-stop;
 * docs/stop-hooks.md "install-stop"): read a Claude Code settings file or a Codex hooks file
 * strictly, check it against the client's own schema, replace agentscm's own handlers of one
 * event by one new matcher group (or remove them), check the result against the schema again,
 * and write it atomically. Every other setting and hook is kept as it was; a file agentscm
 * cannot rewrite exactly is refused and left untouched.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

import { AgentscmError, type ErrorCode } from '../contracts/errors.js';
import { formatJson } from '../contracts/json/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { externalSchemaProblem } from './external-schema.js';
import { CLAUDE_SETTINGS_HOOKS_SCHEMA, CODEX_HOOKS_CONFIG_SCHEMA } from './hook-settings-schemas.js';

export const HOOK_CLIENTS = ['claude-code', 'codex'] as const;
export type HookClient = (typeof HOOK_CLIENTS)[number];
/**
 * project (shared, in the repository), local (personal, in the repository; Claude Code only), user (home directory).
 */
export type HookSettingsLevel = 'project' | 'local' | 'user';

const MAX_SETTINGS_BYTES = 4 * 1024 * 1024;

/** The settings file a client reads for a level. */
export function hookSettingsFile(client: HookClient, level: HookSettingsLevel, repo: string, home = homedir()): string {
  if (client === 'claude-code') {
    if (level === 'project') return join(repo, '.claude', 'settings.json');
    if (level === 'local') return join(repo, '.claude', 'settings.local.json');
    return join(home, '.claude', 'settings.json');
  }
  if (level === 'local') {
    throw new AgentscmError('USAGE', 'Codex has no local (personal, per-repository) hooks file', {
      hint: 'use the project (<repo>/.codex/hooks.json) or user (~/.codex/hooks.json) file',
    });
  }
  return level === 'project' ? join(repo, '.codex', 'hooks.json') : join(home, '.codex', 'hooks.json');
}

/** Quote one argument for the POSIX shell a client runs a command hook with. */
export function quoteShellArg(arg: string): string {
  return /^[A-Za-z0-9._/:=@+-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

export interface HookSettingsEdit {
  readonly client: HookClient;
  readonly file: string;
  /** The hook event whose matcher groups are edited (`Stop`, `PreToolUse`). */
  readonly event: string;
  /** True for a handler this installer owns (replaced or removed). */
  readonly owns: (handler: JsonObject) => boolean;
  /** The matcher group to install in place of the owned handlers, or null to remove them. */
  readonly group: JsonObject | null;
  /** The code a refused file is reported with (the installer's own). */
  readonly refusal: ErrorCode;
  /** Compute and return the result without writing anything. */
  readonly dryRun?: boolean;
}

export interface HookSettingsOutcome {
  readonly file: string;
  /** False when the file already held exactly this (or, removing, held nothing of ours). */
  readonly changed: boolean;
  /** The file's new content, or null when it is (or would be) removed because nothing is left in it. */
  readonly content: JsonObject | null;
  /** True when the file was (or, with dryRun, would be) written or removed. */
  readonly written: boolean;
}

function refuse(code: ErrorCode, file: string, why: string, cause?: unknown): AgentscmError {
  return new AgentscmError(code, `${file}: ${why}; it was not changed`, {
    hint:
      'fix the file by hand (a JSON object valid for the client; "hooks" an object of arrays of matcher ' +
      'groups), then install again',
    ...(cause === undefined ? {} : { cause }),
  });
}

function schemaOf(client: HookClient): object {
  return client === 'claude-code' ? CLAUDE_SETTINGS_HOOKS_SCHEMA : CODEX_HOOKS_CONFIG_SCHEMA;
}

/** Remove owned handlers; the index of the first group that held one (or -1) and the groups left. */
function withoutOwned(
  groups: readonly JsonValue[],
  owns: (handler: JsonObject) => boolean,
): { at: number; kept: JsonValue[] } {
  let at = -1;
  const kept: JsonValue[] = [];
  for (const group of groups) {
    if (!isJsonObject(group) || !Array.isArray(group.hooks)) {
      kept.push(group);
      continue;
    }
    const handlers = group.hooks.filter((h) => !(isJsonObject(h) && owns(h)));
    if (handlers.length === group.hooks.length) {
      kept.push(group);
      continue;
    }
    if (at === -1) at = kept.length;
    if (handlers.length > 0) kept.push({ ...group, hooks: handlers });
  }
  return { at, kept };
}

/**
 * An existing settings file as the client reads it: at most MAX_SETTINGS_BYTES (checked before
 * reading), strict JSON, an object that conforms to the client's own settings schema; otherwise
 * `refusal`, naming `shown`. Its bytes and mode come along for a writer that keeps them.
 */
function readSettingsDocument(
  client: HookClient,
  path: string,
  shown: string,
  refusal: ErrorCode,
): { root: JsonObject; bytes: Buffer; mode: number } {
  let value: JsonValue;
  let bytes: Buffer;
  let mode: number;
  try {
    const stats = statSync(path);
    if (stats.size > MAX_SETTINGS_BYTES) throw new Error(`it has ${stats.size} bytes, more than ${MAX_SETTINGS_BYTES}`);
    mode = stats.mode & 0o777;
    bytes = readFileSync(path);
    value = parseStrictJson(bytes, { maxBytes: MAX_SETTINGS_BYTES });
  } catch (error) {
    throw refuse(
      refusal,
      shown,
      `it cannot be read as strict JSON (${error instanceof Error ? error.message : 'unreadable'})`,
      error,
    );
  }
  if (!isJsonObject(value)) throw refuse(refusal, shown, 'it is not a JSON object');
  const problem = externalSchemaProblem(schemaOf(client), value);
  if (problem !== null)
    throw refuse(refusal, shown, `it does not conform to the client's settings schema (${problem})`);
  return { root: value, bytes, mode };
}

/** Apply one edit to a client's settings file (see the module comment). */
export function editHookSettings(edit: HookSettingsEdit): HookSettingsOutcome {
  const { file } = edit;
  // A settings file that is a symlink (a dotfiles manager) is written through, not replaced.
  const target = existsSync(file) ? realpathSync(file) : file;
  const exists = existsSync(target);
  let root: JsonObject = {};
  let mode = 0o644;
  let before = '';
  if (exists) {
    const read = readSettingsDocument(edit.client, target, file, edit.refusal);
    root = read.root;
    mode = read.mode;
    before = read.bytes.toString('utf8');
  }
  const hooks = root.hooks ?? {};
  if (!isJsonObject(hooks)) throw refuse(edit.refusal, file, '"hooks" is not an object');
  const groups = hooks[edit.event] ?? [];
  if (!Array.isArray(groups)) throw refuse(edit.refusal, file, `"hooks.${edit.event}" is not an array`);
  const { at, kept } = withoutOwned(groups, edit.owns);
  if (edit.group !== null) kept.splice(at === -1 ? kept.length : at, 0, edit.group);
  const nextHooks: JsonObject = { ...hooks };
  if (kept.length > 0) nextHooks[edit.event] = kept;
  else delete nextHooks[edit.event];
  const next: JsonObject = { ...root };
  if (Object.keys(nextHooks).length > 0) next.hooks = nextHooks;
  else delete next.hooks;
  // Nothing left: Codex requires a non-empty "hooks", so an emptied file is removed; so is an
  // emptied Claude Code file that only held hooks.
  const content = Object.keys(next).length === 0 ? null : next;
  const text = content === null ? null : `${formatJson(content)}\n`;
  const changed = exists ? text === null || formatJson(root) !== formatJson(content ?? {}) : content !== null;
  if (content !== null) {
    const problem = externalSchemaProblem(schemaOf(edit.client), content);
    if (problem !== null)
      throw refuse(edit.refusal, file, `the result would not conform to the client's settings schema (${problem})`);
  }
  if (!changed) return { file, changed: false, content, written: false };
  if (edit.dryRun === true) return { file, changed: true, content, written: true };
  try {
    if (text === null) {
      if (exists) rmSync(target);
    } else if (text !== before) {
      mkdirSync(dirname(target), { recursive: true });
      const aside = `${target}.agentscm-${process.pid}.tmp`;
      writeFileSync(aside, text, { mode });
      renameSync(aside, target);
    }
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
  return { file, changed: true, content, written: true };
}

/**
 * The words of a command quoteShellArg built (bare words, single-quoted words, `\'` between
 * quotes), or null when the command uses any other shell syntax (double quotes, `$`, `;`, `|`,
 * backquotes, redirections…): such a command was not written by an agentscm installer.
 */
export function splitShellWords(command: string): string[] | null {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] ?? '';
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return null;
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '\\') {
      const next = command[i + 1];
      if (next === undefined) return null;
      word = (word ?? '') + next;
      i += 1;
    } else if (/[A-Za-z0-9._/:=@+,%~-]/.test(c)) {
      word = (word ?? '') + c;
    } else {
      return null;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** One command handler of a settings file. */
export interface HookCommandEntry {
  readonly event: string;
  readonly command: string;
}

/**
 * Read a client's settings file without changing it (`agentscm doctor`): null when it does not
 * exist, else every command handler of every event. A file that is not strict JSON, not an
 * object, larger than the installers accept or not valid for the client's schema is refused
 * with `refusal`, as the installers refuse it.
 */
export function readHookCommands(client: HookClient, file: string, refusal: ErrorCode): HookCommandEntry[] | null {
  if (!existsSync(file)) return null;
  const value = readSettingsDocument(client, file, file, refusal).root;
  const entries: HookCommandEntry[] = [];
  const hooks = value.hooks;
  if (!isJsonObject(hooks)) return entries;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      if (!isJsonObject(group) || !Array.isArray(group.hooks)) continue;
      for (const handler of group.hooks) {
        if (isJsonObject(handler) && handler.type === 'command' && typeof handler.command === 'string')
          entries.push({ event, command: handler.command });
      }
    }
  }
  return entries;
}
