/**
 * The request document of the local adapter (docs/agent-tasks.md "agent-task call"), from a
 * file or stdin, bounded before it is read into memory. The actor is never an input: it comes
 * from the grant of --token-file (src/tasks/grant-guard.ts).
 */
import { MAX_REQUEST_BYTES } from '../contracts/task-requests.js';
import { MAX_ASSERTION_BYTES } from '../contracts/task-result.js';
import { readBoundedInput } from '../native/bounded-input.js';

/** The largest request document any operation accepts (a recovery read wrapping a full assertion). */
export const MAX_INPUT_BYTES = MAX_ASSERTION_BYTES + MAX_REQUEST_BYTES;

/** Read the request document from FILE or `-` (stdin); the size is checked before it is held. */
export function readTaskInput(source: string): Uint8Array {
  return readBoundedInput(source, { limit: MAX_INPUT_BYTES, what: 'the request document', tooLargeHint: 'send one request document', stdin: true });
}
