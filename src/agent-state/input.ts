/**
 * The input document of an agent-state operation, from a file or `-` (stdin), bounded before it
 * is held in memory (docs/agent-state.md "Operations").
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

import { MAX_AGENT_STATE_INPUT_BYTES } from '../contracts/agent-state.js';
import { AgentscmError } from '../contracts/errors.js';
import { inputNotFound, isMissingPath } from '../contracts/input-not-found.js';

function tooLarge(size: number): AgentscmError {
  return new AgentscmError(
    'INPUT_TOO_LARGE',
    `the input is ${size} bytes or more; the limit is ${MAX_AGENT_STATE_INPUT_BYTES}`,
    {
      hint: 'send one JSON document',
      details: { limit: MAX_AGENT_STATE_INPUT_BYTES },
    },
  );
}

function readBounded(fd: number, knownSize: number | null): Buffer {
  if (knownSize !== null && knownSize > MAX_AGENT_STATE_INPUT_BYTES) throw tooLarge(knownSize);
  const buffer = Buffer.alloc(MAX_AGENT_STATE_INPUT_BYTES + 1);
  let length = 0;
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buffer, length, buffer.length - length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') continue;
      if (code === 'EOF') break;
      throw error;
    }
    if (n === 0) break;
    length += n;
    if (length > MAX_AGENT_STATE_INPUT_BYTES) throw tooLarge(length);
  }
  return buffer.subarray(0, length);
}

/** The bytes of FILE, or of stdin for `-`; IO_ERROR when it cannot be read. */
export function readAgentStateInput(source: string): Uint8Array {
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
    if (isMissingPath(error)) {
      throw inputNotFound(
        'the input',
        source,
        'pass the path of an input JSON file, or - to read it from stdin',
        error,
      );
    }
    throw new AgentscmError(
      'IO_ERROR',
      `cannot read ${source === '-' ? 'stdin' : source}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
