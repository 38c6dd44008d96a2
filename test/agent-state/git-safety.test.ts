/**
 * issue #25 item 1: an observed command must not plant code that agentscm itself runs.
 * (a) changes under `.git` (configuration, hooks, info, alternates…) are scope violations and git
 * is not run again after them; (b) every git call agentscm makes runs with the programs a
 * repository can configure disabled, so that a configuration planted before the run (or by an
 * earlier, reported run) runs nothing either; (c) a `.git` that is not a plain directory owned by
 * the caller is refused before git runs there. Real git, real processes, a marker file that
 * appears if anything planted ever runs.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { runEditHook } from '../../src/agent-state/edit-hook.js';
import { takeGitSnapshot } from '../../src/agent-state/git-observer.js';
import { runObserved, type ObservedRunReport } from '../../src/agent-state/run.js';
import { SAFE_GIT_OPTIONS, safeGitArgs, safeGitEnv } from '../../src/agent-state/safe-git.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { git, makeRepo } from './fixture.js';

interface Planted {
  readonly repo: string;
  /** An executable outside every scope that creates `marker` when anything runs it. */
  readonly evil: string;
  readonly marker: string;
  readonly outside: string;
}

/** A repository, an evil.sh outside the write scope (committed, at the top) and a marker path outside the repository. */
function planted(t: TestContext): Planted {
  const outside = tempDir(t, 'agentscm-git-safety-');
  const marker = join(outside, 'pwned');
  const repo = makeRepo(t, { 'evil.sh': `#!/bin/sh\ntouch '${marker}'\ncat >/dev/null 2>&1\nexit 0\n` });
  chmodSync(join(repo, 'evil.sh'), 0o755);
  git(repo, 'update-index', '--chmod=+x', 'evil.sh');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-qam', 'x');
  return { repo, evil: join(repo, 'evil.sh'), marker, outside };
}

function observe(repo: string, command: string): Promise<ObservedRunReport> {
  return runObserved({
    agent_id: 'b',
    backend: 'subprocess',
    task_id: null,
    scopes: [{ path: 'src', access: 'write' }],
    command: 'sh',
    args: ['-c', command],
    cwd: repo,
    stdout: 'stderr',
    leaseDir: join(repo, '..'),
  });
}

interface RunJson {
  state: { state: string; blocked_reason: string | null; result: { scope_violations: string[]; summary: string } };
  observation: { git: { error: string | null }; git_dir: { changed: string[] } | null; scope_violations: string[] };
}

test('the reproducer: fsmonitor and a pre-commit hook planted by the command are violations, and nothing planted runs then or in the next run', async (t) => {
  const { repo, marker, outside } = planted(t);
  const env = { TMPDIR: outside };
  const command = `echo b >> src/a.txt; git config core.fsmonitor "$PWD/evil.sh"; printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`;
  const first = await runCli(
    ['agent-state', 'run', '--agent', 'b', '--scope', 'src:write', '--json', '--', 'sh', '-c', command],
    { cwd: repo, env },
  );
  assert.equal(first.code, 1, first.stderr);
  const report = jsonOf<RunJson>(first);
  assert.equal(report.state.state, 'blocked');
  assert.equal(report.state.blocked_reason, 'scope_violation');
  assert.ok(report.state.result.scope_violations.includes('.git/config'), JSON.stringify(report.state.result));
  assert.ok(report.state.result.scope_violations.includes('.git/hooks/pre-commit'));
  assert.match(report.state.result.summary, /changed the git directory/);
  assert.match(report.observation.git.error ?? '', /git was not run after the command/);
  assert.equal(existsSync(marker), false, 'evil.sh ran');
  // The planted configuration stays (detection only); the next run's git calls still run none of it.
  const second = await runCli(
    ['agent-state', 'run', '--agent', 'b', '--scope', 'src:write', '--json', '--', 'sh', '-c', 'echo c >> src/a.txt'],
    { cwd: repo, env },
  );
  assert.equal(jsonOf<RunJson>(second).state.state, 'completed', second.stdout);
  assert.equal(second.code, 0);
  assert.equal(existsSync(marker), false, 'evil.sh ran in the next run');
  assert.equal(git(repo, 'config', 'core.fsmonitor').trim(), join(repo, 'evil.sh'), 'nothing was rolled back');
});

