/**
 * Over 400 lines: runObserved is one ordered sequence (lease, snapshots, process, classification).
 *
 * runObserved: a subprocess run under the agent-state contract
 * (docs/agent-state.md "Observed runs"). In order: the mutation lease of the git root (writers
 * only; a held or stale lease blocks before the command starts), the before-snapshots (git,
 * declared write scopes, metadata guard), the contained process, the after-snapshots, the lease
 * released, and the classification:
 *
 * - `completed` only with git, stable revisions, complete snapshots, every change inside a write
 *   scope and exit 0;
 * - `failed` on a non-zero exit, a signal, a time-out or a command that could not start;
 * - `blocked/scope_violation` when a change lies outside every write scope (detection only:
 *   nothing is rolled back);
 * - `idle` for a success that cannot be verified (no git, a race, a bound, an I/O error).
 */
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  isScopeWithin,
  MAX_RESULT_PATHS,
  MAX_SUMMARY_BYTES,
  scopePathProblem,
  type AgentState,
  type AgentStateResult,
  type BlockedReason,
  type LifecycleState,
  type ResultOutcome,
  type Scope,
} from '../contracts/agent-state.js';
import { runContainedProcess, type ContainedResult, type ContainmentEvidence } from './contained-process.js';
import {
  GUARD_PATH_LIMIT,
  SCOPE_SNAPSHOT_LIMITS,
  snapshotChanges,
  takeMetadataGuard,
  takeScopeSnapshot,
  type FsSnapshot,
  type SnapshotHooks,
  type SnapshotLimits,
} from './fs-snapshot.js';
import { takeGitDirGuard } from './git-dir-guard.js';
import { gitChangedPaths, gitRoot, takeGitSnapshot, type GitSnapshot } from './git-observer.js';
import { acquireMutationLease, releaseMutationLease, type LeaseHolder } from './lease.js';
import { createAgentState } from './operations.js';
import { checkGitDir } from './safe-git.js';

export interface ObservedRunInput {
  readonly agent_id: string;
  readonly backend: string;
  readonly task_id: string | null;
  /** Repository-relative (to the git root; to `cwd` without git), canonical, each once. */
  readonly scopes: readonly Scope[];
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly timeoutMs?: number;
  readonly graceMs?: number;
  readonly stdout: 'inherit' | 'stderr';
  /** Where lease files live (default: the local temporary directory). */
  readonly leaseDir?: string;
  /** Bounds and fault injection, for tests. */
  readonly scopeLimits?: SnapshotLimits;
  readonly guardLimit?: number;
  readonly snapshotHooks?: SnapshotHooks;
  readonly verifyGroup?: (pgid: number) => boolean;
  /** Called after the before-snapshots and before the command starts (tests and progress). */
  readonly onStart?: () => void;
}

export interface SnapshotReport {
  readonly complete: boolean;
  readonly problem: string | null;
  readonly detail: string | null;
  readonly paths: number;
  readonly changed: readonly string[];
  readonly changed_truncated: boolean;
}

export interface ObservedRunReport {
  readonly state: AgentState;
  /** The observations in order: queued, working (when the command started), the final one. */
  readonly history: readonly AgentState[];
  readonly observation: {
    readonly root: string;
    readonly lease: {
      readonly taken: boolean;
      readonly path: string | null;
      readonly released: boolean;
      readonly lost: boolean;
      readonly holder: LeaseHolder | null;
      readonly stale: boolean;
    } | null;
    readonly git: {
      readonly available: boolean;
      readonly before: string | null;
      readonly after: string | null;
      readonly stable: boolean;
      readonly error: string | null;
      readonly changed: readonly string[];
      readonly changed_truncated: boolean;
    };
    readonly scope_snapshot: SnapshotReport | null;
    readonly metadata_guard: SnapshotReport | null;
    /**
     * The git directory guard: `.git` entries git does not write for ordinary work (docs/agent-state.md "The git
     * directory").
     */
    readonly git_dir: SnapshotReport | null;
    readonly scope_violations: readonly string[];
    readonly scope_violations_truncated: boolean;
    readonly exit: {
      readonly code: number | null;
      readonly signal: string | null;
      readonly timed_out: boolean;
      readonly duration_ms: number;
    } | null;
    readonly containment: ContainmentEvidence | null;
  };
}

function bounded(paths: readonly string[]): { list: string[]; truncated: boolean } {
  return { list: paths.slice(0, MAX_RESULT_PATHS), truncated: paths.length > MAX_RESULT_PATHS };
}

