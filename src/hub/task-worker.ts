/**
 * The hub's task worker (docs/hub.md "The task worker"): the one worker thread that runs the
 * agent-tasks route's facade work — the authorization of src/hub/auth.ts and callHubTask of
 * src/hub/task-call.ts — for the hub's life, while the main thread does the HTTP. It is a
 * composition root: it owns one Store and ProfileAuthorizations per data directory (a SQLite
 * connection belongs to the thread that opened it) and answers the requests of src/hub/task-worker-protocol.ts one at a
 * time, in the order they arrive: the facade is synchronous, so the calls stay serial as they
 * were on the main thread.
 *
 * This file is the worker's entry: the built CLI ships it as dist/hub/task-worker.js
 * (bin/bundle.js), the sources run it through tsx (src/hub/task-worker-client.ts). It serves only
 * when started as a task worker.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';

import { importTransfer } from '../collector/review/import.js';
import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonicalText } from '../contracts/json/canonical-json.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { setBusyTimeoutForNewConnections } from '../native/sqlite.js';
import { prepared, readTransaction } from '../native/store.js';
import type { GrantAuthorization } from '../tasks/grant-guard.js';
import { openStore, type Store } from '../tasks/store.js';
import { readRunStatus } from '../workflows/status.js';
import { authenticationFailure, authorizeReader, ProfileAuthorizations } from './auth.js';
import type { HubProfile } from './config.js';
import { asAgentscmError } from './http-errors.js';
import { ReachableCache, readClaimObjects } from './object-reads.js';
import { callHubTask, taskAnswer } from './task-call.js';
import {
  TASK_WORKER_KIND,
  wireErrorOf,
  type TaskWorkerData,
  type TaskWorkerReply,
  type TaskWorkerRequest,
  type UiWorkerAnswer,
} from './task-worker-protocol.js';
import { serveUiApi } from './ui-api.js';

/** How many authorizations the worker holds for requests still reading their bodies; the oldest goes first. */
const HELD_LIMIT = 4096;
/** The exit code of the test fault injection (TaskWorkerData.exitOnOperation). */
export const INJECTED_EXIT_CODE = 70;

interface Session {
  readonly store: Store;
  readonly authorizations: ProfileAuthorizations;
}

type Served = Exclude<TaskWorkerRequest, { kind: 'close' } | { kind: 'release' }>;

/** The worker's state: its Store and authorizations per data directory, and the held authorizations. */
export class TaskCallRunner {
  private readonly sessions = new Map<string, Session>();
  private readonly held = new Map<number, GrantAuthorization>();
  /** What each claimed revision reaches (the object routes). */
  private readonly reachable = new ReachableCache();
  private readonly dataDirs: readonly string[];
  /** The busy timeout of the request being served (ms). */
  private busyMs = 0;

  constructor(private readonly data: TaskWorkerData) {
    this.dataDirs = [...new Set(data.profiles.map((profile) => profile.dataDir))];
  }

  /** The reply to one request (null for a request that has none). */
  async handle(request: Exclude<TaskWorkerRequest, { kind: 'close' }>): Promise<TaskWorkerReply | null> {
    if (request.kind === 'release') {
      this.held.delete(request.held);
      return null;
    }
    // What is left of the request's busy budget: a request that waited in the queue behind a
    // held lock tries its transactions once more and answers STORE_BUSY (docs/hub.md "A busy store").
    this.busyMs = Math.max(0, Math.min(this.data.busyBudgetMs, request.sentAt + this.data.busyBudgetMs - Date.now()));
    setBusyTimeoutForNewConnections(this.busyMs);
    try {
      return await this.serve(request);
    } catch (error) {
      if (request.kind === 'call' || request.kind === 'upload' || request.kind === 'objects')
        this.held.delete(request.held);
      return { kind: 'refusal', id: request.id, error: wireErrorOf(asAgentscmError(error)) };
    }
  }

  close(): void {
    this.held.clear();
    for (const session of this.sessions.values()) session.store.close();
    this.sessions.clear();
  }