test('what the command plants under .git — pager, external diff, an includeIf, a filter driver, info files, alternates — is a violation and never runs', async (t) => {
  const cases: [string, (p: Planted) => string, string][] = [
    ['core.pager', (p) => `git config core.pager '${p.evil}'; git config pager.status '${p.evil}'`, '.git/config'],
    [
      'diff.external',
      (p) => `git config diff.external '${p.evil}'; git config diff.evil.textconv '${p.evil}'`,
      '.git/config',
    ],
    [
      'includeIf',
      (p) =>
        `printf '[core]\\n\\tfsmonitor = ${p.evil}\\n' > '${join(p.outside, 'evil.inc')}'; git config 'includeIf.gitdir:/.path' '${join(p.outside, 'evil.inc')}'`,
      '.git/config',
    ],
    [
      'filter driver',
      (p) =>
        `git config filter.evil.clean '${p.evil}'; git config filter.evil.required true; echo '* filter=evil' > .git/info/attributes; touch -d 2001-01-01 top.txt`,
      '.git/info/attributes',
    ],
    ['info/exclude', () => `echo 'docs/' >> .git/info/exclude`, '.git/info/exclude'],
    ['alternates', (p) => `echo '${p.outside}' > .git/objects/info/alternates`, '.git/objects/info/alternates'],
    [
      'a new hook',
      () => `printf '#!/bin/sh\\n' > .git/hooks/post-index-change; chmod +x .git/hooks/post-index-change`,
      '.git/hooks/post-index-change',
    ],
  ];
  for (const [name, plant, path] of cases) {
    const p = planted(t);
    const report = await observe(p.repo, `echo b >> src/a.txt; ${plant(p)}`);
    assert.equal(report.state.state, 'blocked', `${name}: ${report.state.result?.summary ?? ''}`);
    assert.equal(report.state.blocked_reason, 'scope_violation', name);
    assert.ok(
      report.observation.scope_violations.includes(path),
      `${name}: ${JSON.stringify(report.observation.scope_violations)}`,
    );
    assert.equal(existsSync(p.marker), false, `${name}: evil.sh ran`);
  }
});

test('configuration planted before the run (fsmonitor, pager, external diff, includeIf, a required filter, GIT_* variables) runs nothing: the run completes', async (t) => {
  const cases: [string, (p: Planted) => void, Record<string, string>][] = [
    ['core.fsmonitor', (p) => git(p.repo, 'config', 'core.fsmonitor', p.evil), {}],
    [
      'core.pager',
      (p) => (git(p.repo, 'config', 'core.pager', p.evil), git(p.repo, 'config', 'pager.status', p.evil)),
      { GIT_PAGER: '' },
    ],
    [
      'diff.external',
      (p) => (
        git(p.repo, 'config', 'diff.external', p.evil),
        writeFileSync(join(p.repo, '.git/info/attributes'), '* diff=evil\n'),
        git(p.repo, 'config', 'diff.evil.textconv', p.evil)
      ),
      {},
    ],
    [
      'includeIf',
      (p) => {
        writeFileSync(join(p.outside, 'evil.inc'), `[core]\n\tfsmonitor = ${p.evil}\n`);
        git(p.repo, 'config', `includeIf.gitdir:${p.repo}/.git.path`, join(p.outside, 'evil.inc'));
      },
      {},
    ],
    [
      'filter driver',
      (p) => {
        git(p.repo, 'config', 'filter.evil.clean', p.evil);
        git(p.repo, 'config', 'filter.evil.process', p.evil);
        git(p.repo, 'config', 'filter.evil.required', 'true');
        writeFileSync(join(p.repo, '.git/info/attributes'), '* filter=evil\n');
        // Same size, new time: git must read the file (through its clean filter) to compare it.
        utimesSync(join(p.repo, 'top.txt'), new Date('2001-01-01'), new Date('2001-01-01'));
      },
      {},
    ],
    [
      'GIT_CONFIG_COUNT',
      () => undefined,
      { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: 'EVIL' },
    ],
    ['GIT_CONFIG_PARAMETERS', () => undefined, { GIT_CONFIG_PARAMETERS: "'core.fsmonitor'='EVIL'" }],
  ];
  for (const [name, plant, rawEnv] of cases) {
    const p = planted(t);
    plant(p);
    const env = Object.fromEntries(Object.entries(rawEnv).map(([key, value]) => [key, value.replace('EVIL', p.evil)]));
    const result = await runCli(
      ['agent-state', 'run', '--agent', 'b', '--scope', 'src:write', '--json', '--', 'sh', '-c', 'echo b >> src/a.txt'],
      { cwd: p.repo, env: { TMPDIR: p.outside, ...env } },
    );
    const report = jsonOf<RunJson>(result);
    assert.equal(report.state.state, 'completed', `${name}: ${report.state.result.summary}`);
    assert.equal(existsSync(p.marker), false, `${name}: evil.sh ran`);
  }
});

