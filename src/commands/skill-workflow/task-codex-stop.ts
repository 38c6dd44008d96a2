import type { StopClient } from '../../hooks/stop/payload.js';
import SkillWorkflowTaskStop from './task-stop.js';

export default class SkillWorkflowTaskCodexStop extends SkillWorkflowTaskStop {
  static override summary =
    'Stop hook for Codex, agent-owned: pass only when the hub qualifies exactly the checkpointed, clean workspace.';
  static override description =
    'The Codex form of `skill-workflow task-stop`: the same reads, the one qualification call and the same pass ' +
    "conditions, with Codex's Stop input (exactly its published input schema) and output ({} to pass, " +
    '{"decision":"block","reason":TEXT} to block, each checked against Codex\'s output schema before it is ' +
    'printed). Malformed stdin, a bad command line or a counter error exit 1 (non-blocking). Install it with ' +
    '`agentscm install-stop --client codex --mode task-stop`.';
  static override examples = [
    '<%= config.bin %> --data-dir /srv/agentscm skill-workflow task-codex-stop fix-parser --endpoint ' +
      'http://127.0.0.1:8787 --repository acme/widgets --profile default --token-file ' +
      '/home/me/.config/agentscm/agent.token --workspace /repo < stop-payload.json',
  ];
  // oclif reads a command's arguments and flags from the class itself, not from its parent.
  static override args = SkillWorkflowTaskStop.args;
  static override flags = SkillWorkflowTaskStop.flags;

  protected override readonly client: StopClient = 'codex';
}
