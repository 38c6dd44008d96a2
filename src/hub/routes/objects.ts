/**
 * The object routes (docs/wire.md "Fetching a claimed revision"): a collector on another host
 * fetches the revision of a collector claim it holds live, by digest, authenticated with the
 * claiming grant's token exactly as the agent-tasks route is (the grant in the task worker first,
 * the body after). Under `.../agent-tasks/objects/ATTEMPT_ID/`:
 *   GET  revision         the revision object (agentscm.revision.v2 bytes)
 *   GET  trees/DIGEST     one tree object (agentscm.tree.v1 bytes)
 *   GET  blobs/SHA256     one blob's bytes
 *   POST blobs            a batch of blobs (object-batch.ts framing)
 *   POST trees            a batch of trees (the same framing)
 *   POST check            the descriptor checked against the authority as a local collect checks it
 * Every answer is application/octet-stream, never cached; the caller checks it against the digest it asked for.
 */
import type { ServerResponse } from 'node:http';

import { decodeBatchRequest, REMOTE_LIMITS } from '../../contracts/collector/object-batch.js';
import { MAX_REVIEW_DESCRIPTOR_BYTES } from '../../contracts/review/collector-descriptor.js';
import { bearerToken } from '../auth.js';
import { readBoundedBody, refuseDeclaredLength } from '../body.js';
import type { ObjectAsk } from '../object-reads.js';
import type { HubRoute } from './context.js';
import { routeProfile } from './profiles.js';

const OBJECTS_ROUTE = new RegExp(
  '^/v1/hub/workspace/repositories/([^/]+)/([^/]+)/profiles/([^/]+)/agent-tasks/objects/' +
    '([A-Za-z0-9._:-]{1,128})/(revision|check|trees(?:/[0-9a-f]{64})?|blobs(?:/[0-9a-f]{64})?)$',
);

/** The batch request's bound: maxBatchDigests digests of 32 bytes. */
export const BATCH_BODY_MAX_BYTES = REMOTE_LIMITS.maxBatchDigests * 32;

function sendBytes(res: ServerResponse, bytes: Uint8Array): void {
  if (res.headersSent) return;
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': bytes.byteLength,
    'cache-control': 'no-store',
  });
  res.end(bytes);
}

export const serveObjects: HubRoute = async (hub, req, res, url, exchange) => {
  if (req.method !== 'GET' && req.method !== 'POST') return false;
  const match = OBJECTS_ROUTE.exec(url.pathname);
  if (match === null) return false;
  const attemptId = match[4] as string;
  const what = match[5] as string;
  const batch = what === 'blobs' || what === 'trees';
  const check = what === 'check';
  if (batch || check ? req.method !== 'POST' : req.method !== 'GET') return false;
  exchange.route = batch ? 'objects-batch' : check ? 'objects-check' : 'objects';
  const token = bearerToken(req);
  refuseDeclaredLength(req, batch ? BATCH_BODY_MAX_BYTES : check ? MAX_REVIEW_DESCRIPTOR_BYTES : 0);
  const profile = routeProfile(hub.config, req, match);
  const index = hub.config.profiles.indexOf(profile);
  const held = await hub.tasks.authorize(index, token);
  let ask: ObjectAsk;
  try {
    if (batch) {
      const digests = decodeBatchRequest(await readBoundedBody(req, BATCH_BODY_MAX_BYTES));
      ask = { kind: 'batch', attemptId, objects: what === 'trees' ? 'trees' : 'blobs', digests };
    } else if (check) {
      ask = { kind: 'check', attemptId, descriptor: await readBoundedBody(req, MAX_REVIEW_DESCRIPTOR_BYTES) };
    } else if (what === 'revision') {
      ask = { kind: 'revision', attemptId };
    } else {
      const [kind, digest] = what.split('/') as [string, string];
      ask = { kind: kind === 'trees' ? 'tree' : 'blob', attemptId, digest };
    }
  } catch (error) {
    hub.tasks.release(held);
    throw error;
  }
  sendBytes(res, await hub.tasks.objects(held, index, token, ask));
  return true;
};
