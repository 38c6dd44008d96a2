import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { readHubConfig } from '../../hub/config.js';
import { startHub } from '../../hub/server.js';

export default class HubServe extends BaseCommand {
  static override summary = 'Serve the agent-task facade over authenticated HTTP and MCP until SIGTERM or SIGINT.';
  static override description =
    'Reads the strict execution config v1 (--config: version, listen HOST:PORT — loopback 127.0.0.1 with a ' +
    'system-chosen port when absent — and agent_task_profiles pinning repository_id OWNER/NAME, profile_id, ' +
    "native_repository, an absolute data_dir, target and requirement_digest), checks each profile's store, " +
    'listens, and prints its URL http://ADDR:PORT/ as the first line on stdout ({"listen","url","dashboard"} ' +
    'with --json) and the dashboard URL on stderr; GET / redirects (302) to /ui/. Routes: ' +
    'POST /v1/hub/workspace/repositories/OWNER/NAME/profiles/PROFILE/agent-tasks with ' +
    '{"operation","input","subject"?}; POST …/agent-tasks/collector-upload with one signed transfer envelope (at ' +
    'most 16 MiB); POST /v1/hub/workspace/mcp?repository=OWNER/NAME&profile=PROFILE (MCP, one ' +
    'agentscm_task_<operation> tool per operation); POST /mcp (legacy read-only MCP for reader grants: ' +
    'agentscm_workflow_status); GET /v1/hub/health (storage ping, no authentication). Every other request needs ' +
    'Authorization: Bearer with a grant token (`agentscm grant create`); the actor comes from the grant, never ' +
    'from the request. JSON bodies are bounded to 512 KiB (413). One JSON access-log line per request goes to ' +
    'stderr, without tokens or bodies. SIGTERM or SIGINT stops accepting, lets in-flight requests finish and ' +
    'exits 0. The --data-dir flag is not used: each profile names its data_dir.';
  static override examples = [
    '<%= config.bin %> hub serve --config /etc/agentscm/hub.json',
    '<%= config.bin %> hub serve --config ./hub.json --json',
  ];
  static override flags = {
    config: Flags.string({
      description: 'The hub execution config v1 (JSON file).',
      required: true,
      helpValue: 'FILE',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(HubServe);
    const hub = await startHub(readHubConfig(flags.config));
    // The first stdout line is the hub's URL, so that a supervisor or test can read the port; the
    // dashboard's URL goes to stderr for the person who started it (docs/hub.md "Running the hub").
    // (oclif's log is silent under --json, so the lines are written directly.)
    const dashboard = `${hub.url}/ui/`;
    process.stdout.write(
      `${this.jsonEnabled() ? JSON.stringify({ listen: hub.address, url: hub.url, dashboard }) : `${hub.url}/`}\n`,
    );
    // Under --json stderr carries only the JSON access log; the dashboard is a field of the first line.
    if (!this.jsonEnabled()) process.stderr.write(`dashboard: ${dashboard}\n`);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        void hub.close().then(resolve);
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
  }
}
