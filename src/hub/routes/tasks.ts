/**
 * `POST .../repositories/OWNER/NAME/profiles/PROFILE/agent-tasks` (docs/wire.md "Hub"): one task
 * operation. The grant and the facade call run in the task worker, in the order of the steps of
 * src/hub/server.ts: the worker authorizes before the body is read and holds the authorization
 * for the call.
 */
import { HUB_JSON_BODY_MAX_BYTES, hubTaskRequestDecoder } from '../../contracts/hub-config.js';
import { bearerToken } from '../auth.js';
import { readBoundedBody, refuseDeclaredLength } from '../body.js';
import type { HubRoute } from './context.js';
import { routeProfile } from './profiles.js';
import { send } from './respond.js';

const TASKS_ROUTE = /^\/v1\/hub\/workspace\/repositories\/([^/]+)\/([^/]+)\/profiles\/([^/]+)\/agent-tasks$/;

export const serveTasks: HubRoute = async (hub, req, res, url, exchange) => {
  if (req.method !== 'POST') return false;
  const match = TASKS_ROUTE.exec(url.pathname);
  if (match === null) return false;
  exchange.route = 'agent-tasks';
  const token = bearerToken(req);
  refuseDeclaredLength(req, HUB_JSON_BODY_MAX_BYTES);
  const profile = routeProfile(hub.config, req, match);
  const index = hub.config.profiles.indexOf(profile);
  const held = await hub.tasks.authorize(index, token);
  let request: ReturnType<typeof hubTaskRequestDecoder.decode>;
  try {
    request = hubTaskRequestDecoder.decode(
      await readBoundedBody(req, HUB_JSON_BODY_MAX_BYTES),
      HUB_JSON_BODY_MAX_BYTES,
    );
  } catch (error) {
    hub.tasks.release(held);
    throw error;
  }
  const answer = await hub.tasks.call(held, index, token, {
    operation: request.operation,
    input: request.input,
    subject: request.subject,
  });
  hub.forge.poke(profile);
  send(res, 200, answer);
  return true;
};
