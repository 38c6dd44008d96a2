/**
 * agent-state: envelope, operations, observed runs.
 * The rows of docs/errors.md "agent-state (envelope, operations, observed runs)".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const AGENT_STATE_ERRORS = {
  title: 'agent-state (envelope, operations, observed runs)',
  codes: {
    AGENT_STATE_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'An agent-state envelope or operation input breaks a rule beyond its schema (blocked reason, result, ' +
        'duplicate scope or agent).',
    },
    AGENT_STATE_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'Observations given to reconcile name different agents, backends or tasks.',
    },
    AGENT_STATE_CONFLICT: {
      exit: EXIT.CONFLICT,
      summary: 'Two observations of equal authority and revision disagree; reconcile cannot choose.',
    },
    AGENT_STATE_HOOK_SETTINGS_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'A Claude Code settings or Codex hooks file is not a JSON object agentscm can rewrite exactly; it was ' +
        'not changed.',
    },
    GIT_DIR_UNTRUSTED: {
      exit: EXIT.INVALID,
      summary:
        "The repository's .git is not a plain directory owned by the caller (a symlink, a gitdir file, another " +
        'owner) or its config is not a regular file owned by the caller; no further git command ran there and ' +
        'nothing was started.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface AgentStateErrorDetails {
  AGENT_STATE_CONFLICT: { indices: number[]; state_source: string; revision: string };
  AGENT_STATE_INVALID: { pointer: string; state?: string; path?: string; agent_id?: string };
  AGENT_STATE_MISMATCH: { index: number; field: string };
  GIT_DIR_UNTRUSTED: { root: string };
}
