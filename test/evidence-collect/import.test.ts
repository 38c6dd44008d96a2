/**
 * Claim → collect → import end to end against the live engine and the local authority
 * (docs/collect.md): a real collector_claim, a real container, the signed envelope retained and
 * imported by the authority; an exact retry answers the retained view; a failing check is a
 * completed collection (exit 0) whose verdict is printed as a hint; a hub without the upload
 * route is UPLOAD_ROUTE_MISSING with the envelope retained for retry-upload.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { sha256Hex } from '../../src/crypto/sha256.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { requireEngine } from '../support/collector.js';
import { collectArgs, fakeHub, makeCollection } from '../support/evidence-collect.js';

interface CollectJson {
  ran: boolean;
  outcome: string;
  exit_code: number | null;
  transfer_digest: string;
  envelope_file: string;
  upload: { target: string; answer: { status: string; transfer_digest: string; attempt_id: string; outcome: string } };
}

test('claim, collect and import into the local authority; collecting again and retry-upload answer the retained import without running anything', async (t) => {
  await requireEngine();
  const c = await makeCollection(t);
  const first = await runCli(collectArgs(c, ['--json']));
  assert.equal(first.code, 0, first.stderr);
  const result = jsonOf<CollectJson>(first);
  assert.equal(result.ran, true);
  assert.equal(result.upload.target, 'local');
  assert.equal(result.upload.answer.status, 'imported');
  assert.equal(result.upload.answer.transfer_digest, result.transfer_digest);
  assert.equal(result.upload.answer.attempt_id, c.descriptor.attempt.attempt_id);
  assert.equal(result.upload.answer.outcome, 'passed');
  assert.equal(sha256Hex(readFileSync(result.envelope_file)), result.transfer_digest);
  const again = await runCli(collectArgs(c, ['--json']));
  assert.equal(again.code, 0, again.stderr);
  const second = jsonOf<CollectJson>(again);
  assert.equal(second.ran, false);
  assert.equal(second.upload.answer.status, 'retained');
  assert.equal(second.upload.answer.transfer_digest, result.transfer_digest);
  const retry = await runCli([
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
    '--json',
  ]);
  assert.equal(retry.code, 0, retry.stderr);
  assert.equal(jsonOf<CollectJson>(retry).upload.answer.status, 'retained');
  // upload sends a file as it is: the same bytes are the same retained import.
  const upload = await runCli([
    '--data-dir',
    c.dataDir,
    'agent-task',
    'upload',
    result.envelope_file,
    '--token-file',
    c.tokenFile,
    '--json',
  ]);
  assert.equal(upload.code, 0, upload.stderr);
  assert.equal(
    jsonOf<{ transfer_digest: string; upload: { answer: { status: string } } }>(upload).upload.answer.status,
    'retained',
  );
});

test('a failing check completes the collection: exit 0, a typed failed record imported, the verdict printed as a hint', async (t) => {
  await requireEngine();
  const c = await makeCollection(t, { argv: ['sh', '-c', 'echo broken >&2; exit 3'] });
  const run = await runCli(collectArgs(c));
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /hint: the check's verdict is failed \(exit 3\)/);
  const again = await runCli(collectArgs(c, ['--json']));
  const result = jsonOf<CollectJson>(again);
  assert.equal(result.outcome, 'failed');
  assert.equal(result.exit_code, 3);
  assert.equal(result.upload.answer.outcome, 'failed');
});

test('a hub without the upload route is UPLOAD_ROUTE_MISSING (exit 4); the envelope stays retained and retry-upload imports it locally', async (t) => {
  await requireEngine();
  const c = await makeCollection(t);
  const hub = await fakeHub(t, () => ({
    status: 404,
    body: { error: { code: 'HUB_ROUTE_NOT_FOUND', message: 'no hub route' } },
  }));
  const run = await runCli(collectArgs(c, ['--endpoint', hub.endpoint, '--json']));
  assert.equal(run.code, 4, run.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(run).error.code, 'UPLOAD_ROUTE_MISSING');
  assert.equal(hub.calls.length, 1);
  const envelope = join(
    c.stateDir,
    'collections',
    sha256Hex(Buffer.from(c.descriptor.upload_request_id)),
    'envelope.agscmtr',
  );
  assert.ok(existsSync(envelope));
  assert.ok(readFileSync(envelope).equals(hub.calls[0]?.body ?? Buffer.alloc(0)));
  const retry = await runCli([
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
    '--json',
  ]);
  assert.equal(retry.code, 0, retry.stderr);
  assert.equal(jsonOf<CollectJson>(retry).upload.answer.status, 'imported');
  // A hub error with a code keeps it.
  const refusing = await fakeHub(t, () => ({
    status: 409,
    body: { error: { code: 'IMPORT_UPLOAD_CONFLICT', message: 'other bytes', hint: 'retry with the retained bytes' } },
  }));
  const refused = await runCli([
    '--data-dir',
    c.dataDir,
    'agent-task',
    'upload',
    envelope,
    '--token-file',
    c.tokenFile,
    '--endpoint',
    refusing.endpoint,
    '--json',
  ]);
  assert.equal(refused.code, 3);
  assert.equal(jsonOf<{ error: { code: string } }>(refused).error.code, 'IMPORT_UPLOAD_CONFLICT');
});
