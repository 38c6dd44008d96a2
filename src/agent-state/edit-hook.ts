/**
 * The edit-time contention hook (docs/agent-state.md "Edit hook"): a Claude Code / Codex
 * PreToolUse command hook for file edits. It warns — once per session and path — when an edited
 * path lies in the write scope of another active agent, and never blocks: any error allows the
 * edit with one warning (fail open). Active agents come from the agent-state file of the
 * repository and from the live holder of the repository's mutation lease (an `agent-state run`).
 */
import { existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

import {
  ACTIVE_STATES,
  agentStateConflictsDecoder,
  isScopeWithin,
  MAX_AGENT_STATE_INPUT_BYTES,
  scopePathProblem,
} from '../contracts/agent-state.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { sha256Hex } from '../crypto/sha256.js';
import { holderAlive, leasePathFor, readLeaseHolder } from './lease.js';
import { scopeConflicts } from './operations.js';
import { discoverGitRootSync } from './safe-git.js';

/** Where the repository's active agents are listed by default, relative to its root. */
export const DEFAULT_AGENTS_FILE = join('.agentscm', 'agent-state.json');
const MAX_HOOK_INPUT_BYTES = 1024 * 1024;
const MAX_WARNED_PER_SESSION = 10_000;
/** Tools whose input names files they write (Claude Code); Codex's apply_patch carries a patch. */
const PATH_FIELDS = ['file_path', 'notebook_path', 'path'] as const;
const PATCH_LINE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm;

export interface EditHookOptions {
  /** The agent this hook runs for: its own scopes never warn. */
  readonly agentId: string | null;
  /** The agent-state file ({agents: [envelope…]}); default <root>/.agentscm/agent-state.json. */
  readonly agentsFile: string | null;
  /** Directory of the per-session memory of warnings and of the lease files (default: the temporary directory). */
  readonly stateDir?: string;
}

export interface EditHookOutcome {
  /** The hook's stdout: `{"systemMessage": …}` when there is something to say, else empty. */
  readonly stdout: string;
  readonly warnings: readonly string[];
}

interface Holder {
  readonly agent_id: string;
  readonly state: string;
  readonly scopes: readonly string[];
  readonly source: string;
}

function say(messages: readonly string[]): EditHookOutcome {
  if (messages.length === 0) return { stdout: '', warnings: [] };
  return { stdout: `${JSON.stringify({ systemMessage: messages.join('\n') })}\n`, warnings: messages };
}

/** Paths named by the tool input: file_path / notebook_path / path, or the files of an apply_patch patch. */
function editedPaths(toolInput: JsonValue | undefined): string[] {
  if (!isJsonObject(toolInput)) return [];
  const out: string[] = [];
  for (const field of PATH_FIELDS) {
    const value = toolInput[field];
    if (typeof value === 'string' && value !== '') out.push(value);
  }
  for (const value of Object.values(toolInput)) {
    const texts =
      typeof value === 'string'
        ? [value]
        : Array.isArray(value)
          ? value.filter((v): v is string => typeof v === 'string')
          : [];
    for (const text of texts)
      for (const match of text.matchAll(PATCH_LINE)) if (match[1] !== undefined) out.push(match[1].trim());
  }
  return [...new Set(out)];
}

/**
 * The git root of `cwd` through safe-git (repository-configured programs disabled); null outside
 * a repository; GIT_DIR_UNTRUSTED (the hook then fails open with a warning) when `.git` is not a
 * plain directory owned by the caller.
 */
function gitTopLevel(cwd: string): string | null {
  return discoverGitRootSync(cwd);
}

/** A repository-relative canonical path, or null when the path lies outside the repository. */
function toRepoPath(root: string, cwd: string, path: string): string | null {
  const absolute = isAbsolute(path) ? path : resolve(cwd, path);
  let rel = relative(root, absolute);
  if (rel === '') return '.';
  if (rel.startsWith('..') || isAbsolute(rel)) {
    // The cwd or path may reach the repository through a symlink: compare real paths when they exist.
    try {
      rel = relative(root, realpathSync(absolute));
    } catch {
      return null;
    }
    if (rel.startsWith('..') || isAbsolute(rel)) return null;
  }
  const canonical = rel.split(sep).join('/');
  return scopePathProblem(canonical) === undefined ? canonical : null;
}

function activeAgents(root: string, options: EditHookOptions, stateDir: string): Holder[] {
  const holders: Holder[] = [];
  const file = options.agentsFile ?? join(root, DEFAULT_AGENTS_FILE);
  if (options.agentsFile !== null || existsSync(file)) {
    const { agents } = agentStateConflictsDecoder.decode(readFileSync(file), MAX_AGENT_STATE_INPUT_BYTES);
    // The file obeys the conflicts rules (each agent once, canonical scopes).
    scopeConflicts(agents);
    for (const agent of agents) {
      if (!ACTIVE_STATES.has(agent.state)) continue;
      holders.push({
        agent_id: agent.agent_id,
        state: agent.state,
        scopes: agent.scopes.filter((s) => s.access === 'write').map((s) => s.path),
        source: 'agent-state file',
      });
    }
  }
  const lease = readLeaseHolder(leasePathFor(root, stateDir));
  if (lease !== null && holderAlive(lease))
    holders.push({ agent_id: lease.agent_id, state: 'working', scopes: lease.scopes, source: 'mutation lease' });
  return holders.filter((holder) => holder.agent_id !== options.agentId);
}

function memoryPath(stateDir: string, root: string, session: string): string {
  return join(stateDir, `agentscm-edit-hook-v1-${sha256Hex(`${root}\0${session}`).slice(0, 32)}.json`);
}

function readMemory(path: string): Set<string> {
  try {
    const value = parseStrictJson(readFileSync(path), { maxBytes: 16 * 1024 * 1024 });
    if (isJsonObject(value) && Array.isArray(value.warned))
      return new Set(value.warned.filter((v): v is string => typeof v === 'string'));
  } catch {
    // No memory yet, or an unreadable one: warn again rather than stay silent.
  }
  return new Set();
}

function writeMemory(path: string, warned: Set<string>): void {
  const list = [...warned].slice(-MAX_WARNED_PER_SESSION);
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, JSON.stringify({ warned: list }), { mode: 0o600 });
  renameSync(aside, path);
}

