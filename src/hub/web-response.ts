/**
 * A web `Response` (what the MCP SDK's handler answers) sent through a Node response as it comes
 * (issue #25 item 17): status and headers at once, then the body chunk by chunk with Node's
 * backpressure, so a stream the SDK keeps open (an SSE answer) reaches the client as it is
 * written instead of never (buffering it whole waits for an end that may not come). When the
 * client goes away first, the web stream is cancelled, which ends the SDK's side of it.
 */
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

/** Headers of the connection, not of the answer: the hub's own server sets them. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/** Send `response` through `res`; resolves when the body ended or the client went away. */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    if (!CONNECTION_HEADERS.has(key)) headers[key] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  // The status line and headers go out now, before the first byte of a body that may take long.
  res.flushHeaders();
  try {
    await pipeline(Readable.fromWeb(response.body as unknown as NodeReadableStream<Uint8Array>), res);
  } catch (error) {
    // The client closed the connection before the body ended: nothing is left to answer.
    if (res.destroyed || (error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    throw error;
  }
}
