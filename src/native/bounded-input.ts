/**
 * The one reader of inputs named on the command line (a file, or `-` for stdin): bounded before
 * a byte is held (spec: every bound enforced before allocation), and never left waiting on
 * something that is not a file. A file is opened with O_NONBLOCK, so a FIFO without a writer
 * cannot hang the open, and checked with fstat before anything is read: only a regular file is
 * read. Stdin may be a pipe, terminal or socket; when its descriptor is non-blocking, the reader
 * sleeps between EAGAIN answers instead of spinning on them.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

import { AgentscmError } from '../contracts/errors.js';
import { inputNotFound, isMissingPath } from '../contracts/input-not-found.js';
import { quoteForMessage } from '../contracts/message-text.js';

export interface BoundedInputOptions {
  /** The largest input accepted, in bytes; one byte more is INPUT_TOO_LARGE. */
  readonly limit: number;
  /** What the input is, for messages, e.g. "the workflow definition". */
  readonly what: string;
  /** What to do about an input that is too large. */
  readonly tooLargeHint?: string;
  /**
   * What to pass instead when the file does not exist (INPUT_NOT_FOUND), e.g. "pass the path of a
   * workflow definition file (docs/skill-workflows.md)".
   */
  readonly missingHint?: string;
  /** Whether `-` means stdin (otherwise it is a file named "-"). */
  readonly stdin?: boolean;
  /**
   * The input's own framing, checked as its first bytes arrive and before more is read (a file
   * and stdin alike): `check` is called with exactly the first `at` bytes, then again with the
   * first N bytes for each N it returns, until it returns undefined. A throw refuses the input
   * there, so a stream that is not of the expected format is refused after its first bytes
   * instead of after `limit` of them. At end of input, the checks not reached are skipped: the
   * parser sees the whole (shorter) input.
   */
  readonly head?: { readonly at: number; readonly check: (head: Buffer) => number | undefined };
}

/** The source that means stdin. */
export const STDIN_SOURCE = '-';

// Sleep between EAGAIN answers of a non-blocking stdin: from 1 ms, doubling up to 64 ms, so an
// idle wait costs a few wake-ups a second and data that arrives is read within 64 ms.
const FIRST_WAIT_MS = 1;
const LONGEST_WAIT_MS = 64;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
// One read asks for at most this much, so a source that fills any read at once (/dev/zero, a
// fast pipe) is checked between reads instead of filling the whole bound in one call.
const READ_CHUNK = 1024 * 1024;

function sleep(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a component of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EISDIR: 'it is a directory',
  EIO: 'input/output error',
  ENXIO: 'no such device or address',
};

/** The reason of a system error without its message, which repeats the path unescaped. */
function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string') return REASONS[code] === undefined ? code : `${REASONS[code]} (${code})`;
  return 'unknown error';
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'of an unknown file type';
}

function tooLarge(options: BoundedInputOptions, shown: string, size: number | null): AgentscmError {
  const message =
    size === null
      ? `${options.what} ${shown} holds more than ${options.limit} bytes; it was not parsed`
      : `${options.what} ${shown} is ${size} bytes, more than the limit of ${options.limit}; it was not read`;
  return new AgentscmError('INPUT_TOO_LARGE', message, {
    hint: options.tooLargeHint ?? `keep it at most ${options.limit} bytes`,
    details: { limit: options.limit, ...(size === null ? {} : { size }) },
  });
}

/**
 * Read at most limit + 1 bytes from fd, running the head checks as their lengths are reached;
 * stops at end of input, sleeps on EAGAIN. The buffer is reserved, not filled: memory is taken
 * only as bytes arrive.
 */
function readAll(fd: number, options: BoundedInputOptions, shown: string): Buffer {
  const buffer = Buffer.allocUnsafe(options.limit + 1);
  let length = 0;
  let wait = FIRST_WAIT_MS;
  // The next head length to check at (null: none left); a read never crosses it.
  let checkAt: number | null = options.head === undefined ? null : Math.min(options.head.at, options.limit + 1);
  for (;;) {
    let n: number;
    const end = Math.min(checkAt ?? buffer.length, length + READ_CHUNK, buffer.length);
    try {
      n = readSync(fd, buffer, length, end - length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
        sleep(wait);
        wait = Math.min(wait * 2, LONGEST_WAIT_MS);
        continue;
      }
      if (code === 'EOF') break;
      throw new AgentscmError('IO_ERROR', `cannot read ${options.what} ${shown}: ${reasonOf(error)}`, { cause: error });
    }
    if (n === 0) break;
    wait = FIRST_WAIT_MS;
    length += n;
    while (checkAt !== null && options.head !== undefined && length >= checkAt && checkAt <= options.limit) {
      const next = options.head.check(buffer.subarray(0, checkAt));
      checkAt = next === undefined || next <= checkAt ? null : Math.min(next, options.limit + 1);
    }
    if (length > options.limit) throw tooLarge(options, shown, null);
  }
  return buffer.subarray(0, length);
}

/**
 * Read one input named on the command line: FILE (a regular file only) or, with `stdin`, `-`, at most
 * `options.limit` bytes. Missing → INPUT_NOT_FOUND; unreadable → IO_ERROR; a directory, FIFO, socket or device
 * → INPUT_NOT_REGULAR_FILE; larger than the limit → INPUT_TOO_LARGE. Nothing is parsed here.
 */
export function readBoundedInput(source: string, options: BoundedInputOptions): Buffer {
  if (source === STDIN_SOURCE && options.stdin === true) {
    const shown = 'from stdin';
    let size: number | null = null;
    try {
      const stats = fstatSync(0);
      if (stats.isFile()) size = stats.size;
    } catch {
      // A closed stdin reads as empty below; fstat is only the early size check.
    }
    if (size !== null && size > options.limit) throw tooLarge(options, shown, size);
    return readAll(0, options, shown);
  }
  const shown = quoteForMessage(source);
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer;
    // O_NOCTTY: a terminal device named here never becomes the controlling terminal.
    fd = openSync(source, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    if (isMissingPath(error)) throw inputNotFound(options.what, source, options.missingHint, error);
    throw new AgentscmError('IO_ERROR', `cannot open ${options.what} ${shown}: ${reasonOf(error)}`, { cause: error });
  }
  try {
    let stats: Stats;
    try {
      stats = fstatSync(fd);
    } catch (error) {
      throw new AgentscmError('IO_ERROR', `cannot read ${options.what} ${shown}: ${reasonOf(error)}`, { cause: error });
    }
    if (!stats.isFile()) {
      throw new AgentscmError(
        'INPUT_NOT_REGULAR_FILE',
        `${options.what} ${shown} is ${kindOf(stats)}, not a regular file; it was not read`,
        {
          hint: options.stdin === true ? 'pass a regular file, or - to read stdin' : 'pass a regular file',
        },
      );
    }
    if (stats.size > options.limit) throw tooLarge(options, shown, stats.size);
    // The size from fstat is only an early refusal: /proc files report 0, and a file may grow
    // while it is read, so the read itself is bounded too.
    return readAll(fd, options, shown);
  } finally {
    closeSync(fd);
  }
}
