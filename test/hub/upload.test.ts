/**
 * The hub's collector upload route (docs/hub.md "The upload route"): a real enrolled key, a real
 * collector claim and an envelope built by the transfer encoder, sent by the collector's own
 * upload client; the import answers as a local upload does, an exact retry answers the retained
 * view, and the route has its own 16 MiB bound, refused from Content-Length before any body.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { postEnvelope } from '../../src/collector/upload-client.js';
import { UPLOAD_BODY_MAX_BYTES } from '../../src/hub/routes/upload.js';
import { startHub } from '../../src/hub/server.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { codeOf } from '../helpers/errors.js';
import { claim, envelopeOf, makeEvidence, transferParts } from '../support/evidence.js';
import { errorCode, httpCall, hubOver, tasksPath } from '../support/hub.js';

const UPLOAD_PATH = `${tasksPath()}/collector-upload`;

test(
  'a signed transfer uploaded to the hub imports; the exact retry answers the retained view; the bound is 16 MiB',
  { timeout: 60_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const { profile } = hubOver(ev.dir, ev.store);
    const log: string[] = [];
    const hub = await startHub(
      { host: '127.0.0.1', port: 0, profiles: [profile] },
      { accessLog: (line) => log.push(line) },
    );
    t.after(() => hub.close());
    const token = readTokenFile(ev.tokenFile);
    const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
    const endpoint = `${hub.url}${tasksPath()}`;

    const first = await postEnvelope({ endpoint, token, envelope });
    assert.equal(first.status, 200);
    assert.equal((first.answer as { status: string }).status, 'imported');
    const retry = await postEnvelope({ endpoint, token, envelope });
    assert.equal((retry.answer as { status: string }).status, 'retained');
    assert.equal(JSON.parse(log.at(-1) ?? '{}').route, 'collector-upload');

    // Refusals keep their codes through the collector's client.
    const unknownToken = `agentscm_${'B'.repeat(43)}`;
    let refused: unknown = null;
    try {
      await postEnvelope({ endpoint, token: unknownToken, envelope });
    } catch (error) {
      refused = error;
    }
    assert.equal(
      codeOf(() => {
        throw refused;
      }),
      'GRANT_TOKEN_REJECTED',
    );

    // The route's own bound: over 512 KiB is not refused for size, over 16 MiB is, before any body.
    const garbage = await httpCall(hub.url, 'POST', UPLOAD_PATH, {
      token,
      body: Buffer.alloc(1024 * 1024, 1),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(garbage.status, 400, garbage.text);
    assert.notEqual(errorCode(garbage), 'HUB_BODY_TOO_LARGE');
    const over = await httpCall(hub.url, 'POST', UPLOAD_PATH, {
      token,
      headers: { 'content-length': String(UPLOAD_BODY_MAX_BYTES + 1), 'content-type': 'application/octet-stream' },
      body: '',
    });
    assert.equal(over.status, 413);
    assert.equal(errorCode(over), 'HUB_BODY_TOO_LARGE');
    const anonymous = await httpCall(hub.url, 'POST', UPLOAD_PATH, { body: Buffer.from(envelope) });
    assert.equal(anonymous.status, 401);
  },
);