function snapshotReport(before: FsSnapshot, after: FsSnapshot | null): SnapshotReport {
  const broken = !before.complete ? before : after !== null && !after.complete ? after : null;
  const changed = after === null || !before.complete || !after.complete ? [] : snapshotChanges(before, after);
  const { list, truncated } = bounded(changed);
  return {
    complete: broken === null && after !== null,
    problem: broken?.problem ?? null,
    detail: broken?.detail ?? null,
    paths: Math.max(before.entries.size, after?.entries.size ?? 0),
    changed: list,
    changed_truncated: truncated,
  };
}

function summaryText(parts: readonly string[]): string {
  let text = parts.join('; ');
  while (Buffer.byteLength(text, 'utf8') > MAX_SUMMARY_BYTES) text = text.slice(0, Math.floor(text.length * 0.9));
  return text;
}

/** Run a command under the contract and report its agent-state (docs/agent-state.md "Observed runs"). */
export async function runObserved(input: ObservedRunInput): Promise<ObservedRunReport> {
  const scopes = input.scopes.map((scope) => ({ path: scope.path, access: scope.access }));
  const writeScopes = scopes.filter((scope) => scope.access === 'write').map((scope) => scope.path);
  const capabilities = { mutate_workspace: writeScopes.length > 0 ? ('adapter' as const) : ('unknown' as const) };
  let revision = 0n;
  const observe = (state: LifecycleState, blocked: BlockedReason | null, result: AgentStateResult | null): AgentState =>
    createAgentState({
      agent_id: input.agent_id,
      backend: input.backend,
      task_id: input.task_id,
      state,
      blocked_reason: blocked,
      state_source: 'adapter',
      scopes,
      capabilities,
      revision: revision++,
      result,
    });
  // Validates the scopes and the identifiers before anything is touched.
  const history: AgentState[] = [observe('queued', null, null)];

  const top = await gitRoot(input.cwd);
  const root = top ?? realpathSync(input.cwd);
  const gitAvailable = top !== null;

  let leaseReport: ObservedRunReport['observation']['lease'] = null;
  let held: Parameters<typeof releaseMutationLease>[0] | null = null;
  if (writeScopes.length > 0) {
    const attempt = acquireMutationLease(realpathSync(root), input.agent_id, writeScopes, input.leaseDir ?? tmpdir());
    if (!attempt.acquired) {
      const stale = attempt.reason === 'stale';
      const holder =
        attempt.holder === null
          ? 'an unreadable lease'
          : `agent ${attempt.holder.agent_id} (pid ${attempt.holder.pid})`;
      const result: AgentStateResult = {
        outcome: 'cancelled',
        exit_code: null,
        signal: null,
        changed_paths: [],
        scope_violations: [],
        summary: stale
          ? `not started: the mutation lease ${attempt.path} was left by ${holder}, which is gone; it is not ` +
            'removed automatically'
          : `not started: ${holder} holds the mutation lease of ${root}`,
      };
      const state = observe('blocked', stale ? 'stale_lease' : 'conflict', result);
      history.push(state);
      return {
        state,
        history,
        observation: {
          root,
          lease: { taken: false, path: attempt.path, released: false, lost: false, holder: attempt.holder, stale },
          git: {
            available: gitAvailable,
            before: null,
            after: null,
            stable: false,
            error: null,
            changed: [],
            changed_truncated: false,
          },
          scope_snapshot: null,
          metadata_guard: null,
          git_dir: null,
          scope_violations: [],
          scope_violations_truncated: false,
          exit: null,
          containment: null,
        },
      };
    }
    held = attempt.lease;
    leaseReport = { taken: true, path: attempt.lease.path, released: false, lost: false, holder: null, stale: false };
  }

  let run: ContainedResult;
  let gitBefore: GitSnapshot | null = null;
  let gitAfter: GitSnapshot | null = null;
  let scopeBefore: FsSnapshot | null = null;
  let scopeAfter: FsSnapshot | null = null;
  let guardBefore: FsSnapshot | null = null;
  let guardAfter: FsSnapshot | null = null;
  let gitDirBefore: FsSnapshot | null = null;
  let gitDirAfter: FsSnapshot | null = null;
  /** Why git was not run after the command (the git directory changed or is no longer trusted). */
  let gitSkipped: string | null = null;
  let gitDirReplaced: string | null = null;
  const gitDir = join(root, '.git');
  try {
    const scopeLimits = input.scopeLimits ?? SCOPE_SNAPSHOT_LIMITS;
    const guardLimit = input.guardLimit ?? GUARD_PATH_LIMIT;
    // git runs in its own process while this one walks the scopes and the guard.
    if (gitAvailable) gitDirBefore = takeGitDirGuard(gitDir);
    const gitBeforePending = gitAvailable ? takeGitSnapshot(root) : null;
    if (writeScopes.length > 0) scopeBefore = takeScopeSnapshot(root, writeScopes, scopeLimits, input.snapshotHooks);
    if (scopes.length > 0) guardBefore = takeMetadataGuard(root, writeScopes, guardLimit, input.snapshotHooks);
    gitBefore = await gitBeforePending;
    history.push(observe('working', null, null));
    input.onStart?.();
    run = await runContainedProcess({
      command: input.command,
      args: input.args,
      cwd: input.cwd,
      stdout: input.stdout,
      ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
      ...(input.graceMs === undefined ? {} : { graceMs: input.graceMs }),
      ...(input.verifyGroup === undefined ? {} : { verifyGroup: input.verifyGroup }),
    });
    // The git directory first: when the command changed what git would run or read, git is not
    // run again (defence in depth beside safe-git's disabled programs).
    if (gitAvailable) {
      try {
        checkGitDir(root);
        gitDirAfter = takeGitDirGuard(gitDir);
      } catch (error) {
        gitDirReplaced = error instanceof Error ? error.message : 'the git directory is no longer trusted';
      }
      if (gitDirReplaced !== null) gitSkipped = `the git directory is no longer trusted (${gitDirReplaced})`;
      else if (gitDirBefore === null || !gitDirBefore.complete || gitDirAfter === null || !gitDirAfter.complete)
        gitSkipped = 'the git directory guard is incomplete';
      else if (snapshotChanges(gitDirBefore, gitDirAfter).length > 0)
        gitSkipped = 'the command changed the git directory';
    }
    const gitAfterPending = gitAvailable && gitSkipped === null ? takeGitSnapshot(root) : null;
    if (scopeBefore !== null) scopeAfter = takeScopeSnapshot(root, writeScopes, scopeLimits, input.snapshotHooks);
    if (guardBefore !== null) guardAfter = takeMetadataGuard(root, writeScopes, guardLimit, input.snapshotHooks);
    gitAfter = await gitAfterPending;
  } finally {
    if (held !== null && leaseReport !== null) {
      const released = releaseMutationLease(held);
      leaseReport = { ...leaseReport, released: released.released, lost: released.lost };
    }
  }

  let gitChanged: string[] = [];
  let gitError: string | null = null;
  if (gitSkipped !== null) {
    gitError = `git was not run after the command: ${gitSkipped}`;
  } else if (gitBefore !== null && gitAfter !== null) {
    const diff = await gitChangedPaths(root, gitBefore, gitAfter);
    gitChanged = diff.paths;
    gitError = gitBefore.error ?? gitAfter.error ?? diff.error;
  }
  const stable = gitBefore !== null && gitAfter !== null && gitBefore.stable && gitAfter.stable && gitError === null;
  const scopeReport = scopeBefore === null ? null : snapshotReport(scopeBefore, scopeAfter);
  const guardReport = guardBefore === null ? null : snapshotReport(guardBefore, guardAfter);
  const gitDirReport =
    gitDirBefore === null
      ? null
      : gitDirReplaced !== null
        ? {
            complete: false,
            problem: 'replaced',
            detail: gitDirReplaced,
            paths: gitDirBefore.entries.size,
            changed: ['.git'],
            changed_truncated: false,
          }
        : snapshotReport(gitDirBefore, gitDirAfter);
  // An incomplete snapshot proves nothing either way: its differences are not reported as changes.
  const trusted = (report: SnapshotReport | null): readonly string[] =>
    report !== null && report.complete ? report.changed : [];
  // No write scope covers the git directory: each of its changes is a violation, and a .git
  // that is no longer a plain directory owned by the caller is one too.
  const gitDirChanged = gitDirReport === null ? [] : gitDirReplaced !== null ? ['.git'] : trusted(gitDirReport);
  const allChanged = new Set([...gitChanged, ...trusted(scopeReport), ...trusted(guardReport), ...gitDirChanged]);
  const violations = [...allChanged]
    .filter((path) => gitDirChanged.includes(path) || !writeScopes.some((scope) => isScopeWithin(scope, path)))
    .sort();
  // A file name with a control character is legal on disk but not a scope path: it counts (as a
  // change, as a violation) but cannot be listed in the envelope's result.
  const unreportable = [...allChanged].filter((path) => scopePathProblem(path) !== undefined).length;
  const changedList = bounded([...allChanged].filter((path) => scopePathProblem(path) === undefined).sort());
  const violationList = bounded(violations.filter((path) => scopePathProblem(path) === undefined));

  const reasons: string[] = [];
  if (!gitAvailable) reasons.push('no git work tree: changes cannot be observed');
  else if (!stable) reasons.push(`git revisions not stable: ${gitError ?? 'HEAD moved while it was read'}`);
  for (const [name, report] of [
    ['scope snapshot', scopeReport],
    ['metadata guard', guardReport],
    ['git directory guard', gitDirReplaced === null ? gitDirReport : null],
  ] as const) {
    if (report !== null && !report.complete)
      reasons.push(`${name} incomplete (${report.problem ?? 'unknown'}): ${report.detail ?? ''}`);
  }
  if (leaseReport?.lost === true) reasons.push('the mutation lease was removed or replaced during the run');
  if (unreportable > 0)
    reasons.push(`${unreportable} changed path(s) have names with control characters that the result cannot list`);
  if (changedList.truncated) reasons.push(`more than ${MAX_RESULT_PATHS} changed paths; the list is truncated`);

  let state: LifecycleState;
  let blocked: BlockedReason | null = null;
  let outcome: ResultOutcome;
  const c = run.containment;
  if (!c.started) {
    state = 'failed';
    outcome = 'failed';
    reasons.unshift(`the command was not started: ${c.error ?? 'containment failed'}`);
  } else if (run.timed_out) {
    state = 'failed';
    outcome = 'timed_out';
    reasons.unshift('the command timed out; its process group was terminated');
  } else if (run.exit_code !== 0) {
    state = 'failed';
    outcome = 'failed';
    reasons.unshift(run.signal === null ? `exit status ${String(run.exit_code)}` : `terminated by ${run.signal}`);
  } else if (violations.length > 0) {
    state = 'blocked';
    blocked = 'scope_violation';
    outcome = 'unverified';
    reasons.unshift(
      `${violations.length} changed path(s) outside every declared write scope (nothing was rolled back)`,
    );
    if (gitDirChanged.length > 0)
      reasons.splice(
        1,
        0,
        'the command changed the git directory ' +
          `(${gitDirChanged.slice(0, 5).join(', ')}${gitDirChanged.length > 5 ? ', …' : ''}): configuration, ` +
          'hooks or info planted there run with any later git command; review and remove them before running git',
      );
  } else if (reasons.length > 0) {
    state = 'idle';
    outcome = 'unverified';
    reasons.unshift('exit status 0, not verified');
  } else {
    state = 'completed';
    outcome = 'succeeded';
    reasons.unshift('exit status 0, every change inside the declared write scopes');
  }
  if (c.signals_forwarded.length > 0)
    reasons.push(`agentscm received ${c.signals_forwarded.join(', ')} and passed it on to the command's process group`);
  if (c.started && c.descendants_at_root_exit.length > 0)
    reasons.push(`${c.descendants_at_root_exit.length} descendant(s) outlived the root and were terminated`);
  if (violations.length > 0 && state !== 'blocked')
    reasons.push(`${violations.length} changed path(s) outside every declared write scope`);

  const signalName = run.signal !== null && /^SIG[A-Z0-9]{1,13}$/.test(run.signal) ? run.signal : null;
  const result: AgentStateResult = {
    outcome,
    exit_code: run.exit_code !== null && run.exit_code >= 0 && run.exit_code <= 255 ? run.exit_code : null,
    signal: signalName,
    changed_paths: changedList.list,
    scope_violations: violationList.list,
    summary: summaryText(reasons),
  };
  const final = observe(state, blocked, result);
  history.push(final);
  return {
    state: final,
    history,
    observation: {
      root,
      lease: leaseReport,
      git: {
        available: gitAvailable,
        before: gitBefore?.head ?? null,
        after: gitAfter?.head ?? null,
        stable,
        error: gitError,
        changed: bounded(gitChanged).list,
        changed_truncated: bounded(gitChanged).truncated,
      },
      scope_snapshot: scopeReport,
      metadata_guard: guardReport,
      git_dir: gitDirReport,
      scope_violations: violations.slice(0, MAX_RESULT_PATHS),
      scope_violations_truncated: violations.length > MAX_RESULT_PATHS,
      exit: { code: run.exit_code, signal: run.signal, timed_out: run.timed_out, duration_ms: run.duration_ms },
      containment: run.containment,
    },
  };
}

/** CLI exit status of a run: 0 completed, 3 blocked by a lease, 1 otherwise. */
export function observedRunExitCode(report: ObservedRunReport): 0 | 1 | 3 {
  if (report.state.state === 'completed') return 0;
  if (
    report.state.state === 'blocked' &&
    (report.state.blocked_reason === 'conflict' || report.state.blocked_reason === 'stale_lease')
  )
    return 3;
  return 1;
}
