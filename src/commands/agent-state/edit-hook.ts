import { Flags } from '@oclif/core';

import { BaseCommand, toAgentscmError } from '../_base.js';
import { runEditHook } from '../../agent-state/edit-hook.js';
import { readAgentStateInput } from '../../agent-state/input.js';

export default class AgentStateEditHook extends BaseCommand {
  static override summary =
    "PreToolUse hook (Claude Code, Codex): warn when an edited path lies in another active agent's write scope.";
  static override description =
    'Reads the PreToolUse hook input on stdin (session_id, cwd, tool_name, tool_input). The edited paths are ' +
    'tool_input.file_path, notebook_path or path, or the files an apply_patch patch adds, updates, deletes or ' +
    'moves to. Active agents (queued, working, idle, blocked) come from the agent-state file ({agents: ' +
    '[envelope…]}, default .agentscm/agent-state.json at the git root) and from the live holder of the ' +
    "repository's mutation lease (a running `agent-state run`). When a path lies in the write scope of another " +
    'agent, the hook prints {"systemMessage": …} once per session and path. It never blocks: it always exits 0, ' +
    'and any error allows the edit with one warning. Install it with `agentscm install-edit-hook`.';
  static override examples = [
    'echo ' +
      '\'{"session_id":"s1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Edit",' +
      '"tool_input":{"file_path":"/repo/src/a.ts"}}\' ' +
      '| <%= config.bin %> agent-state edit-hook --agent reviewer',
    '<%= config.bin %> agent-state edit-hook --agent builder --agents .agentscm/agent-state.json < hook-input.json',
  ];
  static override enableJsonFlag = false;
  static override flags = {
    agent: Flags.string({
      description: 'The agent this hook runs for; its own scopes never warn (also AGENTSCM_AGENT_ID).',
      env: 'AGENTSCM_AGENT_ID',
      helpValue: 'ID',
    }),
    agents: Flags.string({
      description:
        'The agent-state file {agents: [envelope…]} (also AGENTSCM_AGENT_STATE_FILE; default ' +
        '.agentscm/agent-state.json at the git root, when it exists).',
      env: 'AGENTSCM_AGENT_STATE_FILE',
      helpValue: 'FILE',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentStateEditHook);
    const outcome = runEditHook(readAgentStateInput('-'), {
      agentId: flags.agent ?? null,
      agentsFile: flags.agents ?? null,
    });
    process.stdout.write(outcome.stdout);
  }

  /** Fail open: whatever went wrong, the edit is allowed, with one warning. */
  override async catch(err: unknown): Promise<void> {
    const error = toAgentscmError(err);
    process.stdout.write(
      `${JSON.stringify({
        systemMessage:
          `agentscm edit-hook could not check this edit for contention (${error.code}: ${error.message}); ` +
          'the edit is allowed.',
      })}\n`,
    );
    process.exitCode = 0;
    return Promise.resolve();
  }
}