/** Check one PreToolUse input (docs/agent-state.md "Edit hook"); never throws. */
export function runEditHook(input: Uint8Array, options: EditHookOptions): EditHookOutcome {
  try {
    const value = parseStrictJson(input, { maxBytes: MAX_HOOK_INPUT_BYTES });
    if (!isJsonObject(value)) throw new Error('the hook input is not a JSON object');
    const hook: JsonObject = value;
    const cwd = typeof hook.cwd === 'string' && hook.cwd !== '' ? hook.cwd : process.cwd();
    const session = typeof hook.session_id === 'string' && hook.session_id !== '' ? hook.session_id : null;
    const paths = editedPaths(hook.tool_input);
    if (paths.length === 0) return say([]);
    const root = gitTopLevel(cwd);
    if (root === null) return say([]);
    const stateDir = options.stateDir ?? tmpdir();
    const holders = activeAgents(root, options, stateDir);
    if (holders.length === 0) return say([]);
    const memory = session === null ? null : memoryPath(stateDir, root, session);
    const warned = memory === null ? new Set<string>() : readMemory(memory);
    const messages: string[] = [];
    for (const raw of paths) {
      const path = toRepoPath(root, cwd, raw);
      if (path === null || warned.has(path)) continue;
      const owners = holders.flatMap((holder) =>
        holder.scopes
          .filter((scope) => isScopeWithin(scope, path))
          .map((scope) => `${holder.agent_id} (${holder.state}, write scope ${scope}, from the ${holder.source})`),
      );
      if (owners.length === 0) continue;
      warned.add(path);
      messages.push(
        `agentscm: ${path} lies in the write scope of another active agent: ${owners.join('; ')}. Coordinate ` +
          'before editing it.',
      );
    }
    if (memory !== null && messages.length > 0) writeMemory(memory, warned);
    return say(messages);
  } catch (error) {
    return say([
      'agentscm edit-hook could not check this edit for contention ' +
        `(${error instanceof Error ? error.message : 'unknown error'}); the edit is allowed.`,
    ]);
  }
}
