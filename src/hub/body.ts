/**
 * Request bodies, streamed and bounded before buffering (issue "The hub": JSON routes 512 KiB →
 * 413): a Content-Length over the bound is refused before a byte is read, and a body that streams
 * past it is refused at the chunk that crosses it, so at most one chunk past the bound is ever
 * held. The time a client may take to send headers and body is bounded by the server's
 * headersTimeout and requestTimeout (server.ts), not here.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

import { readTransferPrefix, TRANSFER_LIMITS } from '../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';

function tooLarge(limit: number, seen: string): AgentscmError {
  return new AgentscmError(
    'HUB_BODY_TOO_LARGE',
    `the request body is ${seen}, more than this route's bound of ${limit} bytes; it was not read`,
    {
      hint: 'send a smaller request',
      details: { limit },
    },
  );
}

/** The declared Content-Length when it is over `limit` (checked before reading). */
export function refuseDeclaredLength(req: IncomingMessage, limit: number): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > limit)
    throw tooLarge(limit, `declared as ${declared} bytes`);
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

/**
 * Read `req` chunk by chunk until it ends or `take` refuses: `take` sees each chunk as it
 * arrives and throws to refuse, which stops reading there (the caller answers and closes the
 * connection, so the rest of the body is never read).
 */
function readChunks(req: IncomingMessage, take: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      req.pause();
    };
    const onData = (chunk: Buffer): void => {
      try {
        take(chunk);
      } catch (error) {
        stop();
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
    const onEnd = (): void => {
      stop();
      resolve();
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    const onClose = (): void => {
      stop();
      reject(
        new AgentscmError('TRANSFER_TRUNCATED', 'the client closed the connection before the body ended', {
          hint: 'resend the retained envelope',
        }),
      );
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * The upload route's body, a collector transfer envelope, checked as it streams in (issue #25
 * item 4) with the envelope reader's own checks and codes (docs/collector-transfer.md): the
 * magic at the first byte that differs (TRANSFER_MAGIC_INVALID), the header length at byte 12
 * (TRANSFER_HEADER_TOO_LARGE), the header and the total it declares as soon as the header's
 * bytes are in (at most 12 + 64 KiB held until then), a Content-Length other than that total
 * before the records are read, and a byte past it at the chunk that carries it
 * (TRANSFER_TRAILING_BYTES); a body that ends early is TRANSFER_TRUNCATED. The records go
 * straight into one buffer of the declared length, so nothing is copied twice and a refused
 * body is never buffered. `beforeRecords` gets the declared length once the prefix passed,
 * before that buffer is made; it throws to refuse (the upload bound). Signature and record digests are the import's
 * to check.
 */
export async function readTransferBody(
  req: IncomingMessage,
  beforeRecords: (declaredLength: number) => void = () => undefined,
): Promise<Buffer> {
  refuseDeclaredLength(req, TRANSFER_LIMITS.maxEnvelopeBytes);
  const declaredHeader = req.headers['content-length'];
  // Until the header is whole: the chunks so far and how many bytes the next check needs
  // (each byte of the magic and length as it comes, then the whole header at once, so a body
  // trickled a byte at a time is not copied over and over).
  let pending: Buffer[] = [];
  let size = 0;
  let need = 1;
  let envelope: Buffer | null = null;
  let filled = 0;
  /** The prefix of `bytes`, or null while its declared header is not all in yet. */
  const prefixOf = (bytes: Buffer): ReturnType<typeof readTransferPrefix> | null => {
    try {
      return readTransferPrefix(bytes);
    } catch (error) {
      if (isAgentscmError(error) && error.code === 'TRANSFER_TRUNCATED') return null;
      throw error;
    }
  };
  const start = (declaredLength: number): Buffer => {
    if (declaredHeader !== undefined && /^[0-9]+$/.test(declaredHeader) && Number(declaredHeader) !== declaredLength) {
      const sent = Number(declaredHeader);
      const code = sent < declaredLength ? 'TRANSFER_TRUNCATED' : 'TRANSFER_TRAILING_BYTES';
      throw new AgentscmError(
        code,
        `the request declares a body of ${sent} bytes but the envelope's header declares ${declaredLength}; it was ` +
          'refused before its records were read',
        {
          hint: 'send the envelope exactly as agent-task collect retained it',
          details: { length: sent, declared_length: declaredLength },
        },
      );
    }
    beforeRecords(declaredLength);
    return Buffer.allocUnsafeSlow(declaredLength);
  };
  const append = (target: Buffer, chunk: Buffer): void => {
    if (filled + chunk.byteLength > target.byteLength) {
      throw new AgentscmError(
        'TRANSFER_TRAILING_BYTES',
        `the body goes on past the ${target.byteLength} bytes the envelope's header declares; the rest was not read`,
        {
          hint: 'nothing may follow the last record; send the envelope exactly as it was framed',
          details: { declared_length: target.byteLength },
        },
      );
    }
    chunk.copy(target, filled);
    filled += chunk.byteLength;
  };
  await readChunks(req, (chunk) => {
    if (envelope !== null) {
      append(envelope, chunk);
      return;
    }
    pending.push(chunk);
    size += chunk.byteLength;
    if (size < need) return;
    const head = pending.length === 1 ? chunk : Buffer.concat(pending, size);
    pending = [head];
    const prefix = prefixOf(head);
    if (prefix === null) {
      need =
        size < TRANSFER_LIMITS.prefixBytes
          ? size + 1
          : TRANSFER_LIMITS.prefixBytes + head.readUInt32BE(TRANSFER_LIMITS.magicBytes);
      return;
    }
    envelope = start(prefix.declaredLength);
    pending = [];
    append(envelope, head);
  });
  if (envelope === null) {
    // The body ended inside its prefix: the reader's own refusal (a short magic, truncation).
    readTransferPrefix(Buffer.concat(pending, size));
    throw new AgentscmError('INTERNAL', 'the transfer prefix check accepted a body it had refused');
  }
  const whole: Buffer = envelope;
  if (filled < whole.byteLength) {
    throw new AgentscmError(
      'TRANSFER_TRUNCATED',
      `the envelope's header declares ${whole.byteLength} bytes but the body ends after ${filled}`,
      {
        hint: 'the envelope was cut short; resend the retained bytes',
        details: { length: filled, declared_length: whole.byteLength },
      },
    );
  }
  return whole;
}

/** How long a connection whose body was refused unread stays half-open after the answer. */
export const REFUSED_BODY_LINGER_MS = 2_000;

/**
 * After a refusal sent with `Connection: close` while the client may still be sending its body:
 * read nothing more (what the client still sends waits in the kernel, and its writes stall), end
 * the hub's side once the answer is out, and close the connection when the client does or after
 * REFUSED_BODY_LINGER_MS. Closing at once with unread bytes makes the kernel answer them with a
 * reset, and a client still writing could then lose the refusal before reading it.
 */
export function lingerAfterRefusal(req: IncomingMessage): void {
  // Null once Node let go of the request's socket (a body iterator that was returned early).
  const socket = req.socket as Socket | null;
  if (socket === null || socket.destroyed) return;
  // Marks the body as consumed, so that Node does not read the rest to drop it; reads nothing.
  req.pause();
  req.read(0);
  // Node ends a `Connection: close` socket and destroys it as soon as the answer is flushed;
  // here it only ends the hub's side, and the timer (or the client's close) does the rest.
  socket.destroySoon = () => {
    socket.end();
  };
  const timer = setTimeout(() => socket.destroy(), REFUSED_BODY_LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** Seconds a client told HUB_UPLOAD_BUSY waits before it retries (the answer's Retry-After). */
export const UPLOAD_RETRY_AFTER_S = 1;

/** What the upload bodies read and imported at once may take (docs/hub.md "Bounds"). */
export const UPLOAD_BUDGET = {
  /** Declared envelope bytes in flight: two full 16 MiB envelopes, or many small ones. */
  bytes: 2 * TRANSFER_LIMITS.maxEnvelopeBytes,
  /** Uploads in flight, whatever their size (each waits its turn in the task worker). */
  uploads: 16,
} as const;

/**
 * The bound on concurrent uploads (issue #25 item 4): each upload holds up to 16 MiB from the
 * moment its prefix passed until its import answered, so the hub admits uploads while their
 * declared sizes fit UPLOAD_BUDGET and refuses one more with HUB_UPLOAD_BUSY (503,
 * Retry-After) before its records are read. Before that, an upload holds at most its prefix
 * (12 + 64 KiB).
 */
export class UploadBudget {
  private bytes = 0;
  private uploads = 0;

  constructor(readonly limit: { readonly bytes: number; readonly uploads: number } = UPLOAD_BUDGET) {}

  /**
   * Take `bytes` for one upload (HUB_UPLOAD_BUSY when they do not fit); the returned function gives them back, once.
   */
  take(bytes: number): () => void {
    if (this.uploads >= this.limit.uploads || this.bytes + bytes > this.limit.bytes) {
      throw new AgentscmError(
        'HUB_UPLOAD_BUSY',
        `the hub is already reading ${this.uploads} collector uploads (${this.bytes} bytes), as much as it takes ` +
          `at once; this one (${bytes} bytes) was not read`,
        {
          hint: `retry after ${UPLOAD_RETRY_AFTER_S} s (Retry-After)`,
          details: {
            uploads: this.uploads,
            bytes: this.bytes,
            limit_bytes: this.limit.bytes,
            limit_uploads: this.limit.uploads,
          },
        },
      );
    }
    this.bytes += bytes;
    this.uploads += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.bytes -= bytes;
      this.uploads -= 1;
    };
  }
}
