/**
 * The hub's task worker (docs/hub.md "The task worker"): the one worker thread that runs the
 * agent-tasks route's facade work — the authorization of src/hub/auth.ts and callHubTask of
 * src/hub/task-call.ts — for the hub's life, while the main thread does the HTTP. It owns its own
 * connections and ProfileAuthorizations per data directory (a SQLite connection belongs to the
 * thread that opened it) and answers the requests of src/hub/task-worker-protocol.ts one at a
 * time, in the order they arrive: the facade is synchronous, so the calls stay serial as they
 * were on the main thread.
 *
 * This file is the worker's entry: the built CLI ships it as dist/hub/task-worker.js
 * (bin/bundle.js), the sources run it through tsx (src/hub/task-worker-client.ts). It serves only
 * when started as a task worker.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { encodeCanonicalText } from '../contracts/canonical-json.js';
import { AgentscmError } from '../contracts/errors.js';
import { openTaskConnections } from '../tasks/connections.js';
import type { TaskConnections } from '../tasks/connections.js';
import type { GrantAuthorization } from '../tasks/grant-guard.js';
import { ProfileAuthorizations } from './auth.js';
import type { HubProfile } from './config.js';
import { asAgentscmError } from './http-errors.js';
import { callHubTask, taskAnswer } from './task-call.js';
import { TASK_WORKER_KIND, wireErrorOf } from './task-worker-protocol.js';
import type { TaskWorkerData, TaskWorkerReply, TaskWorkerRequest } from './task-worker-protocol.js';

/** How many authorizations the worker holds for requests still reading their bodies; the oldest goes first. */
const HELD_LIMIT = 4096;
/** The exit code of the test fault injection (TaskWorkerData.exitOnOperation). */
export const INJECTED_EXIT_CODE = 70;

interface Session {
  readonly connections: TaskConnections;
  readonly authorizations: ProfileAuthorizations;
}

/** The worker's state: its connections and authorizations per data directory, and the held authorizations. */
export class TaskCallRunner {
  private readonly sessions = new Map<string, Session>();
  private readonly held = new Map<number, GrantAuthorization>();

  constructor(private readonly data: TaskWorkerData) {}

  /** The reply to one request (null for a request that has none). */
  handle(request: Exclude<TaskWorkerRequest, { kind: 'close' }>): TaskWorkerReply | null {
    if (request.kind === 'release') {
      this.held.delete(request.held);
      return null;
    }
    try {
      const profile = this.profileOf(request.profile);
      if (request.kind === 'authorize') {
        const authorization = this.authorize(profile, request.token);
        if (this.held.size >= HELD_LIMIT) this.held.delete(this.held.keys().next().value as number);
        this.held.set(request.id, authorization);
        return { kind: 'answer', id: request.id, body: null };
      }
      if (request.call.operation === this.data.exitOnOperation) process.exit(INJECTED_EXIT_CODE);
      const authorization = this.held.get(request.held) ?? this.authorize(profile, request.token);
      this.held.delete(request.held);
      const result = callHubTask(profile, authorization, request.call, this.sessionOf(profile).connections);
      return { kind: 'answer', id: request.id, body: encodeCanonicalText(taskAnswer(result) as unknown as Parameters<typeof encodeCanonicalText>[0]) };
    } catch (error) {
      if (request.kind === 'call') this.held.delete(request.held);
      return { kind: 'refusal', id: request.id, error: wireErrorOf(asAgentscmError(error)) };
    }
  }

  close(): void {
    this.held.clear();
    for (const session of this.sessions.values()) session.connections.close();
    this.sessions.clear();
  }

  private profileOf(index: number): HubProfile {
    const profile = this.data.profiles[index];
    if (profile === undefined) throw new AgentscmError('INTERNAL', `the task worker has no profile ${index}`);
    return profile;
  }

  private sessionOf(profile: HubProfile): Session {
    let session = this.sessions.get(profile.dataDir);
    if (session === undefined) {
      session = { connections: openTaskConnections(profile.dataDir), authorizations: new ProfileAuthorizations() };
      this.sessions.set(profile.dataDir, session);
    }
    return session;
  }

  private authorize(profile: HubProfile, token: string): GrantAuthorization {
    const session = this.sessionOf(profile);
    return session.authorizations.authorize(profile, token, session.connections);
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

/** Serve the requests of the main thread on `port` until it says close. */
export function serveTaskCalls(port: MessagePort, data: TaskWorkerData): void {
  const runner = new TaskCallRunner(data);
  port.on('message', (request: TaskWorkerRequest) => {
    if (request.kind === 'close') {
      runner.close();
      port.close();
      return;
    }
    const reply = runner.handle(request);
    if (reply !== null) post(port, reply);
  });
  post(port, { kind: 'ready' });
}

const started = workerData as Partial<TaskWorkerData> | null;
if (parentPort !== null && started?.kind === TASK_WORKER_KIND) serveTaskCalls(parentPort, started as TaskWorkerData);
