/**
 * The dashboard (docs/dashboard.md): its static files and its read-only JSON routes, all GET, all
 * with the dashboard's security headers; the JSON routes take a reader grant only, and the reader
 * grant, the profile and the view are read in the read worker, in that order.
 */
import type { ServerResponse } from 'node:http';

import { bearerToken } from '../auth.js';
import { isUiApiPath } from '../ui-api.js';
import { UI_PREFIX, UI_SECURITY_HEADERS, uiFile } from '../ui-routes.js';
import type { UiAnswer } from '../ui-views.js';
import type { HubContext, HubRoute } from './context.js';

function sendUi(res: ServerResponse, answer: UiAnswer): void {
  const body = answer.kind === 'json' ? Buffer.from(answer.body) : answer.body;
  res.writeHead(200, {
    ...UI_SECURITY_HEADERS,
    'content-type': answer.kind === 'json' ? 'application/json' : 'application/octet-stream',
    'content-length': body.byteLength,
    ...(answer.kind === 'download' ? { 'content-disposition': `attachment; filename="${answer.filename}"` } : {}),
  });
  res.end(body);
}

const serveUiApi: HubRoute = async (hub: HubContext, req, res, url, exchange) => {
  if (!isUiApiPath(url.pathname)) return false;
  exchange.route = 'ui-api';
  const answer = await hub.reads.ui(bearerToken(req), {
    pathname: url.pathname,
    search: url.search,
    nowMs: Date.now(),
  });
  sendUi(
    res,
    answer.kind === 'json'
      ? answer
      : {
          kind: 'download',
          body: Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength),
          filename: answer.filename,
        },
  );
  return true;
};

async function serveUiStatic(res: ServerResponse, url: URL, exchange: { route: string }): Promise<boolean> {
  if (url.pathname === '/ui') {
    exchange.route = 'ui';
    res.writeHead(308, { ...UI_SECURITY_HEADERS, location: UI_PREFIX, 'content-length': 0 });
    res.end();
    return true;
  }
  // The hub's root leads to the dashboard: 302, not cached for good, so `/` stays free for later use.
  if (url.pathname === '/') {
    exchange.route = 'ui';
    res.writeHead(302, { ...UI_SECURITY_HEADERS, location: UI_PREFIX, 'content-length': 0 });
    res.end();
    return true;
  }
  const file = await uiFile(url.pathname);
  if (file === null) return false;
  exchange.route = 'ui';
  res.writeHead(200, { ...UI_SECURITY_HEADERS, 'content-type': file.type, 'content-length': file.body.byteLength });
  res.end(file.body);
  return true;
}

export const serveDashboard: HubRoute = async (hub, req, res, url, exchange) =>
  req.method === 'GET' &&
  ((await serveUiApi(hub, req, res, url, exchange)) || (await serveUiStatic(res, url, exchange)));
