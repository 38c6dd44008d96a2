/**
 * Inputs of the trusted-local adapter (docs/agent-tasks.md "agent-task call"): the actor given
 * as OWNER/AGENT and the request document from a file or stdin, bounded before it is read into
 * memory.
 */
import { AgentscmError } from '../contracts/errors.js';
import { validateId } from '../contracts/ids.js';
import type { AgentRef } from '../contracts/task-common.js';
import { MAX_REQUEST_BYTES } from '../contracts/task-requests.js';
import { MAX_ASSERTION_BYTES } from '../contracts/task-result.js';
import { readBoundedInput } from '../native/bounded-input.js';

/** The largest request document any operation accepts (a recovery read wrapping a full assertion). */
export const MAX_INPUT_BYTES = MAX_ASSERTION_BYTES + MAX_REQUEST_BYTES;

/** Parse `OWNER/AGENT` (each an id of WIRE.md "Identifiers"). */
export function parseActor(text: string): AgentRef {
  const slash = text.indexOf('/');
  if (slash < 0 || slash !== text.lastIndexOf('/')) {
    throw new AgentscmError('USAGE', `--actor ${JSON.stringify(text.slice(0, 300))} is not OWNER/AGENT`, { hint: 'pass --actor OWNER/AGENT, e.g. --actor alice/claude-1' });
  }
  return { owner_id: validateId(text.slice(0, slash), 'actor owner'), agent_id: validateId(text.slice(slash + 1), 'actor agent') };
}

/** Read the request document from FILE or `-` (stdin); the size is checked before it is held. */
export function readTaskInput(source: string): Uint8Array {
  return readBoundedInput(source, { limit: MAX_INPUT_BYTES, what: 'the request document', tooLargeHint: 'send one request document', stdin: true });
}
