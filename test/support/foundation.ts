/** Shared fixtures of the foundation command tests: a small project tree and CLI shortcuts. */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import Database from 'better-sqlite3';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

export interface Fixture {
  readonly root: string;
  readonly dataDir: string;
  readonly workspace: string;
}

export function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
}

/** A small project: text files, an executable, a symlink and a .gitignore. */
export function makeProject(dir: string): void {
  writeTree(dir, {
    'README.md': '# demo\n',
    'src/main.ts': 'export const x = 1;\n',
    'bin/run.sh': '#!/bin/sh\necho run\n',
    '.gitignore': '*.log\n',
    'debug.log': 'ignored\n',
  });
  chmodSync(join(dir, 'bin/run.sh'), 0o755);
  symlinkSync('src/main.ts', join(dir, 'main-link'));
}

export function fixture(t: TestContext): Fixture {
  const root = tempDir(t);
  const workspace = join(root, 'project');
  mkdirSync(workspace);
  makeProject(workspace);
  return { root, dataDir: join(root, 'data'), workspace };
}

/** `agentscm --data-dir D <args> --json`, asserting the exit code; returns the parsed document. */
export async function cliJson<T = Record<string, unknown>>(
  f: Fixture,
  args: readonly string[],
  expectCode = 0,
  env?: Record<string, string>,
): Promise<T> {
  const result = await runCli(['--data-dir', f.dataDir, ...args, '--json'], { env });
  assert.equal(
    result.code,
    expectCode,
    `exit ${String(result.code)} for ${args.join(' ')}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
  );
  return jsonOf<T>(result);
}

/** Assert an error result: exit code, code on stderr and in the --json document. */
export function assertError(result: CliResult, code: string, exit: number): void {
  assert.equal(
    result.code,
    exit,
    `expected exit ${exit}, got ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
  );
  assert.match(result.stderr, new RegExp(`^error\\[${code}\\]: `, 'm'));
  if (result.stdout.trim().startsWith('{')) {
    assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, code);
  }
}

export async function initProject(f: Fixture, name = 'demo'): Promise<{ repository: string; revision: string }> {
  return cliJson<{ repository: string; revision: string }>(f, ['init-repo', f.workspace, '--name', name]);
}

/** PRAGMA integrity_check of the authority, read-only. */
export function integrityOk(dataDir: string): void {
  const path = join(dataDir, 'native', 'authority.sqlite');
  assert.ok(existsSync(path));
  const db = new Database(path, { readonly: true });
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    assert.deepEqual(db.pragma('foreign_key_check'), []);
  } finally {
    db.close();
  }
}

/** runCli with the working directory first. */
export function runCliIn(
  cwd: string,
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  return runCli(args, { cwd, env });
}