  private async serve(request: Served): Promise<TaskWorkerReply> {
    const answer = (body: string | null, value?: UiWorkerAnswer): TaskWorkerReply => ({
      kind: 'answer',
      id: request.id,
      body,
      ...(value === undefined ? {} : { value }),
    });
    switch (request.kind) {
      case 'authorize': {
        const authorization = this.authorize(this.profileOf(request.profile), request.token);
        if (this.held.size >= HELD_LIMIT) this.held.delete(this.held.keys().next().value as number);
        this.held.set(request.id, authorization);
        return answer(null);
      }
      case 'call': {
        const profile = this.profileOf(request.profile);
        if (request.call.operation === this.data.exitOnOperation) process.exit(INJECTED_EXIT_CODE);
        const authorization = this.heldOr(request.held, profile, request.token);
        const result = callHubTask(profile, authorization, request.call, this.sessionOf(profile).store);
        return answer(
          encodeCanonicalText((request.answer === 'route' ? taskAnswer(result) : result) as unknown as JsonValue),
        );
      }
      case 'upload': {
        const profile = this.profileOf(request.profile);
        const authorization = this.heldOr(request.held, profile, request.token);
        const view = await importTransfer(this.sessionOf(profile).store, request.envelope, authorization);
        return answer(encodeCanonicalText(view));
      }
      case 'objects': {
        const profile = this.profileOf(request.profile);
        const authorization = this.heldOr(request.held, profile, request.token);
        const bytes = readClaimObjects(
          this.sessionOf(profile).store,
          authorization,
          this.reachable,
          request.ask,
          request.token,
        );
        return { kind: 'answer', id: request.id, body: null, bytes };
      }
      case 'reader':
        this.withReaders((readers) => authorizeReader(readers, request.token, request.endpoint));
        return answer(null);
      case 'workflow-status': {
        const { grant, store } = this.withReaders((readers) => authorizeReader(readers, request.token));
        const view = readRunStatus(store, request.runId);
        // A run of another repository is reported exactly as a missing one: a reader grant
        // learns nothing outside its repository.
        if (view.source.repository !== grant.repository)
          throw new AgentscmError('WORKFLOW_RUN_NOT_FOUND', `no workflow run ${request.runId}`);
        return answer(encodeCanonicalText(view as unknown as JsonValue));
      }
      case 'ui': {
        const { pathname, search, nowMs } = request.request;
        const ui = this.withReaders((readers) =>
          serveUiApi(
            this.data.profiles,
            request.token,
            { pathname, search, nowMs },
            { readers, storeOf: (profile) => this.sessionOf(profile).store },
          ),
        );
        return answer(
          null,
          ui.kind === 'json' ? ui : { kind: 'download', body: new Uint8Array(ui.body), filename: ui.filename },
        );
      }
      case 'ping':
        for (const dataDir of this.dataDirs) {
          const store = openStore(dataDir, { mode: 'read' });
          try {
            const auth = store.authority();
            readTransaction(auth, () => prepared(auth, 'SELECT 1').get());
          } finally {
            store.close();
          }
        }
        return answer(null);
    }
  }

  /** The authorization held under `held` (taken), or one made afresh for `token`. */
  private heldOr(held: number, profile: HubProfile, token: string): GrantAuthorization {
    const authorization = this.held.get(held) ?? this.authorize(profile, token);
    this.held.delete(held);
    return authorization;
  }

  private profileOf(index: number): HubProfile {
    const profile = this.data.profiles[index];
    if (profile === undefined) throw new AgentscmError('INTERNAL', `the task worker has no profile ${index}`);
    return profile;
  }

  /**
   * `fn` with a read-only Store per configured data_dir (for reader grants), each opened on first
   * use and all closed after it.
   */
  private withReaders<T>(fn: (readers: ReadonlyMap<string, Store>) => T): T {
    const readers = new Map(this.dataDirs.map((dataDir) => [dataDir, openStore(dataDir, { mode: 'read' })]));
    try {
      return fn(readers);
    } finally {
      for (const store of readers.values()) store.close();
    }
  }

  /** The session of the profile's data directory, its Store waiting at most the request's busy timeout. */
  private sessionOf(profile: HubProfile): Session {
    let session = this.sessions.get(profile.dataDir);
    if (session === undefined) {
      session = { store: openStore(profile.dataDir, { mode: 'write' }), authorizations: new ProfileAuthorizations() };
      this.sessions.set(profile.dataDir, session);
    }
    session.store.authority().db.pragma(`busy_timeout = ${this.busyMs}`);
    session.store.journal(false)?.db.pragma(`busy_timeout = ${this.busyMs}`);
    return session;
  }

  private authorize(profile: HubProfile, token: string): GrantAuthorization {
    let session: Session;
    try {
      session = this.sessionOf(profile);
    } catch (error) {
      throw authenticationFailure(error);
    }
    return session.authorizations.authorize(profile, token, session.store);
  }
}

/** Post a reply; a refusal whose details cannot cross the thread boundary goes without them. */
function post(port: MessagePort, reply: TaskWorkerReply): void {
  try {
    port.postMessage(reply);
  } catch (error) {
    if (reply.kind !== 'refusal') throw error;
    port.postMessage({ ...reply, error: { ...reply.error, details: undefined } } satisfies TaskWorkerReply);
  }
}

/** Serve the requests of the main thread on `port`, one at a time in the order they arrive, until it says close. */
export function serveTaskCalls(port: MessagePort, data: TaskWorkerData): void {
  const runner = new TaskCallRunner(data);
  // An upload's import awaits (its review replay): the next request waits for it, as the facade's
  // synchronous calls wait for each other.
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (request: TaskWorkerRequest) => {
    queue = queue.then(async () => {
      if (request.kind === 'close') {
        runner.close();
        port.close();
        return;
      }
      const reply = await runner.handle(request);
      if (reply !== null) post(port, reply);
    });
  });
  post(port, { kind: 'ready' });
}

const started = workerData as Partial<TaskWorkerData> | null;
if (parentPort !== null && started?.kind === TASK_WORKER_KIND) serveTaskCalls(parentPort, started as TaskWorkerData);
