/**
 * Revision trees and workspace paths.
 * The rows of docs/errors.md "revision trees and workspace paths".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const TREE_ERRORS = {
  title: 'revision trees and workspace paths',
  codes: {
    WORKSPACE_PATH_NOT_UTF8: {
      exit: EXIT.FAILED,
      summary:
        'A workspace file or directory name is not valid UTF-8, so the scan is incomplete; nothing was ' +
        'registered or checkpointed.',
    },
    STORE_REVISIONS_OUTDATED: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'The store holds revisions of the flat-manifest format that revision trees replaced; it was left ' +
        'unchanged (docs/native-store.md "Stores made before revision trees").',
    },
  },
} as const satisfies ErrorSection;
