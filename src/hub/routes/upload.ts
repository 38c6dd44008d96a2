/**
 * `POST .../profiles/PROFILE/agent-tasks/collector-upload` (docs/wire.md "Hub"): the signed
 * transfer envelope as bytes (application/octet-stream), at most 16 MiB, imported by the same core
 * as a local `agent-task upload`; the answer is the import's view, as there.
 */
import { TRANSFER_LIMITS } from '../../contracts/collector/transfer.js';
import { bearerToken } from '../auth.js';
import { readTransferBody, refuseDeclaredLength } from '../body.js';
import type { HubRoute } from './context.js';
import { routeProfile } from './profiles.js';
import { send } from './respond.js';

const UPLOAD_ROUTE =
  /^\/v1\/hub\/workspace\/repositories\/([^/]+)\/([^/]+)\/profiles\/([^/]+)\/agent-tasks\/collector-upload$/;
/** The upload route's bound: one whole transfer envelope (docs/wire.md "Collector transfer envelope v1"). */
export const UPLOAD_BODY_MAX_BYTES = TRANSFER_LIMITS.maxEnvelopeBytes;

export const serveUpload: HubRoute = async (hub, req, res, url, exchange) => {
  if (req.method !== 'POST') return false;
  const match = UPLOAD_ROUTE.exec(url.pathname);
  if (match === null) return false;
  exchange.route = 'collector-upload';
  const token = bearerToken(req);
  refuseDeclaredLength(req, UPLOAD_BODY_MAX_BYTES);
  const profile = routeProfile(hub.config, req, match);
  const index = hub.config.profiles.indexOf(profile);
  // The grant in the task worker before the body is read, the import there after (as the agent-tasks route).
  const held = await hub.tasks.authorize(index, token);
  let envelope: Uint8Array;
  // Checked as it streams in (a bad magic, header length or header is refused at once, the
  // rest never read), and admitted while the uploads in flight fit the budget (HUB_UPLOAD_BUSY).
  let release: (() => void) | undefined;
  try {
    envelope = await readTransferBody(req, (declaredLength) => {
      release = hub.uploads.take(declaredLength);
    });
  } catch (error) {
    release?.();
    hub.tasks.release(held);
    throw error;
  }
  try {
    // Only the envelope's own bytes cross to the worker (a view into a larger buffer would copy all of it).
    const own =
      envelope.byteOffset === 0 && envelope.byteLength === envelope.buffer.byteLength
        ? envelope
        : new Uint8Array(envelope);
    const view = await hub.tasks.upload(held, index, token, own);
    hub.forge.poke(profile);
    send(res, 200, view);
  } finally {
    release?.();
  }
  return true;
};
