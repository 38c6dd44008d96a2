/**
 * The collector's side of the hub's object routes (docs/wire.md "Fetching a claimed revision";
 * docs/collect.md "Collecting on another host"): every object is asked for by digest and checked
 * against it before anything keeps it — the revision object and trees re-hashed under their
 * domains, blobs SHA-256 as their bytes stream in — and only then written to the object cache.
 * A hub answer that differs is REMOTE_OBJECT_MISMATCH at once (never retried: the transport is
 * not trusted). A connection that breaks mid-batch keeps the frames already checked and asks
 * again for only what is missing (at most FETCH_ATTEMPTS times in a row without progress).
 */
import { createHash, type Hash } from 'node:crypto';
import { request } from 'undici';

import {
  BatchReader,
  decodeCheckAnswer,
  decodeRevisionObject,
  decodeTreeObject,
  encodeBatchRequest,
  MAX_CHECK_ANSWER_BYTES,
  objectMismatch,
  REMOTE_LIMITS,
  type CheckedBinding,
} from '../../contracts/collector/object-batch.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import { parseStrictJson } from '../../contracts/json/strict-json.js';
import type { TreeEntry } from '../../contracts/tree.js';
import { hubError, uploadUrl } from '../upload-client.js';
import type { ObjectCache, ObjectKind } from './cache.js';

/** Requests in a row that may break without bringing a verified object before the fetch gives up. */
export const FETCH_ATTEMPTS = 3;
/** How long one object request may take. */
export const FETCH_TIMEOUT_MS = 120_000;

/** What a fetch transferred (for progress, the tests and the bench). */
export interface FetchStats {
  requests: number;
  /** Bytes of object answers received (bodies only). */
  bytes: number;
  /** Objects checked and cached. */
  objects: number;
}

export interface ObjectClientInput {
  /** The hub's agent-tasks URL of the profile (as --endpoint). */
  readonly endpoint: string;
  readonly token: string;
  /** The attempt of the live collector claim the objects are fetched under. */
  readonly attemptId: string;
  readonly cache: ObjectCache;
}

function unavailable(url: URL, error: unknown): AgentscmError {
  return new AgentscmError(
    'REMOTE_HUB_UNAVAILABLE',
    `fetching from the hub at ${url.origin} failed: ${(error as Error).message}`,
    {
      hint: 'nothing ran; the objects already fetched stay cached: collect again once the hub answers',
      cause: error,
    },
  );
}

export class ObjectClient {
  readonly stats: FetchStats = { requests: 0, bytes: 0, objects: 0 };
  private readonly base: string;

  constructor(private readonly input: ObjectClientInput) {
    uploadUrl(input.endpoint);
    const url = new URL(input.endpoint);
    this.base = `${url.origin}${url.pathname}/objects/${encodeURIComponent(input.attemptId)}`;
  }

  /**
   * The hub's check of the descriptor against its authority, made as a local collect makes it
   * (collect-check.ts), under this grant and claim; what it binds beyond the descriptor.
   */
  async check(descriptorBytes: Buffer): Promise<CheckedBinding> {
    const url = new URL(`${this.base}/check`);
    const body = await this.open(url, 'POST', descriptorBytes);
    return decodeCheckAnswer(await this.readAll(url, body, MAX_CHECK_ANSWER_BYTES, 'check'));
  }

  /** The root tree of the claimed revision (its object checked against `revision`). */
  async revisionTree(revision: string): Promise<string> {
    return decodeRevisionObject(revision, await this.get('revision', REMOTE_LIMITS.maxRevisionBytes)).tree;
  }

  /** The entries of a tree: from the cache, or fetched, checked and cached. */
  async tree(digest: string): Promise<TreeEntry[]> {
    const cached = this.input.cache.read('trees', digest);
    if (cached !== null) return decodeTreeObject(digest, cached);
    const bytes = await this.get(`trees/${digest}`, REMOTE_LIMITS.maxTreeBytes);
    const entries = decodeTreeObject(digest, bytes);
    this.input.cache.write('trees', digest, bytes);
    this.stats.objects += 1;
    return entries;
  }

  /** Make sure every blob named is cached: the missing ones fetched in batches, each frame checked. */
  async blobs(digests: readonly string[]): Promise<void> {
    await this.fetchMissing('blobs', digests);
  }

