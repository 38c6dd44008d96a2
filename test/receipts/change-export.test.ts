/**
 * The agent's and the operator's path without copied digests (docs/receipts.md "Exporting a Change's receipt",
 * docs/collect.md): `collect` finds docker on PATH and the default socket, `receipt export --change`
 * picks the Change's receipt (qualified, then landed), and `receipt verify --public-key-file` pins
 * the signer from the collector's key file or a hex file.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { buildScenario, SCENARIO_CHANGE } from '../helpers/scenario.js';
import { DOCKER_EXE, DOCKER_SOCKET } from '../support/runtime.js';

interface ErrorDoc {
  readonly error: { readonly code: string };
}

test('collect, export --change and verify --public-key-file need no copied id', { timeout: 600_000 }, async (t) => {
  const s = await buildScenario(t, { profile: true });
  // The profile pinned DOCKER_EXE's bytes; a `docker` with the same bytes first on PATH is what collect uses.
  const bin = join(s.root, 'bin');
  mkdirSync(bin);
  copyFileSync(DOCKER_EXE, join(bin, 'docker'));
  const env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
  const out = (name: string): string => join(s.root, name);

  // Not qualified yet: no receipt to export, and nothing is written.
  const early = await s.cli([
    'receipt',
    'export',
    '--change',
    SCENARIO_CHANGE,
    '--out',
    out('early.agscmrb'),
    '--json',
  ]);
  assert.equal(early.code, 2, early.stderr);
  assert.equal(jsonOf<ErrorDoc>(early).error.code, 'RECEIPT_NOT_FOUND');
  assert.equal(existsSync(out('early.agscmrb')), false);

  const claim = await s.cli([
    'agent-task',
    'claim',
    '--change',
    SCENARIO_CHANGE,
    '--token-file',
    s.tokenFile,
    '--out',
    out('d.json'),
  ]);
  assert.equal(claim.code, 0, claim.stderr);
  const collectArgs = ['agent-task', 'collect', '--descriptor', out('d.json'), '--key', s.keyFile];
  // The socket flag only when the test engine is not at the default socket.
  const socket = DOCKER_SOCKET === '/var/run/docker.sock' ? [] : ['--docker-socket', DOCKER_SOCKET];
  const collect = await s.cli(
    [...collectArgs, ...socket, '--state-dir', s.stateDir, '--token-file', s.tokenFile, '--json'],
    { env },
  );
  assert.equal(collect.code, 0, collect.stderr);
  assert.equal(jsonOf<{ outcome: string }>(collect).outcome, 'passed');

  // Qualified: --change exports the current subject's receipt, the one qualification names.
  const qualification = jsonOf<{ receipt_digest: string }>(
    await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json']),
  );
  const qualified = jsonOf<{ receipt_digest: string }>(
    await s.cli(['receipt', 'export', '--change', SCENARIO_CHANGE, '--out', out('q.agscmrb'), '--json']),
  );
  assert.equal(qualified.receipt_digest, qualification.receipt_digest);

  assert.equal((await s.cli(['approve', '--change', SCENARIO_CHANGE])).code, 0);
  assert.equal((await s.cli(['land', '--change', SCENARIO_CHANGE, '--target', 'main'])).code, 0);
  const landed = jsonOf<{ receipt_digest: string }>(
    await s.cli(['receipt', 'export', '--change', SCENARIO_CHANGE, '--out', out('l.agscmrb'), '--json']),
  );
  assert.equal(landed.receipt_digest, qualification.receipt_digest);

  // DIGEST and --change together, or neither: a usage error.
  const both = await s.cli([
    'receipt',
    'export',
    landed.receipt_digest,
    '--change',
    SCENARIO_CHANGE,
    '--out',
    out('b'),
  ]);
  assert.equal(both.code, 2);
  const neither = await s.cli(['receipt', 'export', '--out', out('n')]);
  assert.equal(neither.code, 2);

  // Verify anywhere, pinned by the key file or by a file holding the hex key.
  const elsewhere = join(s.root, 'elsewhere');
  mkdirSync(elsewhere);
  const byKeyFile = await runCli(['receipt', 'verify', out('l.agscmrb'), '--public-key-file', s.keyFile], {
    cwd: elsewhere,
  });
  assert.equal(byKeyFile.code, 0, byKeyFile.stderr);
  assert.match(byKeyFile.stdout, /^verified: receipt /);
  writeFileSync(out('pub.hex'), `${s.publicKey}\n`);
  const byHex = await runCli(['receipt', 'verify', out('l.agscmrb'), '--public-key-file', out('pub.hex')], {
    cwd: elsewhere,
  });
  assert.equal(byHex.code, 0, byHex.stderr);
  // Another key pins nothing the bundle holds: refused.
  writeFileSync(out('other.hex'), `${'ab'.repeat(32)}\n`);
  const other = await runCli(['receipt', 'verify', out('l.agscmrb'), '--public-key-file', out('other.hex')], {
    cwd: elsewhere,
  });
  assert.notEqual(other.code, 0);
  assert.doesNotMatch(other.stdout, /^verified/m);
  writeFileSync(out('junk'), 'not a key\n');
  const junk = await runCli(['receipt', 'verify', out('l.agscmrb'), '--public-key-file', out('junk'), '--json']);
  assert.equal(junk.code, 2);
  assert.equal(jsonOf<ErrorDoc>(junk).error.code, 'PUBLIC_KEY_INVALID');
  const missing = await runCli(['receipt', 'verify', out('l.agscmrb'), '--public-key-file', out('nope'), '--json']);
  assert.equal(jsonOf<ErrorDoc>(missing).error.code, 'INPUT_NOT_FOUND');
});
