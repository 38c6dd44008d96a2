/**
 * The main thread's side of the hub's task worker (docs/hub.md "The task worker"): starts the one
 * worker thread of src/hub/task-worker.ts, sends it the agent-tasks route's requests
 * (src/hub/task-worker-protocol.ts) and settles each with the worker's answer — the route's JSON
 * answer text, or the refusal as the same AgentscmError the facade threw.
 *
 * A worker that dies (an uncaught error, a native crash of its thread, process.exit in it) never
 * leaves a request waiting: every request sent to it and not yet answered is rejected with
 * INTERNAL, and the next request starts a fresh worker, with fresh connections.
 *
 * Where the worker's code comes from: the built CLI starts dist/hub/task-worker.js, an entry of
 * the bundle (bin/bundle.js); the sources (bin/dev.js, the tests) start src/hub/task-worker.ts
 * through tsx's API, because Node 20 does not run the parent's `--import tsx` for a worker's entry.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

import { AgentscmError } from '../contracts/errors.js';
import type { HubProfile } from './config.js';
import { asAgentscmError } from './http-errors.js';
import type { ObjectAsk } from './object-reads.js';
import { packageSource } from './package-root.js';
import type { HubTaskCall } from './task-call.js';
import {
  errorOfWire,
  TASK_WORKER_KIND,
  type CallAnswer,
  type TaskWorkerData,
  type TaskWorkerReply,
  type TaskWorkerRequest,
  type UiWorkerAnswer,
  type UiWorkerRequest,
} from './task-worker-protocol.js';

export interface TaskWorkerOptions {
  /** Test fault injection: each worker thread exits when asked to call this operation. */
  readonly exitOnOperation?: string | undefined;
  /**
   * How long a request's store work may wait for another writer's lock, counted from when it was sent (default
   * BUSY_BUDGET_MS).
   */
  readonly busyBudgetMs?: number | undefined;
}

/**
 * The default busy budget (docs/hub.md "A busy store"): a request whose store stays locked by
 * another writer this long after it was sent answers STORE_BUSY (503, Retry-After), however many
 * requests wait with it.
 */
export const BUSY_BUDGET_MS = 1_000;

type Answered = Extract<TaskWorkerReply, { kind: 'answer' }>;

interface Pending {
  resolve(reply: Answered): void;
  reject(error: AgentscmError): void;
}

/** How long a closing worker has to close its connections before it is terminated. */
const CLOSE_LIMIT_MS = 5_000;

