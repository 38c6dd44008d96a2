/**
 * INPUT_NOT_FOUND (exit 2): a file named on the command line does not exist. Every reader of
 * input files (src/native/bounded-input.ts, the token, key and agent-state readers) reports it
 * the same way — the message names the path, the hint what to pass instead (docs/cli.md "File
 * arguments and stdin") — and nothing was read or changed.
 */
import { AgentscmError } from './errors.js';
import { quoteForMessage } from './message-text.js';

/**
 * Whether a failed open or stat says the path names nothing (a missing file, or a file where a
 * directory should be).
 */
export function isMissingPath(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The error for an input file `path` (described as `what`, e.g. "the token file") that does not exist. */
export function inputNotFound(what: string, path: string, hint: string | undefined, cause?: unknown): AgentscmError {
  return new AgentscmError('INPUT_NOT_FOUND', `${what} ${quoteForMessage(path)} does not exist; nothing was read`, {
    hint: hint ?? 'check the path, or pass an existing file',
    ...(cause === undefined ? {} : { cause }),
  });
}
