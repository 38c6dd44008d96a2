/**
 * `agentscm hub serve` (docs/wire.md "Hub"; docs/hub.md "Routes" and "Running the hub"): Node's own
 * `http` server with five routes and no router — the route table is a handful of fixed paths, and
 * owning the socket keeps the body bound, the timeouts and the access log in one place
 * (docs/hub.md "Why Node's http and not a router").
 *
 * Order of every authenticated request: route → bearer header (401) → declared body size (413)
 * → profile (404) → grant (401/403) → body, streamed and bounded (413) → strict decoding (400)
 * → the task facade. Nothing is buffered for a caller that is not authenticated.
 *
 * The agent-tasks route's grant and facade steps run in the hub's task worker thread
 * (src/hub/task-worker-client.ts, docs/hub.md "The task worker"); this thread does its HTTP.
 */
import { realpathSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { AgentscmError } from '../contracts/errors.js';
import { getRepository } from '../native/repositories.js';
import { isStoreInitialized, readTransaction } from '../native/store.js';
import { openStore } from '../tasks/store.js';
import { UploadBudget } from './body.js';
import type { HubConfig } from './config.js';
import { ForgePublisher, type ForgePublisherOptions } from './forge-status.js';
import { registerPrivatePaths } from './http-errors.js';
import { createHubMcpHandler } from './mcp.js';
import type { Exchange, HubContext, HubRoute } from './routes/context.js';
import { serveDashboard } from './routes/dashboard.js';
import { serveHealth } from './routes/health.js';
import { serveMcp } from './routes/mcp.js';
import { serveObjects } from './routes/objects.js';
import { notFound, sendError } from './routes/respond.js';
import { serveTasks } from './routes/tasks.js';
import { serveUpload } from './routes/upload.js';
import { TaskWorkerClient, type TaskWorkerOptions } from './task-worker-client.js';

/** The route families in the order they are tried; the first that takes a request answers it. */
const ROUTES: readonly HubRoute[] = [serveDashboard, serveHealth, serveTasks, serveUpload, serveObjects, serveMcp];

export interface HubServerOptions {
  /** Time a client has to send its request headers (slow-loris bound); default 10 s. */
  readonly headersTimeoutMs?: number;
  /** Time a client has to send its whole request, headers and body; default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Where the access log goes, one JSON line per request; default stderr. */
  readonly accessLog?: (line: string) => void;
  /** Timing of the forge publisher (profiles with publish_forge_status); defaults in src/hub/forge-status.ts. */
  readonly forge?: Omit<ForgePublisherOptions, 'log' | 'readStore'>;
  /** Test fault injection of the task worker (src/hub/task-worker-client.ts). */
  readonly taskWorker?: TaskWorkerOptions;
  /** What upload bodies in flight may take (default UPLOAD_BUDGET, src/hub/body.ts); past it HUB_UPLOAD_BUSY. */
  readonly uploadBudget?: { readonly bytes: number; readonly uploads: number };
}

export interface RunningHub {
  /** `HOST:PORT` actually bound (the port the system chose for port 0). */
  readonly address: string;
  /** `http://HOST:PORT` (IPv6 hosts in brackets). */
  readonly url: string;
  /** Stop accepting, let in-flight requests finish, then resolve. */
  close(): Promise<void>;
}

/** Check every profile's store and repository once at start-up (HUB_PROFILE_UNAVAILABLE). */
function checkProfiles(config: HubConfig): void {
  for (const profile of config.profiles) {
    const unavailable = (why: string): AgentscmError =>
      new AgentscmError('HUB_PROFILE_UNAVAILABLE', `profile ${profile.repositoryId}/${profile.profileId}: ${why}`, {
        hint: 'point data_dir at the native data directory that holds native_repository',
      });
    if (!isStoreInitialized(profile.dataDir)) throw unavailable(`no native store in ${profile.dataDir}`);
    const store = openStore(profile.dataDir, { mode: 'read' });
    try {
      const auth = store.authority();
      readTransaction(auth, () => getRepository(auth, profile.nativeRepository));
    } catch (error) {
      if (error instanceof AgentscmError && error.code === 'REPOSITORY_NOT_FOUND')
        throw unavailable(`the store has no repository ${profile.nativeRepository}`);
      throw error;
    } finally {
      store.close();
    }
  }
}

/**
 * The filesystem paths of the config that no answer may name: each data_dir (and its real path),
 * each forge token file.
 */
function privatePathsOf(config: HubConfig): string[] {
  const paths: string[] = [];
  for (const profile of config.profiles) {
    paths.push(profile.dataDir);
    try {
      paths.push(realpathSync(profile.dataDir));
    } catch {
      // A data_dir that cannot be resolved is checked (and refused) by checkProfiles.
    }
    if (profile.forge) paths.push(profile.forge.token_file);
  }
  return paths;
}

/** Start the hub on the config's address; resolves once it listens. */
export async function startHub(config: HubConfig, options: HubServerOptions = {}): Promise<RunningHub> {
  checkProfiles(config);
  registerPrivatePaths(privatePathsOf(config));
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 30_000, headersTimeout);
  const log = options.accessLog ?? ((line: string) => process.stderr.write(`${line}\n`));
  const mcp = createHubMcpHandler(() => undefined);
  const forge = new ForgePublisher(config.profiles, {
    ...options.forge,
    log,
    readStore: (profile) => openStore(profile.dataDir, { mode: 'read' }),
  });
  let closing = false;
  const uploads = new UploadBudget(options.uploadBudget);
  // No route runs store work on this thread (docs/hub.md "A busy store"): the task worker takes
  // what writes (agent-tasks, upload imports, workspace MCP tools), the read worker what only
  // reads (dashboard, legacy MCP, health), so a dashboard read never queues behind a writer.
  const tasks = new TaskWorkerClient(config.profiles, options.taskWorker);
  const reads = new TaskWorkerClient(
    config.profiles,
    { busyBudgetMs: options.taskWorker?.busyBudgetMs },
    "the hub's read worker",
  );
  try {
    await Promise.all([tasks.start(), reads.start()]);
  } catch (error) {
    await Promise.all([tasks.close(), reads.close()]);
    throw error;
  }

  const hub: HubContext = { config, tasks, reads, forge, uploads, mcp };
  const handle = async (req: IncomingMessage, res: ServerResponse, exchange: Exchange): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://hub.invalid');
    if (closing) res.setHeader('connection', 'close');
    for (const route of ROUTES) if (await route(hub, req, res, url, exchange)) return;
    throw notFound(req, url.pathname);
  };

  const server: Server = createServer(
    {
      headersTimeout,
      requestTimeout,
      // How often Node checks those two timeouts; a slow client is cut within this of its bound.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
      keepAliveTimeout: 5_000,
    },
    (req, res) => {
      const started = process.hrtime.bigint();
      const exchange: Exchange = { route: 'none', code: null };
      const remote = req.socket.remoteAddress ?? null;
      res.on('close', () => {
        // Method, route name, status, code and timing only: never a header, token, query or body.
        log(
          JSON.stringify({
            time: new Date().toISOString(),
            method: req.method ?? '',
            route: exchange.route,
            // null when no answer was sent (the client went away first): never a status not sent.
            status: res.headersSent ? res.statusCode : null,
            code: exchange.code,
            duration_ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
            remote,
          }),
        );
      });
      handle(req, res, exchange).catch((error: unknown) => sendError(res, exchange, error, log));
    },
  );

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await Promise.all([tasks.close(), reads.close()]);
    throw error;
  }
  forge.start();
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    address: `${host}:${bound.port}`,
    url: `http://${host}:${bound.port}`,
    close: async (): Promise<void> => {
      closing = true;
      // In-flight requests finish; a connection still open after the request timeout (which
      // already bounds every request) is cut, so a stalled client cannot hold the shutdown.
      const cut = setTimeout(() => server.closeAllConnections(), requestTimeout);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      clearTimeout(cut);
      // Every request is answered by now; the worker closes its connections and ends.
      await Promise.all([tasks.close(), reads.close()]);
      await forge.close();
      await mcp.close();
    },
  };
}
