/**
 * Progress of init-repo and checkpoint on a large tree (docs/workspace.md "Commands"): on stderr
 * when it is a terminal, each tenth of the files checked; quiet under --json and when stderr is
 * not a terminal. A real pseudo-terminal comes from util-linux `script`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { cliEntryArgv, runCli, TEST_XDG_DATA_HOME } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const quote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

/** Run agentscm with stderr on a pseudo-terminal and stdout into a file; returns both. */
function onTerminal(
  args: readonly string[],
  outFile: string,
): { terminal: string; stdout: string; code: number | null } {
  const command = [process.execPath, ...cliEntryArgv(), ...args].map(quote).join(' ');
  const env: Record<string, string | undefined> = {
    ...process.env,
    AGENTSCM_DATA_DIR: undefined,
    AGENTSCM_PROGRESS: undefined,
    XDG_DATA_HOME: TEST_XDG_DATA_HOME,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const result = spawnSync('script', ['-qec', `${command} >${quote(outFile)}`, '/dev/null'], {
    env: env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { terminal: result.stdout.replace(/\r/g, ''), stdout: readFileSync(outFile, 'utf8'), code: result.status };
}

test('init-repo and checkpoint of 1200 files print progress on a terminal, none under --json or into a pipe', async (t) => {
  const root = tempDir(t);
  const ws = join(root, 'ws');
  const data = join(root, 'data');
  for (let d = 0; d < 12; d++) {
    mkdirSync(join(ws, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(ws, `d${d}`, `f${f}.txt`), `${d}/${f}\n`);
  }
  const init = onTerminal(
    ['--data-dir', data, 'init-repo', ws, '--name', 'big', '--no-instructions'],
    join(root, 'init.out'),
  );
  assert.equal(init.code, 0, init.terminal);
  assert.match(init.terminal, /^scanning /m);
  assert.match(init.terminal, /^checked 120 of 1200 files, 120 hashed$/m);
  assert.match(init.terminal, /^checked 1080 of 1200 files, 1080 hashed$/m);
  assert.match(init.stdout, /^Initialized repository big/m);

  writeFileSync(join(ws, 'd5/f5.txt'), 'changed\n');
  const json = onTerminal(
    ['--data-dir', data, 'checkpoint', '--change', 'c', '--workspace', ws, '--json'],
    join(root, 'json.out'),
  );
  assert.equal(json.code, 0, json.terminal);
  assert.equal(json.terminal, '', 'no progress under --json, even on a terminal');
  assert.equal(typeof (JSON.parse(json.stdout) as { revision: string }).revision, 'string');

  writeFileSync(join(ws, 'd5/f5.txt'), 'changed again\n');
  const human = onTerminal(
    ['--data-dir', data, 'checkpoint', '--change', 'c', '--workspace', ws],
    join(root, 'human.out'),
  );
  assert.equal(human.code, 0, human.terminal);
  assert.match(human.terminal, /^checked 600 of 1200 files, 0 hashed$/m);
  assert.match(human.terminal, /^hashed 1 of 1,?200 files; 1 changed path; recording$/m);

  writeFileSync(join(ws, 'd5/f5.txt'), 'changed a third time\n');
  const piped = await runCli(['--data-dir', data, 'checkpoint', '--change', 'c', '--workspace', ws]);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stderr, '', 'no progress when stderr is not a terminal');
});