test('the observer alone (takeGitSnapshot) runs no planted fsmonitor or filter', async (t) => {
  const p = planted(t);
  git(p.repo, 'config', 'core.fsmonitor', p.evil);
  git(p.repo, 'config', 'filter.evil.clean', p.evil);
  writeFileSync(join(p.repo, '.git/info/attributes'), '* filter=evil\n');
  utimesSync(join(p.repo, 'top.txt'), new Date('2001-01-01'), new Date('2001-01-01'));
  const snapshot = await takeGitSnapshot(p.repo);
  assert.equal(snapshot.stable, true, snapshot.error ?? '');
  assert.equal(existsSync(p.marker), false);
  // Control: plain git runs the planted fsmonitor, so the marker is a real detector.
  git(p.repo, 'status', '--porcelain');
  assert.equal(existsSync(p.marker), true, 'the control did not run evil.sh');
});

test('every git call gets the disabling options and a scrubbed environment', () => {
  const args = safeGitArgs(['log', '--name-only', 'HEAD'], ['lfs']);
  for (const option of [
    '--no-pager',
    '--no-optional-locks',
    'core.fsmonitor=false',
    'core.hooksPath=/dev/null',
    'core.pager=cat',
    'diff.external=',
  ])
    assert.ok(args.includes(option), option);
  assert.deepEqual(args.slice(args.indexOf('log'), args.indexOf('log') + 4), [
    'log',
    '--no-ext-diff',
    '--no-textconv',
    '--no-show-signature',
  ]);
  for (const setting of ['clean=', 'smudge=', 'process=', 'required=false'])
    assert.ok(args.includes(`filter.lfs.${setting}`), setting);
  assert.deepEqual(safeGitArgs(['diff', 'A', 'B']).slice(SAFE_GIT_OPTIONS.length), [
    'diff',
    '--no-ext-diff',
    '--no-textconv',
    'A',
    'B',
  ]);
  const saved = { ...process.env };
  try {
    Object.assign(process.env, {
      GIT_DIR: '/elsewhere',
      GIT_EXTERNAL_DIFF: '/evil',
      git_work_tree: '/x',
      GIT_CONFIG_GLOBAL: '/evil',
    });
    const env = safeGitEnv();
    assert.equal(
      Object.keys(env).filter(
        (key) =>
          key.toUpperCase().startsWith('GIT_') &&
          ![
            'GIT_CONFIG_NOSYSTEM',
            'GIT_ATTR_NOSYSTEM',
            'GIT_PAGER',
            'GIT_OPTIONAL_LOCKS',
            'GIT_TERMINAL_PROMPT',
            'GIT_NO_REPLACE_OBJECTS',
          ].includes(key),
      ).length,
      0,
    );
    assert.equal(env.GIT_CONFIG_NOSYSTEM, '1');
    assert.equal(env.GIT_PAGER, 'cat');
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  }
});

