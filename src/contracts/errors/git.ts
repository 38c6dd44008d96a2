/**
 * The bridge to git: reading a git commit as a revision, writing revisions and landings as git commits.
 * The rows of docs/errors.md "git".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const GIT_ERRORS = {
  title: 'git',
  codes: {
    GIT_FAILED: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'A git command agentscm ran failed (git missing, a damaged repository, a full disk); the message ' +
        "carries git's own words; nothing was recorded on agentscm's side.",
    },
    GIT_REVISION_UNKNOWN: {
      exit: EXIT.INVALID,
      summary:
        'git cannot resolve the named revision, or it names no commit, in the given repository; nothing was read ' +
        'or written.',
    },
  },
} as const satisfies ErrorSection;