function startWorker(data: TaskWorkerData): Worker {
  const { root, fromSources } = packageSource();
  if (!fromSources) return new Worker(pathToFileURL(join(root, 'dist', 'hub', 'task-worker.js')), { workerData: data });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = pathToFileURL(join(root, 'src', 'hub', 'task-worker.ts')).href;
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`,
    { eval: true, workerData: data },
  );
}

export class TaskWorkerClient {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing = false;
  private idle: (() => void) | null = null;
  private ready: Promise<void> = Promise.resolve();
  /** How many worker threads were started: the first and each replacement. */
  started = 0;

  constructor(
    private readonly profiles: readonly HubProfile[],
    private readonly options: TaskWorkerOptions = {},
    /** How errors name this worker ("the hub's task worker", "the hub's read worker"). */
    private readonly name = "the hub's task worker",
  ) {}

  /** Start the first worker; resolves once it has loaded, rejects (INTERNAL) when it cannot. */
  async start(): Promise<void> {
    this.current();
    await this.ready;
  }

  /**
   * Authorize `token` for the profile (by its index in the config) in the worker; resolves to the handle of the held
   * authorization.
   */
  async authorize(profile: number, token: string): Promise<number> {
    let handle = 0;
    await this.send((id, sentAt) => {
      handle = id;
      return { kind: 'authorize', id, sentAt, profile, token };
    });
    return handle;
  }

  /**
   * Run the call under the authorization held under `held` (0: none, authorize afresh); resolves
   * to the route's JSON answer text, or with `answer` 'tool' the JSON text of the result alone.
   */
  async call(
    held: number,
    profile: number,
    token: string,
    call: HubTaskCall,
    answer: CallAnswer = 'route',
  ): Promise<string> {
    return this.bodyOf(
      await this.send((id, sentAt) => ({ kind: 'call', id, sentAt, held, profile, token, call, answer })),
    );
  }

  /**
   * Import a collector transfer envelope under the authorization held under `held`; resolves to the view's JSON text.
   */
  async upload(held: number, profile: number, token: string, envelope: Uint8Array): Promise<string> {
    // The envelope's buffer moves to the worker rather than being copied (up to 16 MiB per upload);
    // it is empty here afterwards.
    return this.bodyOf(
      await this.send(
        (id, sentAt) => ({ kind: 'upload', id, sentAt, held, profile, token, envelope }),
        [envelope.buffer as ArrayBuffer],
      ),
    );
  }

  /** Objects of a claimed revision under the authorization held under `held` (the object routes); their bytes. */
  async objects(held: number, profile: number, token: string, ask: ObjectAsk): Promise<Uint8Array> {
    const reply = await this.send((id, sentAt) => ({ kind: 'objects', id, sentAt, held, profile, token, ask }));
    if (reply.bytes === undefined) throw new AgentscmError('INTERNAL', `${this.name} answered objects without bytes`);
    return reply.bytes;
  }

  /** Authenticate a reader grant for `endpoint` (the legacy /mcp endpoint). */
  async reader(token: string, endpoint: string): Promise<void> {
    await this.send((id, sentAt) => ({ kind: 'reader', id, sentAt, token, endpoint }));
  }

  /** The legacy tool's run status for a reader token; the view's JSON text. */
  async workflowStatus(token: string, runId: string): Promise<string> {
    return this.bodyOf(await this.send((id, sentAt) => ({ kind: 'workflow-status', id, sentAt, token, runId })));
  }

  /** One dashboard JSON route for a reader token. */
  async ui(token: string, request: UiWorkerRequest): Promise<UiWorkerAnswer> {
    const reply = await this.send((id, sentAt) => ({ kind: 'ui', id, sentAt, token, request }));
    if (reply.value === undefined || typeof reply.value === 'number')
      throw new AgentscmError('INTERNAL', `${this.name} answered a dashboard request without an answer`);
    return reply.value;
  }

  /** A read of each configured store (health). */
  async ping(): Promise<void> {
    await this.send((id, sentAt) => ({ kind: 'ping', id, sentAt }));
  }

  private bodyOf(reply: Answered): string {
    if (reply.body === null) throw new AgentscmError('INTERNAL', `${this.name} answered without a body`);
    return reply.body;
  }

  /** Drop the authorization held under `held` (its request ends without a call). */
  release(held: number): void {
    this.worker?.postMessage({ kind: 'release', held } satisfies TaskWorkerRequest);
  }

  /** Once every sent request is answered, let the worker close its connections and end. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.pending.size > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    const worker = this.worker;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ kind: 'close' } satisfies TaskWorkerRequest);
    const cut = setTimeout(() => void worker.terminate(), CLOSE_LIMIT_MS);
    await exited;
    clearTimeout(cut);
  }

  private send(
    request: (id: number, sentAt: number) => TaskWorkerRequest,
    transfer: readonly ArrayBuffer[] = [],
  ): Promise<Answered> {
    if (this.closing) return Promise.reject(new AgentscmError('INTERNAL', `${this.name} is closing`));
    const id = this.nextId;
    this.nextId += 1;
    return new Promise<Answered>((resolve, reject) => {
      const worker = this.current();
      this.pending.set(id, { resolve, reject });
      try {
        worker.postMessage(request(id, Date.now()), [...transfer]);
      } catch (error) {
        this.pending.delete(id);
        reject(asAgentscmError(error));
        this.checkIdle();
      }
    });
  }

  /** The live worker, started when there is none. */
  private current(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = startWorker({
      kind: TASK_WORKER_KIND,
      profiles: this.profiles,
      busyBudgetMs: this.options.busyBudgetMs ?? BUSY_BUDGET_MS,
      exitOnOperation: this.options.exitOnOperation,
    });
    this.started += 1;
    this.worker = worker;
    let failure: string | null = null;
    let loaded = false;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: TaskWorkerReply) => {
        if (reply.kind === 'ready') {
          loaded = true;
          resolve();
        } else this.settle(reply);
      });
      worker.on('error', (error: Error) => {
        failure = error.message;
      });
      worker.on('exit', (code: number) => {
        if (this.worker === worker) this.worker = null;
        const stopped = new AgentscmError(
          'INTERNAL',
          `${this.name} stopped (exit code ${code}${failure === null ? '' : `: ${failure}`}) ` +
            `${loaded ? 'before it answered' : 'before it was ready'}`,
          {
            hint: 'the next request starts a fresh worker; see the hub log',
          },
        );
        reject(stopped);
        for (const [id, pending] of this.pending) {
          this.pending.delete(id);
          pending.reject(stopped);
        }
        this.checkIdle();
      });
    });
    // A replacement's start-up failure reaches its requests through 'exit'; only start() awaits this.
    this.ready.catch(() => undefined);
    return worker;
  }

  private settle(reply: Exclude<TaskWorkerReply, { kind: 'ready' }>): void {
    const pending = this.pending.get(reply.id);
    if (pending === undefined) return;
    this.pending.delete(reply.id);
    if (reply.kind === 'answer') pending.resolve(reply);
    else pending.reject(errorOfWire(reply.error));
    this.checkIdle();
  }

  private checkIdle(): void {
    if (this.pending.size > 0 || this.idle === null) return;
    const idle = this.idle;
    this.idle = null;
    idle();
  }
}
