/** A real git repository in a temporary directory, for observed-run tests. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';

import { tempDir } from '../helpers/tmp.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });
}

/** A repository with src/, docs/, an ignored *.log pattern and one commit; returns its real path. */
export function makeRepo(t: TestContext, files: Record<string, string> = {}): string {
  const dir = realpathSync(tempDir(t, 'agentscm-agent-state-'));
  git(dir, 'init', '-q', '-b', 'main');
  const all = {
    '.gitignore': '*.log\nbuild/\n',
    'src/a.txt': 'a\n',
    'docs/readme.md': 'docs\n',
    'top.txt': 'top\n',
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/** True while a process with this pid exists (zombies count as gone on Linux). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}
