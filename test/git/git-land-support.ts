/**
 * Landed Changes mirrored to real git repositories (docs/git.md): the evidence chain of test/support/evidence.ts
 * (real store, enrolled key, installed collector profile, live grant, real collector claims and signed envelopes),
 * a Change version with files of every mode, `approve` and `land` through real processes of the CLI.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { formatJson } from '../../src/contracts/json/canonical-json.js';
import { putSmallBlob } from '../../src/native/blobs.js';
import { comparePaths, recordRevision, type EntryMode, type RevisionEntry } from '../../src/native/revisions.js';
import { openAuthority, writeTransaction } from '../../src/native/store.js';
import { setTarget } from '../../src/native/targets.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { importEnvelope } from '../support/admission.js';
import { claim, envelopeOf, makeEvidence, transferParts, type Evidence } from '../support/evidence.js';
import { CHANGE_ID, checkpoint, defaultFiles, sha256 } from '../support/tasks.js';

export { CHANGE_ID };

/** A file of a test revision: text (a regular file) or bytes with a mode. */
export type FileSpec = string | Buffer | { readonly bytes: string | Buffer; readonly mode: EntryMode };

/** Run git in `cwd` with a fixed identity; stdout as text. */
export function gitIn(cwd: string, args: readonly string[], input?: string): string {
  return execFileSync('git', args, {
    cwd,
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Test Git',
      GIT_AUTHOR_EMAIL: 'git@example.test',
      GIT_COMMITTER_NAME: 'Test Git',
      GIT_COMMITTER_EMAIL: 'git@example.test',
    },
  });
}

/** A new git work tree with one commit on `main` (a README), its identity configured. */
export function makeGitRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  gitIn(dir, ['init', '--quiet', '-b', 'main']);
  gitIn(dir, ['config', 'user.name', 'Repo Owner']);
  gitIn(dir, ['config', 'user.email', 'owner@example.test']);
  gitIn(dir, ['commit', '--quiet', '--allow-empty', '-m', 'start']);
  return dir;
}

/** Record a revision of `files` (any mode) with `parent`; target main is left where it was. */
export function addModedRevision(ev: Evidence, files: Readonly<Record<string, FileSpec>>, parent: string): string {
  const auth = openAuthority(ev.store.dataDir, { mode: 'write' });
  try {
    const entries: RevisionEntry[] = writeTransaction(auth, () =>
      Object.entries(files).map(([path, spec]) => {
        const plain = typeof spec === 'string' || Buffer.isBuffer(spec);
        const raw = plain ? spec : spec.bytes;
        const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw, 'utf8');
        const digest = sha256(bytes);
        putSmallBlob(auth, bytes, digest);
        const mode = plain ? 'file' : spec.mode;
        return { path, mode, size: BigInt(bytes.byteLength), blob: digest };
      }),
    );
    entries.sort((a, b) => comparePaths(a.path, b.path));
    return recordRevision(auth, ev.store.repository, parent, entries).id;
  } finally {
    auth.close();
  }
}

export function pointMain(ev: Evidence, revision: string): void {
  const auth = openAuthority(ev.store.dataDir, { mode: 'write' });
  try {
    setTarget(auth, ev.store.repository, 'main', revision);
  } finally {
    auth.close();
  }
}

export interface Landable {
  readonly ev: Evidence;
  readonly base: string;
  readonly revision: string;
}

/**
 * A new Change version of `files` (added to the default files) on top of `on` (default: the store's first
 * revision), target main at `on`, its check claimed, collected and imported (receipt written).
 */
export function nextVersion(ev: Evidence, files: Readonly<Record<string, FileSpec>>, on?: string): Landable {
  const base = on ?? ev.store.revision;
  const revision = addModedRevision(ev, { ...defaultFiles(), ...files }, base);
  checkpoint(ev.store, revision);
  pointMain(ev, base);
  const imported = importEnvelope(ev, envelopeOf(ev.key, transferParts(claim(ev))));
  assert.equal((imported.receipt as { status: string }).status, 'written', formatJson(imported));
  return { ev, base, revision };
}

/** The evidence store with a landable Change version of `files`. */
export function makeLandable(
  t: TestContext,
  files: Readonly<Record<string, FileSpec>> = { 'b.txt': 'beta' },
): Landable {
  return nextVersion(makeEvidence(t), files);
}

export function cli(ev: Evidence, args: readonly string[]): Promise<CliResult> {
  return runCli(['--data-dir', ev.store.dataDir, ...args]);
}

export function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}`);
  return result;
}

/** approve then land the Change on main (both must succeed); the land's JSON. */
export async function approveAndLand(ev: Evidence): Promise<Record<string, unknown>> {
  ok(await cli(ev, ['approve', '--change', CHANGE_ID, '--json']), 'approve');
  return jsonOf(ok(await cli(ev, ['land', '--change', CHANGE_ID, '--target', 'main', '--json']), 'land'));
}

/** `target link main` to the branch of `repo`. */
export async function linkMain(ev: Evidence, repo: string, extra: readonly string[] = []): Promise<CliResult> {
  return cli(ev, ['target', 'link', 'main', '--git-repo', repo, '--branch', 'main', '--json', ...extra]);
}

export function errorOf(result: CliResult): { code: string; message: string; hint?: string } {
  return jsonOf<{ error: { code: string; message: string; hint?: string } }>(result).error;
}

/** The `git ls-tree -r` listing of a commit: path → [mode, blob]. */
export function lsTree(repo: string, rev: string): Map<string, [string, string]> {
  const out = gitIn(repo, ['ls-tree', '-r', '-z', rev]);
  const map = new Map<string, [string, string]>();
  for (const rec of out.split('\0')) {
    if (rec === '') continue;
    const tab = rec.indexOf('\t');
    const [meta, path] = [rec.slice(0, tab), rec.slice(tab + 1)];
    const [mode, , sha] = meta.split(' ') as [string, string, string];
    map.set(path, [mode, sha]);
  }
  return map;
}

export function tmpJoin(ev: Evidence, name: string): string {
  return join(ev.dir, name);
}
