/**
 * git calls of the write side (docs/git.md): the options and environment of src/agent-state/safe-git.ts (the one
 * way agentscm runs git), with bytes on stdin and, for commits, an explicit identity and date. Synchronous: a
 * mirror moves the branch inside the authority's writer transaction.
 */
import { execFileSync } from 'node:child_process';

import { safeGitArgs, safeGitEnv } from '../agent-state/safe-git.js';
import { AgentscmError } from '../contracts/errors.js';

const MAX_OUTPUT = 256 * 1024 * 1024;

export interface GitCall {
  readonly input?: string | Buffer;
  /** Extra environment (GIT_AUTHOR_* and GIT_COMMITTER_*), set after the safe environment. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface GitOutcome {
  readonly ok: boolean;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** Run git in `cwd`; never throws for a failing git (ok false). */
export function tryGit(cwd: string, args: readonly string[], call: GitCall = {}): GitOutcome {
  try {
    const stdout = execFileSync('git', safeGitArgs(args), {
      cwd,
      env: { ...safeGitEnv(), ...call.env },
      input: call.input ?? '',
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: MAX_OUTPUT,
      windowsHide: true,
    });
    return { ok: true, stdout, stderr: '' };
  } catch (error) {
    const failure = error as { stdout?: Buffer; stderr?: Buffer; code?: string; message?: string };
    const stderr = failure.stderr?.toString('utf8') ?? failure.code ?? failure.message ?? 'git failed';
    return { ok: false, stdout: failure.stdout ?? Buffer.alloc(0), stderr };
  }
}

/** Run git in `cwd`; a failure is GIT_FAILED carrying git's own words. */
export function git(cwd: string, args: readonly string[], call: GitCall = {}): Buffer {
  const out = tryGit(cwd, args, call);
  if (!out.ok)
    throw new AgentscmError('GIT_FAILED', `git ${args[0] ?? ''} failed in ${cwd}: ${out.stderr.trim().slice(0, 500)}`, {
      hint: 'check that git is installed and the repository is intact (`git fsck`), then run the command again',
    });
  return out.stdout;
}

/** One line of output (the trailing newline removed). */
export function gitLine(cwd: string, args: readonly string[], call: GitCall = {}): string {
  return git(cwd, args, call).toString('utf8').replace(/\n$/, '');
}

/** The commit a ref names, or null when it does not exist. */
export function refValue(cwd: string, ref: string): string | null {
  const out = tryGit(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (!out.ok) return null;
  const sha = out.stdout.toString('utf8').trim();
  return sha === '' ? null : sha;
}
