/**
 * The byte-level seam to a container engine: one HTTP exchange or one hijacked attach stream.
 * The real transport speaks HTTP/1.1 over the engine's Unix socket with undici (no `docker`
 * CLI in the execution path); src/collector/fake-transport.ts implements the same interface
 * for the faults the real engine cannot produce on demand.
 */
import type { Duplex, Readable } from 'node:stream';
import { Pool, errors as undiciErrors } from 'undici';

import { AgentscmError } from '../contracts/errors.js';

export interface TransportRequest {
  readonly method: 'GET' | 'POST' | 'DELETE' | 'HEAD';
  /** Path including the version prefix and query string. */
  readonly path: string;
  readonly body?: Uint8Array;
  /** Largest accepted response body; larger answers are refused, not buffered. */
  readonly maxBytes: number;
  /** 0 = wait as long as the engine takes (container wait). */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface TransportResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

export interface DockerTransport {
  /** Where the engine is, for messages (no secrets). */
  readonly describe: string;
  request(request: TransportRequest): Promise<TransportResponse>;
  /** Hijack an attach endpoint: the returned stream carries the multiplexed frames. */
  attach(path: string, timeoutMs: number): Promise<Readable & { destroy(error?: Error): unknown }>;
  close(): Promise<void>;
}

function unavailable(describe: string, error: unknown): AgentscmError {
  const message = error instanceof Error ? error.message : String(error);
  return new AgentscmError('RUNTIME_UNAVAILABLE', `the container engine at ${describe} did not answer: ${message}`, {
    hint: 'start it (as root: npm run runtime:start) or pass the right --docker-socket',
    cause: error,
  });
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The real transport: HTTP/1.1 over a Unix socket with undici. */
export function createUnixSocketTransport(socketPath: string): DockerTransport {
  // A pool, not one connection: a container wait holds its connection for the whole run, and
  // the kill that enforces a timeout or cancellation must not queue behind it.
  const client = new Pool('http://localhost', {
    socketPath,
    connections: 4,
    connect: { timeout: 5000 },
    pipelining: 1,
    keepAliveTimeout: 4000,
  });
  const describe = `unix://${socketPath}`;
  return {
    describe,
    async request(request) {
      let response;
      try {
        response = await client.request({
          path: request.path,
          method: request.method,
          headers:
            request.body === undefined ? { host: 'docker' } : { host: 'docker', 'content-type': 'application/json' },
          body: request.body === undefined ? null : Buffer.from(request.body),
          headersTimeout: request.timeoutMs,
          bodyTimeout: request.timeoutMs,
          signal: request.signal ?? null,
          idempotent: request.method === 'GET',
        });
      } catch (error) {
        if (error instanceof undiciErrors.RequestAbortedError || (error as { name?: string }).name === 'AbortError')
          throw error;
        throw unavailable(describe, error);
      }
      const declared = Number(response.headers['content-length'] ?? '0');
      if (declared > request.maxBytes) {
        response.body.destroy();
        throw new AgentscmError(
          'RUNTIME_API_ERROR',
          `the engine answered ${request.method} ${request.path} with ${declared} bytes, more than ${request.maxBytes}`,
        );
      }
      const chunks: Buffer[] = [];
      let total = 0;
      try {
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          total += chunk.byteLength;
          if (total > request.maxBytes) {
            response.body.destroy();
            throw new AgentscmError(
              'RUNTIME_API_ERROR',
              `the engine answered ${request.method} ${request.path} with more than ${request.maxBytes} bytes`,
            );
          }
          chunks.push(chunk);
        }
      } catch (error) {
        if (error instanceof AgentscmError) throw error;
        if ((error as { name?: string }).name === 'AbortError' || error instanceof undiciErrors.RequestAbortedError)
          throw error;
        throw unavailable(describe, error);
      }
      return { status: response.statusCode, headers: flattenHeaders(response.headers), body: Buffer.concat(chunks) };
    },
    async attach(path, timeoutMs) {
      // Docker answers `Upgrade: tcp` with 101 and then writes the raw multiplexed stream.
      let data;
      try {
        const upgrade = client.upgrade({ path, method: 'POST', protocol: 'tcp', headers: { host: 'docker' } });
        data = await withTimeout(upgrade, timeoutMs, describe);
      } catch (error) {
        if (error instanceof AgentscmError) throw error;
        throw unavailable(describe, error);
      }
      const socket: Duplex = data.socket;
      return socket;
    },
    async close() {
      await client.close().catch(() => undefined);
    },
  };
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, describe: string): Promise<T> {
  if (timeoutMs <= 0) return promise;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable(describe, new Error(`no answer within ${timeoutMs} ms`))), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
