/**
 * The command blocks a user copies run as written: README.md "Using it" and the `sh` blocks of
 * docs/collect.md, each in a fresh home directory, from the checkout, with `agentscm` on PATH (as
 * `npm install -g .` puts it), the project's Docker Engine and the tests' npm cache (support/npm-deps.ts).
 * No block is edited before it runs;
 * afterwards the store says what the blocks claim (main moved, the receipt verified).
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';
import { runScript, shellBlocks } from './support/doc-blocks.js';
import { NPM_ENV } from './support/npm-deps.js';
import { DOCKER_SOCKET } from './support/runtime.js';

/** A fresh HOME with `agentscm` first on PATH; the environment the blocks run in. */
function freshUser(t: TestContext): { home: string; env: NodeJS.ProcessEnv } {
  const home = tempDir(t, 'agentscm-docs-home-');
  const bin = join(home, '.local', 'bin');
  mkdirSync(bin, { recursive: true });
  const agentscm = join(bin, 'agentscm');
  const entry = cliEntryArgv()
    .map((a) => `'${a}'`)
    .join(' ');
  writeFileSync(agentscm, `#!/bin/sh\nexec '${process.execPath}' ${entry} "$@"\n`);
  chmodSync(agentscm, 0o755);
  const env: NodeJS.ProcessEnv = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    LANG: 'C.UTF-8',
    RUNTIME_SOCK: DOCKER_SOCKET,
    // `deps build` runs npm: the tests' shared cache, so the registry is asked once across runs.
    ...NPM_ENV,
  };
  return { home, env };
}

async function runBlocks(
  t: TestContext,
  page: string,
  heading: string | null,
): Promise<{ home: string; output: string }> {
  const blocks = shellBlocks(readFileSync(join(REPO_ROOT, page), 'utf8'), heading);
  assert.ok(blocks.length >= 2, `${page} ${heading ?? ''}: expected its command blocks, found ${blocks.length}`);
  const { home, env } = freshUser(t);
  const result = await runScript(blocks.join('\n'), REPO_ROOT, env, 15 * 60_000);
  assert.equal(result.code, 0, `${page} ${heading ?? ''} failed:\n${result.output.slice(-6000)}`);
  return { home, output: result.output };
}

interface Targets {
  readonly targets: { readonly name: string; readonly revision: string }[];
}

test('README.md "Using it" runs as written and lands fix-1', { timeout: 20 * 60_000 }, async (t) => {
  // The shell blocks only: the extraction must find the set-up block and the per-change block.
  const { home, output } = await runBlocks(t, 'README.md', 'Using it');
  assert.match(output, /^landed: Change fix-1 version 1 moved target main /m);
  assert.match(output, /^verified: receipt [0-9a-f]{64} \(completed\)/m);
  const dataDir = join(home, '.local', 'share', 'agentscm');
  const change = jsonOf<{ current_revision: string }>(
    await runCli(['--data-dir', dataDir, 'change', 'show', 'fix-1', '--json'], {
      cwd: join(home, 'node-project'),
    }),
  );
  const targets = jsonOf<Targets>(
    await runCli(['--data-dir', dataDir, 'target', 'list', '--json'], { cwd: join(home, 'node-project') }),
  );
  assert.equal(targets.targets.find((x) => x.name === 'main')?.revision, change.current_revision);
});

test(
  'docs/collect.md: its command blocks run as written and the Change qualifies',
  { timeout: 20 * 60_000 },
  async (t) => {
    const { output } = await runBlocks(t, 'docs/collect.md', null);
    assert.match(output, /^qualified: Change fix-1 at revision [0-9a-f]{64}$/m);
    // The second collect ran nothing: the retained envelope was sent again.
    assert.match(output, /^uploaded the retained envelope of task /m);
  },
);

test('shellBlocks takes the sh blocks of one section and skips text blocks', () => {
  const page = [
    '# T',
    '## A',
    '```sh',
    'echo a',
    '```',
    '```text',
    'agentscm PLACEHOLDER',
    '```',
    '## B',
    '```sh',
    'echo b',
    '```',
  ].join('\n');
  assert.deepEqual(shellBlocks(page, 'A'), ['echo a']);
  assert.deepEqual(shellBlocks(page, null), ['echo a', 'echo b']);
  assert.deepEqual(shellBlocks(page, 'C'), []);
  assert.throws(() => shellBlocks('```sh\necho', null), /unterminated/);
});
