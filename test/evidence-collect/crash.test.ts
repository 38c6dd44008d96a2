/**
 * Crashes of `agent-task collect` (docs/collect.md "Crashes and retries"), SIGKILLed at its test
 * pause points against the live engine: after retention and before upload, retry-upload sends
 * the identical retained bytes and gets the same answer; after the reservation and before any
 * container, reopening the state refuses (COLLECT_INTERRUPTED) and never creates a container.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { sha256Hex } from '../../src/crypto/sha256.js';
import { revokeGrant } from '../../src/native/grants.js';
import { openAuthority } from '../../src/native/store.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { requireEngine } from '../support/collector.js';
import { collectArgs, containersCreated, fakeHub, killAtPause, makeCollection } from '../support/evidence-collect.js';

test('SIGKILL after retention and before upload: nothing was sent; retry-upload sends the identical retained bytes and gets the same answer each time', async (t) => {
  await requireEngine();
  const c = await makeCollection(t);
  // The hub answers by the digest of what it receives, so equal answers mean equal bytes.
  const hub = await fakeHub(t, (call) => ({
    status: 200,
    body: { status: 'imported', transfer_digest: sha256Hex(call.body) },
  }));
  const since = Math.floor(Date.now() / 1000) - 1;
  const killed = await killAtPause(collectArgs(c, ['--endpoint', hub.endpoint, '--json']), 'collect:after-retention');
  assert.equal(killed.signal, 'SIGKILL');
  assert.equal(killed.stdout, '');
  assert.equal(hub.calls.length, 0, 'nothing was uploaded before the kill');
  const dir = join(c.stateDir, 'collections', sha256Hex(Buffer.from(c.descriptor.upload_request_id)));
  const retained = readFileSync(join(dir, 'envelope.agscmtr'));
  const retry = [
    '--data-dir',
    c.dataDir,
    'agent-task',
    'retry-upload',
    '--state-dir',
    c.stateDir,
    '--upload-request-id',
    c.descriptor.upload_request_id,
    '--token-file',
    c.tokenFile,
    '--endpoint',
    hub.endpoint,
    '--json',
  ];
  const first = await runCli(retry);
  assert.equal(first.code, 0, first.stderr);
  const second = await runCli(retry);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(hub.calls.length, 2);
  for (const call of hub.calls) assert.ok(call.body.equals(retained), 'the retained bytes, unchanged');
  const answer = jsonOf<{ ran: boolean; transfer_digest: string; upload: { answer: { transfer_digest: string } } }>(
    first,
  );
  assert.equal(answer.ran, false);
  assert.equal(answer.upload.answer.transfer_digest, sha256Hex(retained));
  assert.equal(second.stdout, first.stdout, 'the same answer');
  // The command ran once, in the killed process only.
  assert.equal(await containersCreated(c.descriptor.attempt.attempt_id, since), 1);
  // An id the state does not retain is refused.
  const unknown = await runCli([
    '--data-dir',
    c.dataDir,
    'agent-task',
    'retry-upload',
    '--state-dir',
    c.stateDir,
    '--upload-request-id',
    'u-unknown',
    '--token-file',
    c.tokenFile,
    '--endpoint',
    hub.endpoint,
    '--json',
  ]);
  assert.equal(unknown.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(unknown).error.code, 'COLLECT_NOT_RETAINED');
});

test('SIGKILL after the reservation and before any container: collecting again refuses with COLLECT_INTERRUPTED and never creates a container', async (t) => {
  await requireEngine();
  const c = await makeCollection(t);
  const hub = await fakeHub(t, () => ({ status: 200, body: { status: 'imported' } }));
  const since = Math.floor(Date.now() / 1000) - 1;
  const killed = await killAtPause(collectArgs(c, ['--endpoint', hub.endpoint]), 'collect:after-reservation');
  assert.equal(killed.signal, 'SIGKILL');
  const dir = join(c.stateDir, 'collections', sha256Hex(Buffer.from(c.descriptor.upload_request_id)));
  assert.ok(existsSync(join(dir, 'descriptor.json')), 'the reservation is durable');
  assert.equal(existsSync(join(dir, 'envelope.agscmtr')), false);
  const again = await runCli(collectArgs(c, ['--endpoint', hub.endpoint, '--json']));
  assert.equal(again.code, 1, again.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(again).error.code, 'COLLECT_INTERRUPTED');
  assert.equal(await containersCreated(c.descriptor.attempt.attempt_id, since), 0);
  assert.equal(hub.calls.length, 0);
  assert.deepEqual(readdirSync(dir).sort(), ['descriptor.json']);
});

test('the authority is rechecked after the run and before signing: a grant revoked meanwhile leaves nothing signed, retained or uploaded', async (t) => {
  await requireEngine();
  const c = await makeCollection(t);
  const hub = await fakeHub(t, () => ({ status: 200, body: { status: 'imported' } }));
  const resume = join(c.dir, 'resume');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AGENTSCM_TEST_PAUSE_AT: 'collect:before-signing',
    AGENTSCM_TEST_PAUSE_RESUME_FILE: resume,
  };
  delete env.AGENTSCM_DATA_DIR;
  const child = spawn(
    process.execPath,
    [...cliEntryArgv(), ...collectArgs(c, ['--endpoint', hub.endpoint, '--json'])],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('agentscm-test-paused:collect:before-signing')) resolve();
    });
  });
  const auth = openAuthority(c.dataDir, { mode: 'write' });
  try {
    revokeGrant(auth, c.descriptor.origin.grant_id, Date.now());
  } finally {
    auth.close();
  }
  writeFileSync(resume, '');
  assert.equal(await exited, 2, stderr);
  assert.equal(
    jsonOf<{ error: { code: string } }>({ code: 2, signal: null, stdout, stderr, stdoutBytes: Buffer.from(stdout) })
      .error.code,
    'GRANT_TOKEN_REJECTED',
  );
  const dir = join(c.stateDir, 'collections', sha256Hex(Buffer.from(c.descriptor.upload_request_id)));
  assert.equal(existsSync(join(dir, 'envelope.agscmtr')), false);
  assert.equal(hub.calls.length, 0);
});
