/**
 * docs/workspace.md "Commands": a tree that cannot be recorded is refused with every offending
 * path named (the first 20, the rest counted), and a failed init-repo leaves no `.agentscm/`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { cliEntryArgv, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

function assertCode(result: CliResult, code: string, exit: number): void {
  assert.equal(result.code, exit, result.stderr);
  assert.match(result.stderr, new RegExp(`^error\\[${code}\\]: `));
}

test('init-repo names every offending path, bounded, and creates nothing', async (t) => {
  const root = tempDir(t);
  const dir = join(root, 'project');
  mkdirSync(join(dir, 'sub'), { recursive: true });
  writeFileSync(join(dir, 'fine.txt'), 'ok');
  // Control characters cannot be recorded (docs/wire.md "Workspace paths"; `\\` and `:` can).
  for (let i = 0; i < 24; i++) writeFileSync(join(dir, 'sub', `bad\t${String(i).padStart(2, '0')}`), 'x');
  writeFileSync(join(dir, 'line\nname'), 'x');
  const data = join(root, 'data');
  const result = await runCli(['--data-dir', data, 'init-repo', dir, '--name', 'demo', '--json']);
  assertCode(result, 'WORKSPACE_SCAN_INCOMPLETE', 1);
  assert.match(
    result.stderr,
    /25 paths cannot be recorded: path "line\\nname" cannot be recorded: it contains the control character 0x0a/,
  );
  assert.match(result.stderr, /path "sub\/bad\\t00" cannot be recorded: it contains the control character 0x09/);
  assert.match(result.stderr, /; and 5 more; nothing was registered/);
  assert.equal(result.stderr.split('\n').length, 2, 'one line');
  assert.equal((result.stderr.match(/cannot be recorded: it contains/g) ?? []).length, 20);
  assert.equal(existsSync(join(dir, '.agentscm')), false);
  assert.equal(existsSync(data), false);
});

function spawnPaused(
  args: readonly string[],
  env: Record<string, string>,
): { done: Promise<CliResult>; paused: Promise<void> } {
  const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  let onPaused: () => void = () => undefined;
  const paused = new Promise<void>((resolve) => (onPaused = resolve));
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.includes('agentscm-test-paused:')) onPaused();
  });
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout,
        stderr: stderr.replace(/^agentscm-test-(paused|resumed):.*\n/gm, ''),
        stdoutBytes: Buffer.from(stdout),
      }),
    ),
  );
  return { done, paused };
}

test('an init-repo that fails after creating .agentscm/ removes it again', async (t) => {
  const root = tempDir(t);
  const data = join(root, 'data');
  const first = join(root, 'first');
  const second = join(root, 'second');
  for (const dir of [first, second]) {
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), dir);
  }
  // The second init-repo passes its checks, writes its state directory and pauses before the
  // authority transaction; the first takes the name meanwhile, so the second fails there.
  const resume = join(root, 'resume');
  const paused = spawnPaused(['--data-dir', data, 'init-repo', second, '--name', 'demo'], {
    AGENTSCM_TEST_PAUSE_AT: 'init:after-pending',
    AGENTSCM_TEST_PAUSE_RESUME_FILE: resume,
  });
  await paused.paused;
  assert.ok(existsSync(join(second, '.agentscm', 'workspace.sqlite')));
  const winner = await runCli(['--data-dir', data, 'init-repo', first, '--name', 'demo']);
  assert.equal(winner.code, 0, winner.stderr);
  writeFileSync(resume, '');
  const loser = await paused.done;
  assertCode(loser, 'REPOSITORY_EXISTS', 3);
  assert.equal(existsSync(join(second, '.agentscm')), false);
  assert.ok(existsSync(join(first, '.agentscm', 'workspace.sqlite')));
});
