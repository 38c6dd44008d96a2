/**
 * Token files (docs/wire.md "Authority identity and grants"): the bearer token of a grant lives in a
 * file of its own, never on a command line or in output. A new token file is created 0600 with
 * exclusive create in a directory that group and others cannot write — through a private
 * temporary file and link(), which never replaces an existing name, so the file appears whole
 * or not at all and an existing file is never overwritten. A token file is read through the one
 * bounded reader (regular files only) and refused when group or others can access it.
 */
import { lstatSync, statSync, unlinkSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { AgentscmError } from '../contracts/errors.js';
import { GRANT_TOKEN_LENGTH, isGrantToken } from '../contracts/grant.js';
import { quoteForMessage } from '../contracts/message-text.js';
import { readBoundedInput } from './bounded-input.js';
import { createPrivateFileOnce } from './private-files.js';

/** Largest token file read: a token, a newline, and room to say what else is wrong. */
export const TOKEN_FILE_MAX_BYTES = 1024;

function modeOf(stats: Stats): string {
  return (stats.mode & 0o777).toString(8).padStart(4, '0');
}

function ioError(what: string, path: string, error: unknown): AgentscmError {
  return new AgentscmError('IO_ERROR', `cannot ${what} ${quoteForMessage(path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
}

function exists(path: string): AgentscmError {
  return new AgentscmError('GRANT_TOKEN_FILE_EXISTS', `the token file ${quoteForMessage(path)} already exists; a token file is never overwritten`, {
    hint: 'name a new file, or remove the old one yourself if it is no longer needed',
  });
}

/** The directory of a new token file must exist, be a directory, and be unwritable by group and others. */
function checkTokenDirectory(dir: string): void {
  let stats: Stats;
  try {
    stats = statSync(dir);
  } catch (error) {
    throw ioError('use the directory', dir, error);
  }
  if (!stats.isDirectory()) {
    throw new AgentscmError('GRANT_TOKEN_FILE_UNSAFE', `${quoteForMessage(dir)} is not a directory`, { hint: 'write the token file into an existing directory you own' });
  }
  if ((stats.mode & 0o022) !== 0) {
    throw new AgentscmError('GRANT_TOKEN_FILE_UNSAFE', `the directory ${quoteForMessage(dir)} has mode ${modeOf(stats)}: group or others can write it, so they could replace the token file`, {
      hint: 'write the token file into a directory only you can write (e.g. chmod 700 DIR)',
    });
  }
}

/** Refuse a token path that is taken or whose directory is unsafe; returns the absolute path. Writes nothing. */
export function checkNewTokenFile(path: string): string {
  const absolute = resolve(path);
  checkTokenDirectory(dirname(absolute));
  let taken = true;
  try {
    lstatSync(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError('inspect', absolute, error);
    taken = false;
  }
  if (taken) throw exists(absolute);
  return absolute;
}

/**
 * Create the token file at `path` (0600, token and one newline, fsynced), never replacing an
 * existing name (GRANT_TOKEN_FILE_EXISTS). Returns the absolute path.
 */
export function writeTokenFile(path: string, token: string): string {
  const absolute = checkNewTokenFile(path);
  if (createPrivateFileOnce(absolute, `${token}\n`) === 'exists') throw exists(absolute);
  return absolute;
}

/** Remove a token file this process just wrote (its grant was not committed), so that no file names a token that never lived. */
export function removeTokenFile(absolute: string): void {
  try {
    unlinkSync(absolute);
  } catch {
    // The caller reports the original failure; a leftover file holds a token no grant accepts.
  }
}

/**
 * Read the token of a token file: a regular file (the bounded reader refuses anything else), not
 * accessible to group or others (GRANT_TOKEN_FILE_UNSAFE), holding exactly one token and at most
 * one trailing newline (GRANT_TOKEN_INVALID). Messages never repeat the file's content.
 */
export function readTokenFile(path: string): string {
  const bytes = readBoundedInput(path, { limit: TOKEN_FILE_MAX_BYTES, what: 'the token file', tooLargeHint: 'a token file holds one token' });
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (error) {
    throw ioError('inspect', path, error);
  }
  if ((stats.mode & 0o077) !== 0) {
    throw new AgentscmError('GRANT_TOKEN_FILE_UNSAFE', `the token file ${quoteForMessage(path)} has mode ${modeOf(stats)}; group and others must have no access`, {
      hint: 'run: chmod 600 on the token file',
    });
  }
  let text = bytes.toString('latin1');
  if (text.endsWith('\n')) text = text.slice(0, -1);
  if (text.length !== GRANT_TOKEN_LENGTH || !isGrantToken(text)) {
    throw new AgentscmError('GRANT_TOKEN_INVALID', `the token file ${quoteForMessage(path)} does not hold one grant token`, {
      hint: 'pass the file written by `agentscm grant create` or `grant rotate`, unchanged',
    });
  }
  return text;
}
