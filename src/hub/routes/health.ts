/**
 * `GET /v1/hub/health`: a read of each store in the read worker, bounded: a worker busy with a long
 * dashboard read makes health answer STORE_BUSY (503, Retry-After) rather than wait.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { HubRoute } from './context.js';
import { send } from './respond.js';

export const HEALTH_PATH = '/v1/hub/health';
/** How long health waits for the read worker's read of each store before it answers STORE_BUSY. */
export const HEALTH_LIMIT_MS = 1_000;

export const serveHealth: HubRoute = async (hub, req, res, url, exchange) => {
  if (url.pathname !== HEALTH_PATH || req.method !== 'GET') return false;
  exchange.route = 'health';
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new AgentscmError('STORE_BUSY', `the stores did not answer health's read within ${HEALTH_LIMIT_MS} ms`)),
      HEALTH_LIMIT_MS,
    );
  });
  try {
    await Promise.race([hub.reads.ping(), limit]);
  } finally {
    clearTimeout(timer);
  }
  send(res, 200, '{"status":"ok"}');
  return true;
};
