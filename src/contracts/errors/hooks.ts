/**
 * Agent hooks (src/hooks/).
 * The rows of docs/errors.md "hooks".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const HOOK_ERRORS = {
  title: 'hooks',
  codes: {
    HOOK_PAYLOAD_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The Stop hook input on stdin is not a Claude Code or Codex Stop payload (strict JSON; Codex: its input ' +
        'schema); the hook exits 1, which the client treats as non-blocking, and did nothing.',
    },
    HOOK_COUNTER_UNAVAILABLE: {
      exit: EXIT.FAILED,
      summary:
        "The Stop hook's continuation counter cannot be read, parsed or written; the hook exits 1 (non-blocking) " +
        'and did none of its work.',
    },
    HOOK_SETTINGS_INVALID: {
      exit: EXIT.INVALID,
      summary:
        "A Claude Code settings or Codex hooks file is not a JSON object valid under the client's schema that " +
        'agentscm can rewrite exactly; install-stop did not change it.',
    },
    HOOK_QUALIFICATION_FAILED: {
      exit: EXIT.UNAVAILABLE,
      summary:
        "The agent-owned Stop hook's qualification request failed: the service is offline or unreachable, did " +
        'not answer within 30 seconds, or answered an error other than 401/403; the hook blocks.',
    },
    HOOK_TOKEN_REJECTED: {
      exit: EXIT.FAILED,
      summary:
        "The service answered the agent-owned Stop hook's qualification request with 401 or 403 (the grant was " +
        'revoked or rotated, or does not cover the repository); the hook blocks.',
    },
    HOOK_ANSWER_MALFORMED: {
      exit: EXIT.FAILED,
      summary:
        "The service's answer to the agent-owned Stop hook is not a valid qualification answer (larger than its " +
        "bound, not strict JSON, not the agent-tasks envelope, or breaking the answer's rules); the hook blocks.",
    },
    INSTRUCTION_BLOCK_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'An instruction file (AGENTS.md, .cursor/rules/agentscm.mdc, .github/copilot-instructions.md) has ' +
        'unbalanced or repeated agentscm markers, or is not a regular file; no instruction file was changed.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface HookErrorDetails {
  HOOK_QUALIFICATION_FAILED: { http_status: number };
  HOOK_TOKEN_REJECTED: { http_status: number };
}
