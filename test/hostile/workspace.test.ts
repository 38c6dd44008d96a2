/**
 * Reproducers for the workspace (docs/workspace.md "The state directory", "Concurrency",
 * "Scan rules"): a `.agentscm` that is a link, a dangling link or a file is refused before
 * anything is created or written through it; a writer whose lock file is removed while it runs
 * stops before recording anything more, and a writer that locked a removed file locks again;
 * a data directory named `..something` inside the workspace is never scanned.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'node:test';

import { dataDirExclusions } from '../../src/workspace/exclusions.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { assertError, cliJson, fixture, initProject, integrityOk, type Fixture } from '../support/foundation.js';

interface StatusJson {
  ready: boolean;
  clean: boolean;
  base_revision: string;
  generation: number;
  pending_operation: unknown;
  changes: { path: string; kind: string }[];
}

function listTree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

// --- a .agentscm that is not a real directory -------------------------------------------

for (const { name, make } of [
  {
    name: 'a link to another directory',
    make: (f: Fixture, state: string) => symlinkSync(join(f.root, 'elsewhere'), state),
  },
  { name: 'a dangling link', make: (f: Fixture, state: string) => symlinkSync(join(f.root, 'nowhere'), state) },
  { name: 'a regular file', make: (_f: Fixture, state: string) => writeFileSync(state, 'not a directory\n') },
]) {
  test(`init-repo refuses a .agentscm that is ${name} and creates nothing`, async (t) => {
    const f = fixture(t);
    mkdirSync(join(f.root, 'elsewhere'));
    const state = join(f.workspace, '.agentscm');
    make(f, state);
    const result = await runCli(['--data-dir', f.dataDir, 'init-repo', f.workspace, '--name', 'demo', '--json']);
    assertError(result, 'WORKSPACE_STATE_UNSAFE', 4);
    assert.deepEqual(listTree(join(f.root, 'elsewhere')), [], 'nothing was written through the link');
    assert.equal(existsSync(f.dataDir), false, 'no store was created');
    assert.equal(existsSync(join(f.root, 'nowhere')), false);
  });
}

test("a workspace whose .agentscm links to another workspace's state is refused; the other workspace and its repository are untouched", async (t) => {
  const f = fixture(t);
  const first = await initProject(f);
  const intruder = join(f.root, 'intruder');
  mkdirSync(intruder);
  writeTree(intruder);
  symlinkSync(join(f.workspace, '.agentscm'), join(intruder, '.agentscm'));
  const before = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);

  for (const args of [
    ['checkpoint', '--change', 'c1', '--workspace', intruder],
    ['status', '--workspace', intruder],
  ]) {
    assertError(await runCli(['--data-dir', f.dataDir, ...args, '--json']), 'WORKSPACE_STATE_UNSAFE', 4);
  }
  // Found by walking up from a directory inside the intruder: refused, not followed or skipped.
  mkdirSync(join(intruder, 'sub'));
  const fromInside = await runCli(['checkpoint', '--change', 'c1', '--json'], { cwd: join(intruder, 'sub') });
  assertError(fromInside, 'WORKSPACE_STATE_UNSAFE', 4);

  const after = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);
  assert.deepEqual(after, before, "the other workspace's status did not change");
  assert.equal(after.ready, true);
  assert.equal(after.base_revision, first.revision);
  assertError(await runCli(['--data-dir', f.dataDir, 'change', 'show', 'c1', '--json']), 'CHANGE_NOT_FOUND', 2);
});

test('a workspace database or lock that is a link inside a real .agentscm is refused', async (t) => {
  const f = fixture(t);
  await initProject(f);
  const other = join(f.root, 'other');
  mkdirSync(other);
  writeTree(other);
  mkdirSync(join(other, '.agentscm'));
  symlinkSync(join(f.workspace, '.agentscm', 'workspace.sqlite'), join(other, '.agentscm', 'workspace.sqlite'));
  assertError(
    await runCli(['--data-dir', f.dataDir, 'checkpoint', '--change', 'c1', '--workspace', other, '--json']),
    'WORKSPACE_STATE_UNSAFE',
    4,
  );
  assertError(
    await runCli(['--data-dir', f.dataDir, 'status', '--workspace', other, '--json']),
    'WORKSPACE_STATE_UNSAFE',
    4,
  );

  const lock = join(f.workspace, '.agentscm', 'lock.sqlite');
  rmSync(lock, { force: true });
  symlinkSync(join(f.root, 'lock-target'), lock);
  assertError(
    await runCli(['--data-dir', f.dataDir, 'checkpoint', '--change', 'c1', '--workspace', f.workspace, '--json']),
    'WORKSPACE_STATE_UNSAFE',
    4,
  );
  assert.equal(existsSync(join(f.root, 'lock-target')), false, 'no lock file was created through the link');
  assert.equal(readlinkSync(lock), join(f.root, 'lock-target'));
});

function writeTree(root: string): void {
  writeFileSync(join(root, 'intruder.txt'), 'not the other project\n');
}

// --- a data directory named ..something inside the workspace ----------------------------

test('a data directory inside the workspace named ..store is excluded from every scan', async (t) => {
  const f = fixture(t);
  const dataDir = join(f.workspace, '..store');
  const init = await runCli(['--data-dir', dataDir, 'init-repo', f.workspace, '--name', 'demo', '--json']);
  assert.equal(init.code, 0, init.stderr);
  const { revision } = jsonOf<{ revision: string }>(init);
  const show = await runCli(['--data-dir', dataDir, 'revision', 'show', revision, '--json']);
  const paths = jsonOf<{ entries: { path: string }[] }>(show).entries.map((e) => e.path);
  assert.deepEqual(
    paths.filter((p) => p.startsWith('..')),
    [],
    'the store is not recorded in the revision',
  );
  const status = jsonOf<StatusJson>(
    await runCli(['--data-dir', dataDir, 'status', '--workspace', f.workspace, '--json']),
  );
  assert.equal(status.clean, true, JSON.stringify(status.changes));
  assert.equal(status.ready, true);
  const again = jsonOf<{ created: boolean }>(
    await runCli(['--data-dir', dataDir, 'checkpoint', '--change', 'c1', '--workspace', f.workspace, '--json']),
  );
  assert.equal(again.created, true);
  const clean = jsonOf<StatusJson>(
    await runCli(['--data-dir', dataDir, 'status', '--workspace', f.workspace, '--json']),
  );
  assert.equal(clean.clean, true, 'the store written by the checkpoint is not a change either');
});

test('dataDirExclusions: only `..` and paths below it are outside the workspace', () => {
  const root = '/w/project';
  assert.deepEqual(dataDirExclusions(root, { dataDir: '/w/project/..store' }), ['/w/project/..store']);
  assert.deepEqual(dataDirExclusions(root, { dataDir: '/w/project/..' }), []);
  assert.deepEqual(dataDirExclusions(root, { dataDir: '/w/project/a/..b' }), ['/w/project/a/..b']);
  assert.deepEqual(dataDirExclusions(root, { dataDir: '/w/data' }), []);
  assert.deepEqual(dataDirExclusions(root, { dataDir: '/w/..data' }), []);
  assert.deepEqual(dataDirExclusions(root, { dataDir: '/w/project' }), []);
});

// --- the writer lock file removed under a live writer -----------------------------------

interface Paused {
  readonly pid: number;
  readonly paused: Promise<void>;
  readonly done: Promise<CliResult>;
}

/** Start the CLI paused at `point`; it runs on once `resumeFile` exists. */
function startPaused(point: string, args: readonly string[], resumeFile: string): Paused {
  const env: Record<string, string | undefined> = {
    ...process.env,
    AGENTSCM_TEST_PAUSE_AT: point,
    AGENTSCM_TEST_PAUSE_RESUME_FILE: resumeFile,
  };
  delete env.AGENTSCM_DATA_DIR;
  const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let stderr = '';
  let onPaused: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (onPaused = resolve));
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.includes(`agentscm-test-paused:${point}`)) onPaused();
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, signal, stdout: stdoutBytes.toString('utf8'), stderr, stdoutBytes });
    });
  });
  const paused = Promise.race([
    reached,
    done.then((r) => Promise.reject(new Error(`ended before ${point}: ${r.stderr}`))),
  ]);
  assert.ok(child.pid !== undefined);
  return { pid: child.pid, paused, done };
}

