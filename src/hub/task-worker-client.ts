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
import { packageSource } from './package-root.js';
import type { HubTaskCall } from './task-call.js';
import { TASK_WORKER_KIND, errorOfWire } from './task-worker-protocol.js';
import type { TaskWorkerData, TaskWorkerReply, TaskWorkerRequest } from './task-worker-protocol.js';

export interface TaskWorkerOptions {
  /** Test fault injection: each worker thread exits when asked to call this operation. */
  readonly exitOnOperation?: string | undefined;
}

interface Pending {
  resolve(body: string | null): void;
  reject(error: AgentscmError): void;
}

/** How long a closing worker has to close its connections before it is terminated. */
const CLOSE_LIMIT_MS = 5_000;

function startWorker(data: TaskWorkerData): Worker {
  const { root, fromSources } = packageSource();
  if (!fromSources) return new Worker(pathToFileURL(join(root, 'dist', 'hub', 'task-worker.js')), { workerData: data });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = pathToFileURL(join(root, 'src', 'hub', 'task-worker.ts')).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`, { eval: true, workerData: data });
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
  ) {}

  /** Start the first worker; resolves once it has loaded, rejects (INTERNAL) when it cannot. */
  async start(): Promise<void> {
    this.current();
    await this.ready;
  }

  /** Authorize `token` for the profile (by its index in the config) in the worker; resolves to the handle of the held authorization. */
  async authorize(profile: number, token: string): Promise<number> {
    let handle = 0;
    await this.send((id) => {
      handle = id;
      return { kind: 'authorize', id, profile, token };
    });
    return handle;
  }

  /** Run the call under the authorization held under `held`; resolves to the route's JSON answer text. */
  async call(held: number, profile: number, token: string, call: HubTaskCall): Promise<string> {
    const body = await this.send((id) => ({ kind: 'call', id, held, profile, token, call }));
    if (body === null) throw new AgentscmError('INTERNAL', "the hub's task worker answered a call without a body");
    return body;
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

  private send(request: (id: number) => TaskWorkerRequest): Promise<string | null> {
    if (this.closing) return Promise.reject(new AgentscmError('INTERNAL', "the hub's task worker is closing"));
    const id = this.nextId;
    this.nextId += 1;
    return new Promise<string | null>((resolve, reject) => {
      const worker = this.current();
      this.pending.set(id, { resolve, reject });
      try {
        worker.postMessage(request(id));
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
    const worker = startWorker({ kind: TASK_WORKER_KIND, profiles: this.profiles, exitOnOperation: this.options.exitOnOperation });
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
        const stopped = new AgentscmError('INTERNAL', `the hub's task worker stopped (exit code ${code}${failure === null ? '' : `: ${failure}`}) ${loaded ? 'before it answered' : 'before it was ready'}`, {
          hint: 'the next request starts a fresh task worker; see the hub log',
        });
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
    if (reply.kind === 'answer') pending.resolve(reply.body);
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
