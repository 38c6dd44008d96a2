/**
 * `agentscm hub serve` (docs/wire.md "Hub"; spec "Workspace HTTP and MCP adapter" and "Selected
 * task-only operating profile"): Node's own `http` server with five routes and no router — the
 * route table is a handful of fixed paths, and owning the socket keeps the body bound, the
 * timeouts and the access log in one place (docs/hub.md "Why Node's http and not a router").
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
import type { AuthInfo } from '@modelcontextprotocol/server';

import { TRANSFER_LIMITS } from '../contracts/collector/transfer.js';
import { AgentscmError } from '../contracts/errors.js';
import { HUB_JSON_BODY_MAX_BYTES, hubTaskRequestDecoder } from '../contracts/hub-config.js';
import { getRepository } from '../native/repositories.js';
import { isStoreInitialized, openAuthority, readTransaction } from '../native/store.js';
import { bearerToken } from './auth.js';
import { lingerAfterRefusal, readBoundedBody, readTransferBody, refuseDeclaredLength, UploadBudget } from './body.js';
import type { HubConfig, HubProfile } from './config.js';
import { ForgePublisher, type ForgePublisherOptions } from './forge-status.js';
import {
  asAgentscmError,
  errorBody,
  httpStatusOf,
  messageWithheld,
  registerPrivatePaths,
  retryAfterOf,
} from './http-errors.js';
import { createHubMcpHandler, legacyServer, toolAnswerOfText, workspaceServer, type McpServerOf } from './mcp.js';
import { TaskWorkerClient, type TaskWorkerOptions } from './task-worker-client.js';
import { isUiApiPath, type UiAnswer } from './ui-api.js';
import { UI_PREFIX, UI_SECURITY_HEADERS, uiFile } from './ui-routes.js';
import { sendWebResponse } from './web-response.js';

export const HEALTH_PATH = '/v1/hub/health';
export const WORKSPACE_MCP_PATH = '/v1/hub/workspace/mcp';
export const LEGACY_MCP_PATH = '/mcp';
const TASKS_ROUTE = /^\/v1\/hub\/workspace\/repositories\/([^/]+)\/([^/]+)\/profiles\/([^/]+)\/agent-tasks$/;
const UPLOAD_ROUTE =
  /^\/v1\/hub\/workspace\/repositories\/([^/]+)\/([^/]+)\/profiles\/([^/]+)\/agent-tasks\/collector-upload$/;
/** The upload route's bound: one whole transfer envelope (docs/wire.md "Collector transfer envelope v1"). */
export const UPLOAD_BODY_MAX_BYTES = TRANSFER_LIMITS.maxEnvelopeBytes;

export interface HubServerOptions {
  /** Time a client has to send its request headers (slow-loris bound); default 10 s. */
  readonly headersTimeoutMs?: number;
  /** Time a client has to send its whole request, headers and body; default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Where the access log goes, one JSON line per request; default stderr. */
  readonly accessLog?: (line: string) => void;
  /** Timing of the forge publisher (profiles with publish_forge_status); defaults in src/hub/forge-status.ts. */
  readonly forge?: Omit<ForgePublisherOptions, 'log'>;
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

interface Exchange {
  route: string;
  code: string | null;
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  close = false,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...(close ? { connection: 'close' } : {}),
    ...headers,
  });
  res.end(body);
}

function sendError(res: ServerResponse, exchange: Exchange, error: unknown, log: (line: string) => void): void {
  const refused = asAgentscmError(error);
  exchange.code = refused.code;
  const status = httpStatusOf(refused.code);
  // A server-side failure's own message may name files: the client gets its code only, the
  // hub's log the message (docs/hub.md "What an answer never says").
  if (messageWithheld(refused)) {
    log(
      JSON.stringify({
        time: new Date().toISOString(),
        event: 'refusal_detail',
        route: exchange.route,
        code: refused.code,
        message: refused.message.slice(0, 4000),
      }),
    );
  }
  const retryAfter = retryAfterOf(refused.code);
  // A refused body is left unread: close the connection instead of draining it (after a short
  // linger, so that a client still sending reads the answer).
  const unread = !res.req.complete;
  if (unread && !res.headersSent) lingerAfterRefusal(res.req);
  send(
    res,
    status,
    errorBody(refused),
    status === 413 || status === 401 || unread,
    retryAfter === null ? {} : { 'retry-after': retryAfter },
  );
}