/** Let a paused process run on (if the test failed before it did); its directory may be gone already. */
function release(resumeFile: string): void {
  if (existsSync(dirname(resumeFile))) writeFileSync(resumeFile, '');
}

function lockPath(f: Fixture): string {
  return join(f.workspace, '.agentscm', 'lock.sqlite');
}

async function revisionFile(f: Fixture, revision: string, path: string): Promise<string> {
  const cat = await runCli(['--data-dir', f.dataDir, 'revision', 'cat', revision, path]);
  assert.equal(cat.code, 0, cat.stderr);
  return cat.stdout;
}

test('lock file removed while a checkpoint waits after recording its pending operation: the second writer reconciles it and the first records nothing', async (t) => {
  const f = fixture(t);
  await initProject(f);
  const resume = join(f.root, 'resume');
  writeFileSync(join(f.workspace, 'src/main.ts'), 'first writer\n');
  const first = startPaused(
    'checkpoint:after-pending',
    ['--data-dir', f.dataDir, 'checkpoint', '--change', 'a', '--workspace', f.workspace, '--json'],
    resume,
  );
  t.after(() => release(resume));
  await first.paused;

  rmSync(lockPath(f));
  writeFileSync(join(f.workspace, 'src/main.ts'), 'second writer\n');
  const second = await cliJson<{ revision: string; generation: number; reconciled: string | null }>(f, [
    'checkpoint',
    '--change',
    'b',
    '--workspace',
    f.workspace,
  ]);
  assert.equal(second.reconciled, 'abandoned', 'the first writer had not reached the authority');

  writeFileSync(resume, '');
  assertError(await first.done, 'WORKSPACE_LOCK_LOST', 3);

  assertError(await runCli(['--data-dir', f.dataDir, 'change', 'show', 'a', '--json']), 'CHANGE_NOT_FOUND', 2);
  const status = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);
  assert.equal(status.base_revision, second.revision, "the second writer's base stands");
  assert.equal(status.generation, second.generation);
  assert.equal(status.ready, true);
  assert.equal(await revisionFile(f, status.base_revision, 'src/main.ts'), 'second writer\n');
  integrityOk(f.dataDir);
});

