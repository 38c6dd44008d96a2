/**
 * Dependency images for checks (docs/deps.md): `agentscm deps build` and the lockfile a command
 * step's dependency image was built from. The rows of docs/errors.md "deps".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const DEPS_ERRORS = {
  title: 'deps',
  codes: {
    DEPS_LOCKFILE_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The lockfile (or the package.json beside it) is missing, too large, not JSON or not an npm lockfile of ' +
        'version 2 or 3; nothing was installed or built.',
    },
    DEPS_INSTALL_SCRIPTS: {
      exit: EXIT.INVALID,
      summary:
        'The lockfile has packages with install scripts (hasInstallScript) and --allow-scripts was not given; ' +
        'nothing was installed or built.',
    },
    DEPS_INSTALL_FAILED: {
      exit: EXIT.UNAVAILABLE,
      summary:
        "npm ci on the operator's side failed or npm is missing (the message carries npm's last words); no image " +
        'was built.',
    },
    DEPS_IMAGE_NOT_BUILT: {
      exit: EXIT.FAILED,
      summary:
        'check add --deps npm found no dependency image for the workspace lockfile in the engine; nothing was ' +
        'written.',
    },
    DEPS_LOCKFILE_CHANGED: {
      exit: EXIT.FAILED,
      summary:
        "The revision's lockfile differs from the one the step's dependency image was built from (or the image " +
        'carries no lockfile digest); the step was refused before any container ran.',
    },
  },
} as const satisfies ErrorSection;
