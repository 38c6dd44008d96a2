/**
 * `agent-task collect`, `retry-upload` and `upload` against the live engine (docs/collect.md):
 * a real collector_claim, a real container run of busybox, the signed envelope retained in the
 * state directory before upload, and the upload call made with the retained bytes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';

import {
  readTransferEnvelope,
  transferDigest,
  verifyTransferEnvelope,
} from '../../src/contracts/collector/transfer.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { requireEngine } from '../support/collector.js';
import { collectArgs, containersCreated, fakeHub, makeCollection } from '../support/evidence-collect.js';

interface CollectJson {
  upload_request_id: string;
  ran: boolean;
  outcome: string;
  exit_code: number | null;
  transfer_digest: string;
  envelope_file: string;
  upload: { target: string; answer: JsonObject };
}

test('collect runs the claimed recipe live, retains the signed envelope, then uploads exactly those bytes; running it again never runs the command', async (t) => {
  await requireEngine();
  const c = await makeCollection(t);
  const hub = await fakeHub(t, () => ({ status: 200, body: { status: 'imported' } }));
  const since = Math.floor(Date.now() / 1000) - 1;
  const first = await runCli(collectArgs(c, ['--endpoint', hub.endpoint, '--json']), {
    env: { AGENTSCM_PROGRESS: '1' },
  });
  assert.equal(first.code, 0, first.stderr);
  const result = jsonOf<CollectJson>(first);
  assert.equal(result.ran, true);
  assert.equal(result.outcome, 'passed');
  assert.equal(result.exit_code, 0);
  assert.equal(result.upload_request_id, c.descriptor.upload_request_id);
  assert.deepEqual(result.upload, { target: 'endpoint', answer: { status: 'imported' } });
  assert.match(first.stderr, /retained the signed envelope/);
  // The retained envelope is what was sent, with the grant's token as bearer, to the upload route.
  const retained = readFileSync(result.envelope_file);
  assert.equal(hub.calls.length, 1);
  assert.ok(hub.calls[0]?.body.equals(retained));
  assert.equal(
    hub.calls[0]?.path,
    '/v1/hub/workspace/repositories/acme/demo/profiles/default/agent-tasks/collector-upload',
  );
  assert.equal(hub.calls[0]?.authorization, `Bearer ${readFileSync(c.tokenFile, 'utf8').trim()}`);
  assert.equal(transferDigest(retained), result.transfer_digest);
  // Signed by the enrolled key, bound to the descriptor, carrying the request and a passing record.
  const verified = verifyTransferEnvelope(retained, Buffer.from(c.enrollment.public_key, 'hex'));
  const header = verified.header;
  assert.equal(header.audience, c.descriptor.authority_id);
  assert.equal(header.attempt_id, c.descriptor.attempt.attempt_id);
  assert.equal(header.fence, c.descriptor.attempt.fence);
  assert.equal(header.upload_request_id, c.descriptor.upload_request_id);
  assert.deepEqual(header.origin, c.descriptor.origin);
  const record = parseStrictJson(verified.records[1]?.bytes ?? Buffer.alloc(0), { maxBytes: 1 << 20 }) as JsonObject;
  assert.equal(record.outcome, 'passed');
  assert.deepEqual((record.cleanup as JsonObject).confirmed, true);
  assert.equal((record.isolation as JsonObject).network, 'none');
  assert.equal(await containersCreated(c.descriptor.attempt.attempt_id, since), 1);

  // Again with the same descriptor: nothing runs, the same bytes are uploaded.
  const again = await runCli(collectArgs(c, ['--endpoint', hub.endpoint, '--json']));
  assert.equal(again.code, 0, again.stderr);
  assert.equal(jsonOf<CollectJson>(again).ran, false);
  assert.equal(hub.calls.length, 2);
  assert.ok(hub.calls[1]?.body.equals(retained));
  // retry-upload sends the identical bytes too.
  const retry = await runCli([
    '--data-dir',
    c.dataDir,
    'agent-task',
    'retry-upload',
    '--state-dir',
    c.stateDir,
    '--upload-request-id',
    result.upload_request_id,
    '--token-file',
    c.tokenFile,
    '--endpoint',
    hub.endpoint,
    '--json',
  ]);
  assert.equal(retry.code, 0, retry.stderr);
  assert.equal(jsonOf<CollectJson>(retry).transfer_digest, result.transfer_digest);
  assert.ok(hub.calls[2]?.body.equals(retained));
  assert.equal(await containersCreated(c.descriptor.attempt.attempt_id, since), 1);
  // execution_request, execution_record and the diagnostic command_output_tail.
  assert.deepEqual(
    readTransferEnvelope(retained).records.map((r) => r.kind),
    ['execution_request', 'execution_record', 'command_output_tail'],
  );
});