test('lock file removed while a checkpoint waits after its authority commit: the second writer adopts it and the first does not overwrite what followed', async (t) => {
  const f = fixture(t);
  await initProject(f);
  const resume = join(f.root, 'resume');
  writeFileSync(join(f.workspace, 'src/main.ts'), 'first writer\n');
  const first = startPaused(
    'checkpoint:after-authority',
    ['--data-dir', f.dataDir, 'checkpoint', '--change', 'a', '--workspace', f.workspace, '--json'],
    resume,
  );
  t.after(() => release(resume));
  await first.paused;

  rmSync(lockPath(f));
  writeFileSync(join(f.workspace, 'src/main.ts'), 'second writer\n');
  const second = await cliJson<{ revision: string; version: number; generation: number; reconciled: string | null }>(
    f,
    ['checkpoint', '--change', 'a', '--workspace', f.workspace],
  );
  assert.deepEqual([second.reconciled, second.version, second.generation], ['committed', 2, 3]);

  writeFileSync(resume, '');
  assertError(await first.done, 'WORKSPACE_LOCK_LOST', 3);

  const status = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);
  assert.deepEqual([status.base_revision, status.generation, status.ready], [second.revision, 3, true]);
  assert.equal(await revisionFile(f, status.base_revision, 'src/main.ts'), 'second writer\n');
});

