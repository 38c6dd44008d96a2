/**
 * Key files and signatures (src/crypto/, src/contracts/key-file.ts).
 * The rows of docs/errors.md "crypto and keys".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const KEY_ERRORS = {
  title: 'crypto and keys',
  codes: {
    KEY_FILE_INVALID: { exit: EXIT.INVALID, summary: 'A key file is malformed.' },
    KEY_FILE_EXISTS: { exit: EXIT.CONFLICT, summary: 'A key file already exists; it is never overwritten.' },
    KEY_PERMISSIONS: { exit: EXIT.INVALID, summary: 'A key file or its directory is accessible to group or others.' },
    KEY_STATE_DIR_IN_WORKSPACE: {
      exit: EXIT.INVALID,
      summary:
        'The collector state directory lies inside an agentscm workspace, where a checkpoint would record the ' +
        'private key; no key was written.',
    },
    SIGNATURE_INVALID: { exit: EXIT.FAILED, summary: 'A signature does not verify under strict Ed25519.' },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface KeyErrorDetails {
  SIGNATURE_INVALID: { reason: string };
}