test('git writing for in-scope work (commit, branch, tag, stash, gc of loose objects) is not a .git change', async (t) => {
  const repo = makeRepo(t);
  const report = await observe(
    repo,
    'echo n > src/n.txt && git add src/n.txt && git -c user.name=t -c user.email=t@x commit -qm n && git branch side && git tag v1 && echo s >> src/a.txt && git stash -q && git stash pop -q && git checkout -q -b work && git checkout -q main && git gc -q',
  );
  assert.equal(report.state.state, 'completed', report.state.result?.summary);
  assert.deepEqual(report.observation.git_dir?.changed, []);
  assert.equal(report.observation.git_dir?.complete, true);
});

test('a .git that is a symlink, a gitdir file, owned by another user, or whose config is a symlink or whose core.worktree points elsewhere is refused before anything runs', async (t) => {
  const variants: [string, (repo: string, outside: string) => void][] = [
    [
      'symlinked .git',
      (repo, outside) => (
        renameSync(join(repo, '.git'), join(outside, 'real.git')),
        symlinkSync(join(outside, 'real.git'), join(repo, '.git'))
      ),
    ],
    [
      'gitdir file',
      (repo, outside) => (
        renameSync(join(repo, '.git'), join(outside, 'real.git')),
        writeFileSync(join(repo, '.git'), `gitdir: ${join(outside, 'real.git')}\n`)
      ),
    ],
    [
      'symlinked config',
      (repo, outside) => (
        renameSync(join(repo, '.git/config'), join(outside, 'config')),
        symlinkSync(join(outside, 'config'), join(repo, '.git/config'))
      ),
    ],
    [
      'core.worktree elsewhere',
      (repo, outside) => (mkdirSync(join(outside, 'wt')), git(repo, 'config', 'core.worktree', join(outside, 'wt'))),
    ],
  ];
  if (process.getuid?.() === 0)
    variants.push(['.git owned by nobody', (repo) => chownSync(join(repo, '.git'), 65534, 65534)]);
  for (const [name, spoil] of variants) {
    const repo = makeRepo(t);
    const outside = tempDir(t);
    spoil(repo, outside);
    const result = await runCli(
      ['agent-state', 'run', '--agent', 'b', '--scope', 'src:write', '--', 'touch', 'src/ran.flag'],
      { cwd: join(repo, 'src'), env: { TMPDIR: outside } },
    );
    assert.equal(result.code, 2, `${name}: ${result.stderr}${result.stdout}`);
    assert.match(result.stderr, /^error\[GIT_DIR_UNTRUSTED\]/, name);
    assert.equal(existsSync(join(repo, 'src/ran.flag')), false, `${name}: the command ran`);
    assert.deepEqual(readFileSync(join(repo, 'src/a.txt'), 'utf8'), 'a\n');
  }
});

test('the command replacing .git with a symlink is a violation of .git itself, and git is not run through it', async (t) => {
  const p = planted(t);
  const report = await observe(
    p.repo,
    `echo b >> src/a.txt; mv .git '${join(p.outside, 'moved.git')}'; ln -s '${join(p.outside, 'moved.git')}' .git; git config core.fsmonitor '${p.evil}'`,
  );
  assert.equal(report.state.blocked_reason, 'scope_violation', report.state.result?.summary);
  assert.ok(report.observation.scope_violations.includes('.git'));
  assert.equal(existsSync(p.marker), false);
  rmSync(join(p.repo, '.git'));
});

test('the edit hook refuses a symlinked .git and fails open with a warning', (t) => {
  const repo = makeRepo(t);
  const outside = tempDir(t);
  renameSync(join(repo, '.git'), join(outside, 'real.git'));
  symlinkSync(join(outside, 'real.git'), join(repo, '.git'));
  const outcome = runEditHook(
    Buffer.from(
      JSON.stringify({
        session_id: 's',
        cwd: repo,
        tool_name: 'Edit',
        tool_input: { file_path: join(repo, 'src/a.txt') },
      }),
    ),
    { agentId: 'me', agentsFile: null, stateDir: outside },
  );
  assert.equal(outcome.warnings.length, 1);
  assert.match(outcome.warnings[0] ?? '', /could not check this edit.*symlink/);
});
