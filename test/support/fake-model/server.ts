/**
 * The HTTP part both fake model servers share: a server on 127.0.0.1 port 0 that records every
 * request (method, path, headers, parsed JSON body) before a route answers it, and answers an
 * unknown path with 404 after logging it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The body parsed as JSON, or its text when it is not JSON. */
  readonly body: unknown;
}

export type Route = (request: RecordedRequest, res: ServerResponse) => boolean;

export interface FakeServer {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Paths no route answered. */
  readonly unknown: string[];
  readonly close: () => Promise<void>;
}

export async function startFakeServer(route: Route): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const unknown: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        // kept as text
      }
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body,
      };
      requests.push(recorded);
      try {
        if (!route(recorded, res)) {
          unknown.push(`${recorded.method} ${recorded.path}`);
          sendJson(res, 404, { error: { type: 'not_found_error', message: `no route ${recorded.path}` } });
        }
      } catch (error) {
        unknown.push(`${recorded.method} ${recorded.path}: ${String(error)}`);
        if (!res.headersSent) sendJson(res, 500, { error: { type: 'api_error', message: String(error) } });
        else res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    unknown,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const bytes = Buffer.from(JSON.stringify(value));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
  res.end(bytes);
}

/** Write one server-sent event. */
export function sendEvent(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
}

/** The path without its query. */
export function pathOf(request: RecordedRequest): string {
  return request.path.split('?')[0]!;
}
