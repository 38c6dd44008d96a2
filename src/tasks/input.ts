/**
 * Inputs of the trusted-local adapter (docs/agent-tasks.md "agent-task call"): the actor given
 * as OWNER/AGENT and the request document from a file or stdin, bounded before it is read into
 * memory.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { AgentscmError } from '../contracts/errors.js';
import { validateId } from '../contracts/ids.js';
import type { AgentRef } from '../contracts/task-common.js';
import { MAX_REQUEST_BYTES } from '../contracts/task-requests.js';
import { MAX_ASSERTION_BYTES } from '../contracts/task-result.js';

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

function tooLarge(size: number): AgentscmError {
  return new AgentscmError('INPUT_TOO_LARGE', `the input is ${size} bytes or more; the limit is ${MAX_INPUT_BYTES}`, {
    hint: 'send one request document',
    details: { limit: MAX_INPUT_BYTES },
  });
}

function readBounded(fd: number, knownSize: number | null): Buffer {
  if (knownSize !== null && knownSize > MAX_INPUT_BYTES) throw tooLarge(knownSize);
  const buffer = Buffer.alloc(MAX_INPUT_BYTES + 1);
  let length = 0;
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buffer, length, buffer.length - length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      if ((error as NodeJS.ErrnoException).code === 'EOF') break;
      throw error;
    }
    if (n === 0) break;
    length += n;
    if (length > MAX_INPUT_BYTES) throw tooLarge(length);
  }
  return buffer.subarray(0, length);
}

/** Read the request document from FILE or `-` (stdin); the size is checked before it is held. */
export function readTaskInput(source: string): Uint8Array {
  try {
    if (source === '-') return readBounded(0, null);
    const fd = openSync(source, 'r');
    try {
      const stat = fstatSync(fd);
      return readBounded(fd, stat.isFile() ? stat.size : null);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof AgentscmError) throw error;
    throw new AgentscmError('IO_ERROR', `cannot read ${source === '-' ? 'stdin' : source}: ${(error as Error).message}`, { cause: error });
  }
}