function notFound(req: IncomingMessage, path: string): AgentscmError {
  return new AgentscmError('HUB_ROUTE_NOT_FOUND', `no hub route ${req.method ?? ''} ${path.slice(0, 200)}`, {
    hint: 'see docs/hub.md for the routes',
  });
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Check every profile's store and repository once at start-up (HUB_PROFILE_UNAVAILABLE). */
function checkProfiles(config: HubConfig): void {
  for (const profile of config.profiles) {
    const unavailable = (why: string): AgentscmError =>
      new AgentscmError('HUB_PROFILE_UNAVAILABLE', `profile ${profile.repositoryId}/${profile.profileId}: ${why}`, {
        hint: 'point data_dir at the native data directory that holds native_repository',
      });
    if (!isStoreInitialized(profile.dataDir)) throw unavailable(`no native store in ${profile.dataDir}`);
    const auth = openAuthority(profile.dataDir, { mode: 'read' });
    try {
      readTransaction(auth, () => getRepository(auth, profile.nativeRepository));
    } catch (error) {
      if (error instanceof AgentscmError && error.code === 'REPOSITORY_NOT_FOUND')
        throw unavailable(`the store has no repository ${profile.nativeRepository}`);
      throw error;
    } finally {
      auth.close();
    }
  }
}

/** How long health waits for the read worker's read of each store before it answers STORE_BUSY. */
export const HEALTH_LIMIT_MS = 1_000;

/** The filesystem paths of the config that no answer may name: each data_dir (and its real path), each forge token file. */
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
  const forge = new ForgePublisher(config.profiles, { ...options.forge, log });
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

  const profileOf = (repositoryId: string, profileId: string): HubProfile => {
    const profile = config.profiles.find((p) => p.repositoryId === repositoryId && p.profileId === profileId);
    if (profile === undefined) {
      throw new AgentscmError(
        'HUB_PROFILE_NOT_FOUND',
        `no agent task profile ${profileId.slice(0, 128)} for repository ${repositoryId.slice(0, 300)} on this hub`,
        {
          hint: 'use a repository and profile of the hub execution config',
        },
      );
    }
    return profile;
  };

  const readJson = async (req: IncomingMessage): Promise<Buffer> => readBoundedBody(req, HUB_JSON_BODY_MAX_BYTES);

  const routeProfile = (req: IncomingMessage, match: RegExpExecArray): HubProfile => {
    const [owner, name, profileId] = [
      decodeSegment(match[1] ?? ''),
      decodeSegment(match[2] ?? ''),
      decodeSegment(match[3] ?? ''),
    ];
    if (owner === null || name === null || profileId === null) throw notFound(req, match[0]);
    return profileOf(`${owner}/${name}`, profileId);
  };

  // The grant and the facade call run in the task worker, in the order of the steps above: the
  // worker authorizes before the body is read and holds the authorization for the call.
  const taskRoute = async (req: IncomingMessage, res: ServerResponse, match: RegExpExecArray): Promise<void> => {
    const token = bearerToken(req);
    refuseDeclaredLength(req, HUB_JSON_BODY_MAX_BYTES);
    const profile = routeProfile(req, match);
    const index = config.profiles.indexOf(profile);
    const held = await tasks.authorize(index, token);
    let request: ReturnType<typeof hubTaskRequestDecoder.decode>;
    try {
      request = hubTaskRequestDecoder.decode(await readJson(req), HUB_JSON_BODY_MAX_BYTES);
    } catch (error) {
      tasks.release(held);
      throw error;
    }
    const answer = await tasks.call(held, index, token, {
      operation: request.operation,
      input: request.input,
      subject: request.subject,
    });
    forge.poke(profile);
    send(res, 200, answer);
  };

  // The signed transfer envelope as bytes (application/octet-stream), at most 16 MiB, imported
  // by the same core as a local `agent-task upload`; the answer is the import's view, as there.
  const uploadRoute = async (req: IncomingMessage, res: ServerResponse, match: RegExpExecArray): Promise<void> => {
    const token = bearerToken(req);
    refuseDeclaredLength(req, UPLOAD_BODY_MAX_BYTES);
    const profile = routeProfile(req, match);
    const index = config.profiles.indexOf(profile);
    // The grant in the task worker before the body is read, the import there after (as the agent-tasks route).
    const held = await tasks.authorize(index, token);
    let envelope: Uint8Array;
    // Checked as it streams in (a bad magic, header length or header is refused at once, the
    // rest never read), and admitted while the uploads in flight fit the budget (HUB_UPLOAD_BUSY).
    let release: (() => void) | undefined;
    try {
      envelope = await readTransferBody(req, (declaredLength) => {
        release = uploads.take(declaredLength);
      });
    } catch (error) {
      release?.();
      tasks.release(held);
      throw error;
    }
    try {
      // Only the envelope's own bytes cross to the worker (a view into a larger buffer would copy all of it).
      const own =
        envelope.byteOffset === 0 && envelope.byteLength === envelope.buffer.byteLength
          ? envelope
          : new Uint8Array(envelope);
      const view = await tasks.upload(held, index, token, own);
      forge.poke(profile);
      send(res, 200, view);
    } finally {
      release?.();
    }
  };

  const mcpRoute = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    serverOf: (token: string) => Promise<McpServerOf>,
  ): Promise<void> => {
    const token = bearerToken(req);
    refuseDeclaredLength(req, HUB_JSON_BODY_MAX_BYTES);
    const of = await serverOf(token);
    const body = await readJson(req);
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      if (
        value === undefined ||
        key === 'authorization' ||
        key === 'content-length' ||
        key === 'connection' ||
        key === 'transfer-encoding'
      )
        continue;
      headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    const authInfo: AuthInfo = {
      token: '(verified by the hub)',
      clientId: 'agentscm-hub',
      scopes: [],
      extra: { serverOf: of },
    };
    // The SDK's answer is streamed through, headers first (an SSE answer may stay open); a
    // client that goes away aborts the request, which ends the SDK's side.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const response = await mcp.fetch(new Request(url, { method: 'POST', headers, body, signal: gone.signal }), {
      authInfo,
    });
    await sendWebResponse(res, response);
  };

  // The grant is checked in the task worker before the body is read; each tool call then runs
  // there too, authorized again (from the worker's cache while the authority is unchanged).
  const workspaceMcp =
    (url: URL) =>
    async (token: string): Promise<McpServerOf> => {
      const repositoryId = url.searchParams.get('repository');
      const profileId = url.searchParams.get('profile');
      if (repositoryId === null || profileId === null) {
        throw new AgentscmError(
          'HUB_PROFILE_NOT_FOUND',
          'the workspace MCP endpoint needs ?repository=OWNER/NAME&profile=ID',
          { hint: 'add both query parameters' },
        );
      }
      const profile = profileOf(repositoryId, profileId);
      const index = config.profiles.indexOf(profile);
      tasks.release(await tasks.authorize(index, token));
      forge.poke(profile);
      return () => workspaceServer(async (call) => toolAnswerOfText(await tasks.call(0, index, token, call, 'tool')));
    };

  const legacyMcp = async (token: string): Promise<McpServerOf> => {
    await reads.reader(token, 'the legacy /mcp endpoint');
    return () => legacyServer(async (runId) => toolAnswerOfText(await reads.workflowStatus(token, runId)));
  };

  // The dashboard (docs/dashboard.md): its static files and its read-only JSON routes, all GET,
  // all with the dashboard's security headers; the JSON routes take a reader grant only.
  const sendUi = (res: ServerResponse, answer: UiAnswer): void => {
    const body = answer.kind === 'json' ? Buffer.from(answer.body) : answer.body;
    res.writeHead(200, {
      ...UI_SECURITY_HEADERS,
      'content-type': answer.kind === 'json' ? 'application/json' : 'application/octet-stream',
      'content-length': body.byteLength,
      ...(answer.kind === 'download' ? { 'content-disposition': `attachment; filename="${answer.filename}"` } : {}),
    });
    res.end(body);
  };

  // The reader grant, the profile and the view are read in the read worker, in that order.
  const uiApiRoute = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    exchange: Exchange,
  ): Promise<boolean> => {
    if (!isUiApiPath(url.pathname)) return false;
    exchange.route = 'ui-api';
    const answer = await reads.ui(bearerToken(req), { pathname: url.pathname, search: url.search, nowMs: Date.now() });
    sendUi(
      res,
      answer.kind === 'json'
        ? answer
        : {
            kind: 'download',
            body: Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength),
            filename: answer.filename,
          },
    );
    return true;
  };

  // A read of each store in the read worker, bounded: a worker busy with a long dashboard read
  // makes health answer STORE_BUSY (503, Retry-After) rather than wait.
  const health = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AgentscmError('STORE_BUSY', `the stores did not answer health's read within ${HEALTH_LIMIT_MS} ms`),
          ),
        HEALTH_LIMIT_MS,
      );
    });
    try {
      await Promise.race([reads.ping(), limit]);
    } finally {
      clearTimeout(timer);
    }
  };

  const uiStaticRoute = async (res: ServerResponse, url: URL, exchange: Exchange): Promise<boolean> => {
    if (url.pathname === '/ui') {
      exchange.route = 'ui';
      res.writeHead(308, { ...UI_SECURITY_HEADERS, location: UI_PREFIX, 'content-length': 0 });
      res.end();
      return true;
    }
    const file = await uiFile(url.pathname);
    if (file === null) return false;
    exchange.route = 'ui';
    res.writeHead(200, { ...UI_SECURITY_HEADERS, 'content-type': file.type, 'content-length': file.body.byteLength });
    res.end(file.body);
    return true;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, exchange: Exchange): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://hub.invalid');
    if (closing) res.setHeader('connection', 'close');
    if (
      req.method === 'GET' &&
      ((await uiApiRoute(req, res, url, exchange)) || (await uiStaticRoute(res, url, exchange)))
    )
      return;
    if (url.pathname === HEALTH_PATH && req.method === 'GET') {
      exchange.route = 'health';
      await health();
      send(res, 200, '{"status":"ok"}');
      return;
    }
    if (req.method === 'POST') {
      const match = TASKS_ROUTE.exec(url.pathname);
      if (match !== null) {
        exchange.route = 'agent-tasks';
        await taskRoute(req, res, match);
        return;
      }
      const upload = UPLOAD_ROUTE.exec(url.pathname);
      if (upload !== null) {
        exchange.route = 'collector-upload';
        await uploadRoute(req, res, upload);
        return;
      }
      if (url.pathname === WORKSPACE_MCP_PATH) {
        exchange.route = 'workspace-mcp';
        await mcpRoute(req, res, url, workspaceMcp(url));
        return;
      }
      if (url.pathname === LEGACY_MCP_PATH) {
        exchange.route = 'legacy-mcp';
        await mcpRoute(req, res, url, legacyMcp);
        return;
      }
    }
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
