/**
 * Token files (docs/wire.md "Authority identity and grants"): the bearer token of a grant lives in a
 * file of its own, never on a command line or in output. A new token file is created 0600 with
 * exclusive create in a directory that group and others cannot write — through a private
 * temporary file and link(), which never replaces an existing name, so the file appears whole
 * or not at all and an existing file is never overwritten. A token file is read through the one
 * bounded reader (regular files only) and refused when group or others can access it.
 *
 * Writing and reading apply one path rule (docs/grants.md "Where a token file may live"): every
 * directory the file rests on — each ancestor of its path as given and of its real path, up to
 * `/` — is owned by the caller or root, and is not writable by group or others unless it is
 * sticky; the token file itself is owned by the caller or root. Then no other local user can
 * replace the file or any directory on its way, so what was checked is what is read.
 *
 * Missing directories of a new token file are created, each level 0700, after the nearest existing
 * one passed that rule (docs/grants.md "Missing directories"); nothing is created when it does not.
 */
import { chmodSync, lstatSync, mkdirSync, realpathSync, rmdirSync, statSync, unlinkSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { GRANT_TOKEN_LENGTH, isGrantToken } from '../contracts/grant.js';
import { inputNotFound, isMissingPath } from '../contracts/input-not-found.js';
import { quoteForMessage } from '../contracts/message-text.js';
import { readBoundedInput } from './bounded-input.js';
import { createPrivateFileOnce, syncDirectory } from './private-files.js';

/** Largest token file read: a token, a newline, and room to say what else is wrong. */
export const TOKEN_FILE_MAX_BYTES = 1024;

const TOKEN_FILE_MISSING_HINT = 'pass the token file `agentscm grant create --token-file PATH` wrote (docs/grants.md)';

function modeOf(stats: Stats): string {
  return (stats.mode & 0o7777).toString(8).padStart(4, '0');
}

function ioError(what: string, path: string, error: unknown): AgentscmError {
  return new AgentscmError(
    'IO_ERROR',
    `cannot ${what} ${quoteForMessage(path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    { cause: error },
  );
}

function exists(path: string): AgentscmError {
  return new AgentscmError(
    'GRANT_TOKEN_FILE_EXISTS',
    `the token file ${quoteForMessage(path)} already exists; a token file is never overwritten`,
    {
      hint: 'name a new file, or remove the old one yourself if it is no longer needed',
    },
  );
}

function unsafe(message: string, hint: string): AgentscmError {
  return new AgentscmError('GRANT_TOKEN_FILE_UNSAFE', message, { hint });
}

/** The effective uid whose files are trusted besides root's; null where the platform has none. */
function callerUid(): number | null {
  return typeof process.geteuid === 'function' ? process.geteuid() : null;
}

/** Whether `uid` may own what a token file rests on: the caller or root (who can replace anything anyway). */
function trustedOwner(uid: number, caller: number | null): boolean {
  return caller === null || uid === caller || uid === 0;
}

/** `dir` and every ancestor of it, `/` last. */
function ancestors(dir: string): string[] {
  const out = [dir];
  for (let parent = dirname(dir); parent !== out[out.length - 1]; parent = dirname(parent)) out.push(parent);
  return out;
}

/**
 * Every directory an absolute path of a directory rests on: its ancestors as written and those of
 * its real path (a symbolic link on the way leads through other directories). Each must be owned
 * by the caller or root and unwritable by group and others unless sticky (GRANT_TOKEN_FILE_UNSAFE).
 */
function checkDirectoryChain(dir: string, purpose: string): void {
  const caller = callerUid();
  let real: string;
  try {
    real = realpathSync(dir);
  } catch (error) {
    throw ioError('use the directory', dir, error);
  }
  for (const each of new Set([...ancestors(dir), ...ancestors(real)])) {
    let stats: Stats;
    try {
      stats = statSync(each);
    } catch (error) {
      throw ioError('inspect the directory', each, error);
    }
    if (!trustedOwner(stats.uid, caller)) {
      throw unsafe(
        `the directory ${quoteForMessage(each)} on the way to ${purpose} is owned by uid ${stats.uid}, neither ` +
          `you nor root: its owner could replace the token file`,
        'keep token files in a directory you own, below directories owned by you or root (e.g. mkdir -m ' +
          '700 ~/.agentscm)',
      );
    }
    // A sticky directory lets others add names but not rename or remove yours (e.g. /tmp).
    if ((stats.mode & 0o022) !== 0 && (stats.mode & 0o1000) === 0) {
      throw unsafe(
        `the directory ${quoteForMessage(each)} on the way to ${purpose} has mode ${modeOf(stats)}: group or ` +
          `others can write it and it is not sticky, so they could replace the token file`,
        `keep token files in a directory only you can write (e.g. chmod 700 ` +
          `${each === dir ? 'DIR' : 'the directory'}, or chmod go-w)`,
      );
    }
  }
}

/**
 * The nearest existing directory of `dir` (`dir` itself when it exists) and the missing levels below
 * it, top-down. A level that exists but is not a directory, or a dangling symbolic link, is refused.
 */
function existingBase(dir: string): { base: string; missing: string[] } {
  const missing: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    let stats: Stats | null = null;
    try {
      stats = statSync(at);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw ioError('use the directory', at, error);
      let link = false;
      try {
        link = lstatSync(at).isSymbolicLink();
      } catch {
        // Not there at all: a level to create.
      }
      if (link) {
        throw unsafe(
          `${quoteForMessage(at)} is a symbolic link to nothing`,
          'name a directory that exists, or a path whose missing directories can be created',
        );
      }
    }
    if (stats !== null) {
      if (!stats.isDirectory()) {
        throw unsafe(
          `${quoteForMessage(at)} is not a directory`,
          'write the token file into a directory you own (missing directories are created 0700)',
        );
      }
      return { base: at, missing: missing.reverse() };
    }
    missing.push(at);
  }
}

/** A checked path for a new token file: its absolute path and the directories to create, top-down. */
interface NewTokenFilePlan {
  readonly absolute: string;
  readonly missing: readonly string[];
}

function planNewTokenFile(path: string): NewTokenFilePlan {
  const absolute = resolve(path);
  const { base, missing } = existingBase(dirname(absolute));
  checkDirectoryChain(base, 'the new token file');
  if (missing.length === 0) {
    let taken = true;
    try {
      lstatSync(absolute);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError('inspect', absolute, error);
      taken = false;
    }
    if (taken) throw exists(absolute);
  }
  return { absolute, missing };
}

/**
 * Refuse a token path that is taken or whose nearest existing directory is unsafe; returns the
 * absolute path. Writes nothing (missing directories are created by writeTokenFile).
 */
export function checkNewTokenFile(path: string): string {
  return planNewTokenFile(path).absolute;
}

/** Remove directories this process created (deepest first) if they are empty again; best effort. */
export function removeCreatedDirectories(created: readonly string[]): void {
  for (const dir of [...created].reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      // Not empty or already gone: leave it.
    }
  }
}

/**
 * Create each missing level with mode 0700 (exactly, whatever the umask). mkdir never adopts a
 * name someone else made meanwhile: EEXIST is refused.
 */
function createDirectories(missing: readonly string[]): string[] {
  const created: string[] = [];
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode: 0o700 });
      created.push(dir);
      chmodSync(dir, 0o700);
      syncDirectory(dirname(dir));
    } catch (error) {
      removeCreatedDirectories(created);
      throw ioError('create the directory', dir, error);
    }
  }
  return created;
}

/** A token file just written, and the directories created for it (top-down; empty when none were missing). */
export interface WrittenTokenFile {
  readonly file: string;
  readonly createdDirectories: readonly string[];
}

/**
 * Create the token file at `path` (0600, token and one newline, fsynced), never replacing an
 * existing name (GRANT_TOKEN_FILE_EXISTS), after creating its missing directories 0700.
 */
export function writeTokenFile(path: string, token: string): WrittenTokenFile {
  const plan = planNewTokenFile(path);
  const createdDirectories = createDirectories(plan.missing);
  try {
    if (createdDirectories.length > 0) checkDirectoryChain(dirname(plan.absolute), 'the new token file');
    if (createPrivateFileOnce(plan.absolute, `${token}\n`) === 'exists') throw exists(plan.absolute);
  } catch (error) {
    removeCreatedDirectories(createdDirectories);
    throw error;
  }
  return { file: plan.absolute, createdDirectories };
}

/**
 * Remove a token file this process just wrote (its grant was not committed), so that no file names a token that never
 * lived.
 */
export function removeTokenFile(absolute: string): void {
  try {
    unlinkSync(absolute);
  } catch {
    // The caller reports the original failure; a leftover file holds a token no grant accepts.
  }
}

/**
 * Read the token of a token file: resting only on safe directories (the path rule above;
 * GRANT_TOKEN_FILE_UNSAFE, checked before a byte is read), a regular file (the bounded reader
 * refuses anything else) owned by the caller or root and not accessible to group or others
 * (GRANT_TOKEN_FILE_UNSAFE), holding exactly one token and at most one trailing newline
 * (GRANT_TOKEN_INVALID). Messages never repeat the file's content.
 */
export function readTokenFile(path: string): string {
  const absolute = resolve(path);
  try {
    lstatSync(absolute);
  } catch (error) {
    // A missing file (or directory on the way) is a wrong argument, not a store or disk problem.
    if (isMissingPath(error)) throw inputNotFound('the token file', path, TOKEN_FILE_MISSING_HINT, error);
  }
  checkDirectoryChain(dirname(absolute), 'the token file');
  let target: string | null = null;
  try {
    target = realpathSync(absolute);
  } catch {
    // A missing file is reported by the reader below.
  }
  // A token file that is a symbolic link: the directories of what it names count too.
  if (target !== null && dirname(target) !== dirname(absolute)) checkDirectoryChain(dirname(target), 'the token file');
  const bytes = readBoundedInput(path, {
    limit: TOKEN_FILE_MAX_BYTES,
    what: 'the token file',
    tooLargeHint: 'a token file holds one token',
    missingHint: TOKEN_FILE_MISSING_HINT,
  });
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (error) {
    throw ioError('inspect', path, error);
  }
  if (!trustedOwner(stats.uid, callerUid())) {
    throw unsafe(
      `the token file ${quoteForMessage(path)} is owned by uid ${stats.uid}, neither you nor root: its owner ` +
        `could change the token`,
      'use a token file you own (the one `grant create` wrote for you)',
    );
  }
  if ((stats.mode & 0o077) !== 0) {
    throw unsafe(
      `the token file ${quoteForMessage(path)} has mode ${modeOf(stats)}; group and others must have no access`,
      'run: chmod 600 on the token file',
    );
  }
  let text = bytes.toString('latin1');
  if (text.endsWith('\n')) text = text.slice(0, -1);
  if (text.length !== GRANT_TOKEN_LENGTH || !isGrantToken(text)) {
    throw new AgentscmError(
      'GRANT_TOKEN_INVALID',
      `the token file ${quoteForMessage(path)} does not hold one grant token`,
      {
        hint: 'pass the file written by `agentscm grant create` or `grant rotate`, unchanged',
      },
    );
  }
  return text;
}
