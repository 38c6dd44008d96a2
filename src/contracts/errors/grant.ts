/**
 * Grants and collector profiles.
 * The rows of docs/errors.md "grants and collector profiles".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const GRANT_ERRORS = {
  title: 'grants and collector profiles',
  codes: {
    GRANT_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No grant with that id in the native store.' },
    GRANT_REVOKED: { exit: EXIT.CONFLICT, summary: 'The grant was revoked; it can be neither rotated nor used again.' },
    GRANT_TOKEN_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The token file does not hold exactly one token (agentscm_ and 43 base64url characters, optionally one ' +
        'newline).',
    },
    GRANT_TOKEN_REJECTED: {
      exit: EXIT.INVALID,
      summary:
        'The token belongs to no live grant: unknown, rotated away, or its grant revoked; nothing was read or changed.',
    },
    GRANT_TOKEN_FILE_EXISTS: {
      exit: EXIT.CONFLICT,
      summary: 'The token file already exists; a token file is never overwritten.',
    },
    GRANT_TOKEN_FILE_UNSAFE: {
      exit: EXIT.INVALID,
      summary:
        'A token file is accessible to group or others, or it or a directory on its path could be replaced by ' +
        'another user (owned by neither you nor root, or writable by group or others without the sticky bit), or ' +
        'the directory of a new token file is not a directory; nothing was read or written.',
    },
    GRANT_NOT_LIVE: {
      exit: EXIT.CONFLICT,
      summary: 'The originating grant was revoked or rotated since the operation began; nothing was changed.',
    },
    COLLECTOR_PROFILE_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No installed collector profile with that id.' },
    COLLECTOR_PROFILE_AMBIGUOUS: {
      exit: EXIT.INVALID,
      summary: 'A claim named no profile and profiles are installed for several steps; pass --step or --profile.',
    },
    COLLECTOR_PROFILE_BINDING_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        'The profile names a registration whose repository, workflow profile, step, epoch or key differs from ' +
        'the profile.',
    },
    COLLECTOR_PROFILE_STEP_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The profile step is not a command step of an installed requirement of the repository that binds the ' +
        'profile recipe_digest.',
    },
    COLLECTOR_PROFILE_RECIPE_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'The profile recipe is not the recipe its recipe_digest names, decoded.',
    },
    COLLECTOR_SETUP_STEP_NOT_FOUND: {
      exit: EXIT.INVALID,
      summary: "The target's installed requirement has no step with that id; nothing was created or changed.",
    },
    COLLECTOR_SETUP_STEP_NOT_COMMAND: {
      exit: EXIT.INVALID,
      summary:
        'The step is not a command step; collector add and profile create build command profiles only, and ' +
        'nothing was created or changed.',
    },
    COLLECTOR_SETUP_NOT_ENROLLED: {
      exit: EXIT.INVALID,
      summary: 'The key has no current enrollment for the step, so no profile can bind it.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface GrantErrorDetails {
  COLLECTOR_SETUP_NOT_ENROLLED: { verification_key_id: string; step_id: string };
  COLLECTOR_SETUP_STEP_NOT_COMMAND: { step_id: string; kind: string };
  COLLECTOR_SETUP_STEP_NOT_FOUND: { step_id: string };
  COLLECTOR_PROFILE_AMBIGUOUS: { steps: { step: string; collector_profile_id: string }[] };
  COLLECTOR_PROFILE_BINDING_MISMATCH: { registration_id: string };
  COLLECTOR_PROFILE_RECIPE_MISMATCH: { recipe_path: string };
  COLLECTOR_PROFILE_STEP_INVALID: { step_id: string };
  GRANT_NOT_LIVE: { grant_id: string; grant_generation?: string };
  GRANT_TOKEN_REJECTED: { reason: 'unknown' | 'rotated' | 'revoked'; grant_id?: string };
}
