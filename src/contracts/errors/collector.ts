/**
 * The command collector: recipes, review contexts, OCI runtime (src/collector/).
 * The rows of docs/errors.md "command collector (recipes, review contexts, OCI runtime)".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const COLLECTOR_ERRORS = {
  title: 'command collector (recipes, review contexts, OCI runtime)',
  codes: {
    RUNTIME_FLAGS_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The runtime flags are wrong: an empty value, no docker on PATH without --docker, or an executable that ' +
        'does not exist.',
    },
    RUNTIME_UNSUPPORTED_PLATFORM: {
      exit: EXIT.UNAVAILABLE,
      summary: 'Command execution needs a Unix host; source-only workflows still run.',
    },
    RUNTIME_UNAVAILABLE: { exit: EXIT.UNAVAILABLE, summary: 'The container engine does not answer on its socket.' },
    RUNTIME_API_UNSUPPORTED: {
      exit: EXIT.UNAVAILABLE,
      summary: 'The container engine speaks no Engine API version this build supports.',
    },
    RUNTIME_API_ERROR: {
      exit: EXIT.UNAVAILABLE,
      summary: 'The container engine answered a request with an unexpected error.',
    },
    IMAGE_NOT_FOUND: {
      exit: EXIT.UNAVAILABLE,
      summary: 'The recipe image is not present in the engine; images are never pulled.',
    },
    RECIPE_DIGEST_MISMATCH: {
      exit: EXIT.CONFLICT,
      summary: 'The recipe bytes in the revision do not match the digest the plan bound.',
    },
    RECIPE_WORKDIR_MISSING: {
      exit: EXIT.INVALID,
      summary: 'The recipe working directory is not a directory of the revision.',
    },
    CONTEXT_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No review context with that digest exists for the repository.' },
    CONTEXT_STALE: {
      exit: EXIT.CONFLICT,
      summary: "The review context no longer binds the Change's current version or the current policy epoch.",
    },
    CONTEXT_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'The review context binds a different revision, recipe, toolchain, environment or Change.',
    },
    CONTEXT_AMBIGUOUS: {
      exit: EXIT.INVALID,
      summary: "The Change's current version has several review contexts; the message lists them, pass --context.",
    },
    SNAPSHOT_UNSAFE: {
      exit: EXIT.UNAVAILABLE,
      summary: 'The snapshot parent directory is not owner-private (0700, not a symlink, no symlinked parent).',
    },
    COMMAND_ATTEMPT_NOT_FOUND: {
      exit: EXIT.INVALID,
      summary: 'No command attempt with that ID (or for that run and step).',
    },
    COMMAND_ATTEMPT_RUNNING: {
      exit: EXIT.CONFLICT,
      summary: 'A command attempt is still running (or was interrupted); recover it before continuing.',
    },
    COMMAND_ATTEMPT_CONFLICT: {
      exit: EXIT.CONFLICT,
      summary: 'The retained command attempt was reserved for a different request.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface CollectorErrorDetails {
  CONTEXT_AMBIGUOUS: { contexts: { context_digest: string; recipe_path: string }[] };
  COMMAND_ATTEMPT_RUNNING: { attempt_id: string };
  CONTEXT_MISMATCH: { fields: string[] };
  CONTEXT_NOT_FOUND: { step: string; recipe_path: string };
  CONTEXT_STALE: { current_version: string; policy_epoch: string };
  IMAGE_NOT_FOUND: { image: string; step?: string };
  RECIPE_WORKDIR_MISSING: { workdir: string; step?: string };
  RUNTIME_API_ERROR: { status?: number };
  RUNTIME_FLAGS_INVALID: { absolute: boolean };
}
