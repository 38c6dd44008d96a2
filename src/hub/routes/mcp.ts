/**
 * The MCP endpoints' routes (src/hub/mcp.ts builds their servers): `POST /v1/hub/workspace/mcp`,
 * whose tools run in the task worker, and the legacy `POST /mcp`, whose one read-only tool runs in
 * the read worker. The grant is checked before the body is read; the SDK's answer streams through.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';

import { AgentscmError } from '../../contracts/errors.js';
import { HUB_JSON_BODY_MAX_BYTES } from '../../contracts/hub-config.js';
import { bearerToken } from '../auth.js';
import { readBoundedBody, refuseDeclaredLength } from '../body.js';
import { legacyServer, toolAnswerOfText, workspaceServer, type McpServerOf } from '../mcp.js';
import { sendWebResponse } from '../web-response.js';
import type { HubContext, HubRoute } from './context.js';
import { profileOf } from './profiles.js';

export const WORKSPACE_MCP_PATH = '/v1/hub/workspace/mcp';
export const LEGACY_MCP_PATH = '/mcp';

async function mcpRoute(
  hub: HubContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  serverOf: (token: string) => Promise<McpServerOf>,
): Promise<void> {
  const token = bearerToken(req);
  refuseDeclaredLength(req, HUB_JSON_BODY_MAX_BYTES);
  const of = await serverOf(token);
  const body = await readBoundedBody(req, HUB_JSON_BODY_MAX_BYTES);
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
  const response = await hub.mcp.fetch(new Request(url, { method: 'POST', headers, body, signal: gone.signal }), {
    authInfo,
  });
  await sendWebResponse(res, response);
}

// The grant is checked in the task worker before the body is read; each tool call then runs
// there too, authorized again (from the worker's cache while the authority is unchanged).
const workspaceMcp =
  (hub: HubContext, url: URL) =>
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
    const profile = profileOf(hub.config, repositoryId, profileId);
    const index = hub.config.profiles.indexOf(profile);
    hub.tasks.release(await hub.tasks.authorize(index, token));
    hub.forge.poke(profile);
    return () => workspaceServer(async (call) => toolAnswerOfText(await hub.tasks.call(0, index, token, call, 'tool')));
  };

const legacyMcp =
  (hub: HubContext) =>
  async (token: string): Promise<McpServerOf> => {
    await hub.reads.reader(token, 'the legacy /mcp endpoint');
    return () => legacyServer(async (runId) => toolAnswerOfText(await hub.reads.workflowStatus(token, runId)));
  };

export const serveMcp: HubRoute = async (hub, req, res, url, exchange) => {
  if (req.method !== 'POST') return false;
  if (url.pathname === WORKSPACE_MCP_PATH) {
    exchange.route = 'workspace-mcp';
    await mcpRoute(hub, req, res, url, workspaceMcp(hub, url));
    return true;
  }
  if (url.pathname === LEGACY_MCP_PATH) {
    exchange.route = 'legacy-mcp';
    await mcpRoute(hub, req, res, url, legacyMcp(hub));
    return true;
  }
  return false;
};
