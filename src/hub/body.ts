/**
 * Request bodies, streamed and bounded before buffering (issue "The hub": JSON routes 512 KiB →
 * 413): a Content-Length over the bound is refused before a byte is read, and a body that streams
 * past it is refused at the chunk that crosses it, so at most one chunk past the bound is ever
 * held. The time a client may take to send headers and body is bounded by the server's
 * headersTimeout and requestTimeout (server.ts), not here.
 */
import type { IncomingMessage } from 'node:http';
import { AgentscmError } from '../contracts/errors.js';

function tooLarge(limit: number, seen: string): AgentscmError {
  return new AgentscmError('HUB_BODY_TOO_LARGE', `the request body is ${seen}, more than this route's bound of ${limit} bytes; it was not read`, {
    hint: 'send a smaller request',
    details: { limit },
  });
}

/** The declared Content-Length when it is over `limit` (checked before reading). */
export function refuseDeclaredLength(req: IncomingMessage, limit: number): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit, `declared as ${declared} bytes`);
}

/** Read the whole body of `req`, at most `limit` bytes (HUB_BODY_TOO_LARGE past it). */
export async function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  refuseDeclaredLength(req, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) {
      // Stop reading: the caller answers 413 and closes the connection, so the rest of the
      // body is never buffered.
      req.pause();
      throw tooLarge(limit, `more than ${limit} bytes so far`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