test('lock file removed while a checkpoint is inside its authority transaction: the second writer waits for it instead of dropping its operation', async (t) => {
  const f = fixture(t);
  const init = await initProject(f);
  const resume = join(f.root, 'resume');
  writeFileSync(join(f.workspace, 'src/main.ts'), 'first writer\n');
  const first = startPaused(
    'checkpoint:in-authority-transaction',
    ['--data-dir', f.dataDir, 'checkpoint', '--change', 'a', '--workspace', f.workspace, '--json'],
    resume,
  );
  t.after(() => release(resume));
  await first.paused;

  rmSync(lockPath(f));
  // The first writer passed its lock check and holds the authority's writer lock: reconciling
  // its pending operation must wait for that transaction, not read around it.
  assertError(
    await runCli(['--data-dir', f.dataDir, 'checkpoint', '--change', 'b', '--workspace', f.workspace, '--json']),
    'STORE_BUSY',
    3,
  );
  const waiting = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);
  assert.deepEqual(waiting.pending_operation, {
    kind: 'checkpoint',
    change: 'a',
    expected_version: null,
    revision: (waiting.pending_operation as { revision: string }).revision,
    parent: init.revision,
  });

  writeFileSync(resume, '');
  assertError(await first.done, 'WORKSPACE_LOCK_LOST', 3);

  // The authority recorded the first writer's version; the next checkpoint adopts it.
  const next = await cliJson<{ reconciled: string | null; version: number; created: boolean; revision: string }>(f, [
    'checkpoint',
    '--change',
    'a',
    '--workspace',
    f.workspace,
  ]);
  assert.deepEqual([next.reconciled, next.version, next.created], ['committed', 1, false]);
  const status = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);
  assert.deepEqual([status.base_revision, status.generation, status.ready], [next.revision, 2, true]);
  assert.equal(await revisionFile(f, status.base_revision, 'src/main.ts'), 'first writer\n');
  assertError(await runCli(['--data-dir', f.dataDir, 'change', 'show', 'b', '--json']), 'CHANGE_NOT_FOUND', 2);
});

/** How many descriptors process `pid` has open on `path` (our own and SQLite's while it waits for the lock). */
function openCount(pid: number, path: string): number {
  let count = 0;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return 0;
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === path) count += 1;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

for (const { how, replace } of [
  { how: 'removed', replace: (lock: string) => rmSync(lock) },
  {
    // SQLite locks the old file without complaint (it still has a name): only the check that
    // the path names the locked file catches this.
    how: 'replaced while the old file keeps another name',
    replace: (lock: string) => {
      linkSync(lock, `${lock}.old`);
      writeFileSync(`${lock}.new`, '');
      renameSync(`${lock}.new`, lock);
    },
  },
]) {
  test(`a writer that was waiting on a lock file that is then ${how} locks the file now at the path, so a third writer is still excluded`, async (t) => {
    const f = fixture(t);
    await initProject(f);
    const resumeFirst = join(f.root, 'resume-first');
    const resumeSecond = join(f.root, 'resume-second');
    t.after(() => {
      release(resumeFirst);
      release(resumeSecond);
    });
    const args = (change: string): string[] => [
      '--data-dir',
      f.dataDir,
      'checkpoint',
      '--change',
      change,
      '--workspace',
      f.workspace,
      '--json',
    ];
    const first = startPaused('checkpoint:after-scan', args('a'), resumeFirst);
    await first.paused;
    const second = startPaused('checkpoint:after-scan', args('b'), resumeSecond);
    const deadline = Date.now() + 60_000;
    while (openCount(second.pid, lockPath(f)) < 2) {
      assert.ok(Date.now() < deadline, 'the second writer never opened the lock file');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The second writer holds the old file open (its own descriptor and SQLite's) and waits for
    // the first to release it.
    replace(lockPath(f));
    writeFileSync(resumeFirst, '');
    assertError(await first.done, 'WORKSPACE_LOCK_LOST', 3);
    await second.paused;

    // The second writer holds the lock file now at the path: a third one waits, then gives up.
    const third = await runCli(args('c'));
    assertError(third, 'WORKSPACE_BUSY', 3);

    writeFileSync(resumeSecond, '');
    const done = await second.done;
    assert.equal(done.code, 0, done.stderr);
    const status = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);
    assert.equal(status.ready, true);
    assert.equal(status.base_revision, jsonOf<{ revision: string }>(done).revision);
    assertError(await runCli(['--data-dir', f.dataDir, 'change', 'show', 'c', '--json']), 'CHANGE_NOT_FOUND', 2);
  });
}
