/**
 * Private files written durably, never torn and never replacing another (the key file, the
 * grant token file, the collector's retained descriptor and envelope): a 0600 temporary file in
 * the same directory, written and fsynced, then link()ed into place — link never replaces an
 * existing name, so a crash leaves no file or a complete one — and the directory fsynced.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, linkSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { quoteForMessage } from '../contracts/message-text.js';

function ioError(what: string, path: string, error: unknown): AgentscmError {
  return new AgentscmError('IO_ERROR', `cannot ${what} ${quoteForMessage(path)}: ${(error as Error).message}`, {
    cause: error,
  });
}

/** fsync a directory so that a name just linked or renamed into it survives a crash; best effort. */
export function syncDirectory(dir: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the file itself was fsynced.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** Remove a file that may already be gone. */
export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone; nothing else refers to it.
  }
}

/** Write `bytes` to a new 0600 temporary file beside `path`, fsynced; returns the temporary's path. */
export function writePrivateTemporary(path: string, bytes: Uint8Array | string): string {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(8).toString('hex')}.tmp`);
  let fd: number;
  try {
    fd = openSync(temporary, 'wx', 0o600);
  } catch (error) {
    throw ioError('create', temporary, error);
  }
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes);
    fsyncSync(fd);
  } catch (error) {
    unlinkQuietly(temporary);
    throw ioError('write', temporary, error);
  } finally {
    closeSync(fd);
  }
  return temporary;
}

/**
 * Create `path` (mode 0600) holding `bytes`, durably and atomically; 'exists' when the name is
 * already taken, which is never replaced. Other failures are IO_ERROR.
 */
export function createPrivateFileOnce(path: string, bytes: Uint8Array | string): 'created' | 'exists' {
  const temporary = writePrivateTemporary(path, bytes);
  try {
    linkSync(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
    throw ioError('create', path, error);
  } finally {
    unlinkQuietly(temporary);
  }
  syncDirectory(dirname(path));
  return 'created';
}
