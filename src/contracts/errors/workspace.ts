/**
 * Workspaces (src/workspace/).
 * The rows of docs/errors.md "workspace".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const WORKSPACE_ERRORS = {
  title: 'workspace',
  codes: {
    WORKSPACE_NOT_FOUND: { exit: EXIT.UNAVAILABLE, summary: 'The directory is not an initialized agentscm workspace.' },
    WORKSPACE_EXISTS: { exit: EXIT.CONFLICT, summary: 'The directory is already bound to a repository.' },
    WORKSPACE_SCAN_INCOMPLETE: {
      exit: EXIT.FAILED,
      summary: 'The workspace scan hit a bound; nothing was checkpointed.',
    },
    WORKSPACE_CHANGED: { exit: EXIT.CONFLICT, summary: 'The workspace changed while it was being read.' },
    WORKSPACE_OPERATION_PENDING: { exit: EXIT.CONFLICT, summary: 'An earlier workspace operation did not finish.' },
    WORKSPACE_BUSY: {
      exit: EXIT.CONFLICT,
      summary: 'Another command is writing the workspace; retry after it finishes.',
    },
    WORKSPACE_DATA_DIR_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'The workspace is bound to a different data directory than the one given.',
    },
    WORKSPACE_STATE_UNSAFE: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'The workspace state directory .agentscm, or a file in it, is a symlink or not a real directory or ' +
        'regular file; nothing was read or written through it.',
    },
    WORKSPACE_EXCLUDE_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The exclude list .agentscm/exclude is over its bounds, not UTF-8, or has a pattern that can never match; ' +
        'the message names the line; nothing was scanned.',
    },
    WORKSPACE_LOCK_LOST: {
      exit: EXIT.CONFLICT,
      summary:
        'The workspace lock file was removed or replaced while this command held it; the command stopped before ' +
        'recording anything more.',
    },
  },
} as const satisfies ErrorSection;