  /**
   * The entries of each tree named: the missing ones fetched in batches, each checked, then all read from
   * the cache.
   */
  async trees(digests: readonly string[]): Promise<Map<string, TreeEntry[]>> {
    await this.fetchMissing('trees', digests);
    const out = new Map<string, TreeEntry[]>();
    for (const digest of digests) {
      const bytes = this.input.cache.read('trees', digest);
      if (bytes === null)
        throw new AgentscmError('REMOTE_HUB_UNAVAILABLE', `tree ${digest} left the object cache`, {
          hint: 'collect again',
        });
      out.set(digest, decodeTreeObject(digest, bytes));
    }
    return out;
  }

  private async fetchMissing(kind: ObjectKind, digests: readonly string[]): Promise<void> {
    let pending = [...new Set(digests)].filter((digest) => !this.input.cache.has(kind, digest));
    let failures = 0;
    while (pending.length > 0) {
      const asked = pending.slice(0, REMOTE_LIMITS.maxBatchDigests);
      const got = new Set<string>();
      try {
        await this.batch(kind, asked, got);
        failures = 0;
      } catch (error) {
        if (isAgentscmError(error) && error.code !== 'REMOTE_HUB_UNAVAILABLE') throw error;
        failures = got.size > 0 ? 1 : failures + 1;
        if (failures >= FETCH_ATTEMPTS) throw error;
      }
      pending = pending.filter((digest) => !got.has(digest));
    }
  }

  private async batch(kind: ObjectKind, asked: readonly string[], got: Set<string>): Promise<void> {
    const url = new URL(`${this.base}/${kind}`);
    let hash: Hash | null = null;
    let parts: Buffer[] = [];
    const reader = new BatchReader(asked, {
      start: () => {
        hash = kind === 'blobs' ? createHash('sha256') : null;
        parts = [];
      },
      data: (chunk) => {
        hash?.update(chunk);
        parts.push(Buffer.from(chunk));
      },
      end: (index) => {
        const digest = asked[index] as string;
        const bytes = Buffer.concat(parts);
        if (kind === 'trees') {
          decodeTreeObject(digest, bytes);
        } else {
          const actual = hash?.digest('hex');
          if (actual !== digest)
            throw objectMismatch(`blob ${digest} was answered with bytes whose SHA-256 is ${actual ?? '?'}`);
        }
        this.input.cache.write(kind, digest, bytes);
        this.stats.objects += 1;
        got.add(digest);
        parts = [];
      },
    });
    const body = await this.open(url, 'POST', encodeBatchRequest(asked));
    try {
      for await (const chunk of body) {
        this.stats.bytes += chunk.byteLength;
        reader.push(chunk);
      }
    } catch (error) {
      if (isAgentscmError(error)) throw error;
      throw unavailable(url, error);
    }
    reader.finish();
  }

  /** GET one object's bytes, at most `limit`. */
  private async get(path: string, limit: number): Promise<Buffer> {
    const url = new URL(`${this.base}/${path}`);
    return this.readAll(url, await this.open(url, 'GET'), limit, path);
  }

  private async readAll(url: URL, body: AsyncIterable<Buffer>, limit: number, path: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of body) {
        total += chunk.byteLength;
        this.stats.bytes += chunk.byteLength;
        if (total > limit) throw objectMismatch(`the hub answered more than ${limit} bytes for ${path}`);
        chunks.push(chunk);
      }
    } catch (error) {
      if (isAgentscmError(error)) throw error;
      throw unavailable(url, error);
    }
    return Buffer.concat(chunks);
  }

  /** Send one request; the body of a 200 answer, the hub's refusal as its own code otherwise. */
  private async open(url: URL, method: 'GET' | 'POST', body?: Buffer): Promise<AsyncIterable<Buffer>> {
    this.stats.requests += 1;
    let response;
    try {
      response = await request(url, {
        method,
        headers: {
          authorization: `Bearer ${this.input.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/octet-stream' }),
        },
        ...(body === undefined ? {} : { body }),
        headersTimeout: FETCH_TIMEOUT_MS,
        bodyTimeout: FETCH_TIMEOUT_MS,
      });
    } catch (error) {
      throw unavailable(url, error);
    }
    if (response.statusCode === 200) return response.body;
    let answer: JsonValue | null = null;
    try {
      answer = parseStrictJson(Buffer.from(await response.body.arrayBuffer()), { maxBytes: 512 * 1024 });
    } catch {
      answer = null;
    }
    throw hubError(response.statusCode, answer);
  }
}
