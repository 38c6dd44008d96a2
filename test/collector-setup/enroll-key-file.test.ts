/**
 * `agent-task enroll --public-key-file` (docs/keys-and-enrollment.md "Public key files"): the key
 * file or a hex file instead of a pasted key; a bad or missing file enrolls nothing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

test('enroll reads the public key from a key file or a hex file', async (t) => {
  const root = tempDir(t);
  const ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'a.txt'), 'a\n');
  const data = join(root, 'data');
  const cli = (...args: string[]) => runCli(['--data-dir', data, ...args]);
  assert.equal((await cli('init-repo', ws, '--name', 'demo')).code, 0);
  const state = join(root, 'collector');
  assert.equal((await runCli(['agent-task', 'key', '--state-dir', state])).code, 0);
  const keyFile = join(state, 'signing-key.json');
  const publicKey = (JSON.parse(readFileSync(keyFile, 'utf8')) as { public_key: string }).public_key;
  const enroll = (...extra: string[]) =>
    cli('agent-task', 'enroll', '--step', 'tests', '--executor', 'box-1', ...extra, '--json');
  const list = async () =>
    jsonOf<{ registrations: unknown[] }>(await cli('agent-task', 'registration', 'list', '--json')).registrations
      .length;

  // Refusals first: nothing is enrolled.
  const missing = await enroll('--public-key-file', join(root, 'nope'));
  assert.equal(missing.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(missing).error.code, 'INPUT_NOT_FOUND');
  writeFileSync(join(root, 'junk'), `${publicKey}x\n`);
  const junk = await enroll('--public-key-file', join(root, 'junk'));
  assert.equal(jsonOf<{ error: { code: string } }>(junk).error.code, 'PUBLIC_KEY_INVALID');
  const both = await enroll('--public-key', publicKey, '--public-key-file', keyFile);
  assert.equal(both.code, 2);
  assert.equal(await list(), 0);

  const fromKeyFile = jsonOf<{ registration_epoch: number; verification_key_id: string }>(
    await enroll('--public-key-file', keyFile),
  );
  assert.equal(fromKeyFile.registration_epoch, 1);
  writeFileSync(join(root, 'pub.hex'), `${publicKey}\n`);
  const fromHex = jsonOf<{ registration_epoch: number; verification_key_id: string }>(
    await enroll('--public-key-file', join(root, 'pub.hex')),
  );
  assert.equal(fromHex.registration_epoch, 2);
  assert.equal(fromHex.verification_key_id, fromKeyFile.verification_key_id);
});
