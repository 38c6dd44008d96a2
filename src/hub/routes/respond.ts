/** How the hub's routes answer: a JSON body, a refusal (docs/hub.md "What an answer never says"), no route. */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { AgentscmError } from '../../contracts/errors.js';
import { lingerAfterRefusal } from '../body.js';
import { asAgentscmError, errorBody, httpStatusOf, messageWithheld, retryAfterOf } from '../http-errors.js';
import type { Exchange } from './context.js';

/** Answer `body` as JSON, never cached; `close` ends the connection after it. */
export function send(
  res: ServerResponse,
  status: number,
  body: string,
  close = false,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...(close ? { connection: 'close' } : {}),
    ...headers,
  });
  res.end(body);
}

/** Answer the refusal `error` with its status and code; a withheld message goes to the log only. */
export function sendError(res: ServerResponse, exchange: Exchange, error: unknown, log: (line: string) => void): void {
  const refused = asAgentscmError(error);
  exchange.code = refused.code;
  const status = httpStatusOf(refused.code);
  // A server-side failure's own message may name files: the client gets its code only, the
  // hub's log the message (docs/hub.md "What an answer never says").
  if (messageWithheld(refused)) {
    log(
      JSON.stringify({
        time: new Date().toISOString(),
        event: 'refusal_detail',
        route: exchange.route,
        code: refused.code,
        message: refused.message.slice(0, 4000),
      }),
    );
  }
  const retryAfter = retryAfterOf(refused.code);
  // A refused body is left unread: close the connection instead of draining it (after a short
  // linger, so that a client still sending reads the answer).
  const unread = !res.req.complete;
  if (unread && !res.headersSent) lingerAfterRefusal(res.req);
  send(
    res,
    status,
    errorBody(refused),
    status === 413 || status === 401 || unread,
    retryAfter === null ? {} : { 'retry-after': retryAfter },
  );
}

/** The refusal of a path no route takes. */
export function notFound(req: IncomingMessage, path: string): AgentscmError {
  return new AgentscmError('HUB_ROUTE_NOT_FOUND', `no hub route ${req.method ?? ''} ${path.slice(0, 200)}`, {
    hint: 'see docs/hub.md for the routes',
  });
}
