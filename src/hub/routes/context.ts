/**
 * What every route of the hub is given (src/hub/server.ts composes them): the config, the two
 * worker threads that run the store work, the forge publisher, the upload budget and the MCP
 * handler. A route is one function that takes the request when its path and method are its own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpHttpHandler } from '@modelcontextprotocol/server';

import type { UploadBudget } from '../body.js';
import type { HubConfig } from '../config.js';
import type { ForgePublisher } from '../forge-status.js';
import type { TaskWorkerClient } from '../task-worker-client.js';

export interface HubContext {
  readonly config: HubConfig;
  /** The task worker: what writes (agent-tasks, upload imports, workspace MCP tools). */
  readonly tasks: TaskWorkerClient;
  /** The read worker: what only reads (dashboard, legacy MCP, health). */
  readonly reads: TaskWorkerClient;
  readonly forge: ForgePublisher;
  readonly uploads: UploadBudget;
  readonly mcp: McpHttpHandler;
}

/** What the access log says of one request: its route's name and the code of its refusal. */
export interface Exchange {
  route: string;
  code: string | null;
}

/** A route family: serves the request and answers true when the path and method are its own, else false. */
export type HubRoute = (
  hub: HubContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  exchange: Exchange,
) => Promise<boolean>;
