/**
 * Shared set-up of the git-read tests (docs/git.md "Binding a git work tree", "Checkpointing a git commit"): real
 * git repositories, a workspace bound by a real `init-repo`, and the native store read back directly.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { getChange } from '../../src/native/changes.js';
import { findRepositoryByName } from '../../src/native/repositories.js';
import { listRevisionEntries, readRevisionFile, type RevisionEntry } from '../../src/native/revisions.js';
import { openAuthority } from '../../src/native/store.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';

/** Run git in `cwd` with a fixed identity and date; stdout as text. */
export function git(cwd: string, args: readonly string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Test Git',
      GIT_AUTHOR_EMAIL: 'git@example.test',
      GIT_COMMITTER_NAME: 'Test Git',
      GIT_COMMITTER_EMAIL: 'git@example.test',
      GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
      GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
    },
  });
}

/** A new git repository (branch main) in `dir`. */
export function makeRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '--quiet', '-b', 'main']);
  // No background gc racing the temporary directory's removal.
  git(dir, ['config', 'gc.auto', '0']);
  return dir;
}

/** `git add -A` and commit everything; returns the commit ID. */
export function commitAll(dir: string, message: string): string {
  git(dir, ['add', '-A']);
  git(dir, ['commit', '--quiet', '--allow-empty', '-m', message]);
  return git(dir, ['rev-parse', 'HEAD']).trim();
}

/** `agentscm --data-dir DATA ...args --json`, asserted to succeed; its JSON. */
export async function okJson<T = Record<string, unknown>>(
  data: string,
  args: readonly string[],
  env?: Record<string, string>,
): Promise<T> {
  const result = await runCli(['--data-dir', data, ...args, '--json'], { env });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return jsonOf<T>(result);
}

/** `agentscm --data-dir DATA ...args`, asserted to fail with `code`. */
export async function refused(
  data: string,
  args: readonly string[],
  code: string,
  env?: Record<string, string>,
): Promise<CliResult> {
  const result = await runCli(['--data-dir', data, ...args], { env });
  assert.notEqual(result.code, 0, `${args.join(' ')} should fail`);
  assert.match(result.stderr, new RegExp(`error\\[${code}\\]`), result.stderr);
  return result;
}

/** init-repo of `dir` as repository `name` without instruction files. */
export function initRepo(data: string, dir: string, name = 'app', extra: readonly string[] = []): Promise<InitJson> {
  return okJson<InitJson>(data, ['init-repo', dir, '--name', name, '--no-instructions', ...extra]);
}

export interface InitJson {
  readonly repository: string;
  readonly revision: string;
  readonly files: number;
  readonly git_work_tree: string | null;
}

export interface CheckpointJson {
  readonly version: number;
  readonly revision: string;
  readonly previous_revision: string | null;
  readonly created: boolean;
  readonly files: number;
  readonly git: { readonly commit: string; readonly tree: string };
}

/** checkpoint --from-git of `rev` onto `change`, run in the workspace `ws`. */
export function fromGit(
  data: string,
  ws: string,
  change: string,
  rev: string,
  extra: readonly string[] = [],
): Promise<CheckpointJson> {
  return okJson<CheckpointJson>(data, [
    'checkpoint',
    '--workspace',
    ws,
    '--change',
    change,
    '--from-git',
    rev,
    ...extra,
  ]);
}

/** A revision's entries (path, mode, size, blob), read from the store. */
export function revisionEntries(data: string, revision: string, name = 'app'): RevisionEntry[] {
  const auth = openAuthority(data, { mode: 'read' });
  try {
    const repo = findRepositoryByName(auth, name);
    assert.ok(repo !== null);
    return listRevisionEntries(auth, repo.id, revision);
  } finally {
    auth.close();
  }
}

/** A revision's entries, each with its bytes, read from the store. */
export function revisionFiles(
  data: string,
  revision: string,
  name = 'app',
): { path: string; mode: RevisionEntry['mode']; bytes: Buffer }[] {
  const auth = openAuthority(data, { mode: 'read' });
  try {
    const repo = findRepositoryByName(auth, name);
    assert.ok(repo !== null);
    return listRevisionEntries(auth, repo.id, revision).map((e) => ({
      path: e.path,
      mode: e.mode,
      bytes: readRevisionFile(auth, repo.id, revision, e.path, { maxBytes: 64 * 1024 * 1024 }),
    }));
  } finally {
    auth.close();
  }
}

/** The Change's current version, or null when it does not exist. */
export function changeVersion(data: string, change: string, name = 'app'): bigint | null {
  const auth = openAuthority(data, { mode: 'read' });
  try {
    const repo = findRepositoryByName(auth, name);
    assert.ok(repo !== null);
    try {
      return getChange(auth, repo.id, change).current_version;
    } catch {
      return null;
    }
  } finally {
    auth.close();
  }
}

export const WS = (root: string): string => join(root, 'ws');
