/**
 * The collector's signing key on disk (docs/wire.md "Keys"; spec: collector state is owner-private and
 * non-symlink): `--state-dir S` is a 0700 directory owned by the current user, the key file
 * S/signing-key.json is 0600. A key file is never overwritten, and a directory or file that
 * group or others can access is refused rather than repaired.
 */
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { inputNotFound } from '../contracts/input-not-found.js';
import {
  decodeKeyFile,
  encodeKeyFile,
  KEY_FILE_MAX_BYTES,
  KEY_FILE_NAME,
  type SigningKey,
} from '../contracts/key-file.js';
import { generateKeyPair, verificationKeyId } from '../crypto/ed25519.js';
import { createPrivateFileOnce } from '../native/private-files.js';
import { findEnclosingWorkspace } from '../workspace/locate.js';

export interface CreatedKey {
  readonly key_file: string;
  readonly public_key: string;
  readonly verification_key_id: string;
}

function ioError(what: string, error: unknown): never {
  throw new AgentscmError('IO_ERROR', `${what}: ${(error as Error).message}`, { cause: error });
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return ioError(`cannot inspect ${path}`, error);
  }
}

function mode(stats: Stats): string {
  return (stats.mode & 0o777).toString(8).padStart(4, '0');
}

/** The directory is a real directory (not a symlink), owned by us, with no group/other bits. */
function checkPrivateDir(dir: string, stats: Stats): void {
  if (stats.isSymbolicLink() || !stats.isDirectory()) {
    throw new AgentscmError('KEY_PERMISSIONS', `${dir} is not a directory (symlinks are refused)`, {
      hint: 'pass a real owner-private directory as --state-dir',
    });
  }
  if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) {
    throw new AgentscmError('KEY_PERMISSIONS', `${dir} is owned by uid ${stats.uid}, not by the current user`, {
      hint: 'use a state directory you own',
    });
  }
  if ((stats.mode & 0o077) !== 0) {
    throw new AgentscmError('KEY_PERMISSIONS', `${dir} has mode ${mode(stats)}; group and others must have no access`, {
      hint: `run: chmod 700 ${dir}`,
    });
  }
}

/** The key file is a regular file (not a symlink), owned by us, with no group/other bits. */
function checkPrivateFile(path: string, stats: Stats): void {
  if (stats.isSymbolicLink() || !stats.isFile()) {
    throw new AgentscmError('KEY_PERMISSIONS', `${path} is not a regular file (symlinks are refused)`, {
      hint: 'pass the key file written by `agentscm agent-task key`',
    });
  }
  if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) {
    throw new AgentscmError('KEY_PERMISSIONS', `${path} is owned by uid ${stats.uid}, not by the current user`);
  }
  if ((stats.mode & 0o077) !== 0) {
    throw new AgentscmError(
      'KEY_PERMISSIONS',
      `${path} has mode ${mode(stats)}; group and others must have no access`,
      { hint: `run: chmod 600 ${path}` },
    );
  }
}

/**
 * A key inside a workspace would be recorded by its next checkpoint: refuse such a state directory
 * before anything is created (KEY_STATE_DIR_IN_WORKSPACE; docs/keys-and-enrollment.md "Where the
 * key lives"). `dir` is absolute.
 */
export function refuseStateDirInWorkspace(dir: string): void {
  const workspace = findEnclosingWorkspace(dir);
  if (workspace === null) return;
  throw new AgentscmError(
    'KEY_STATE_DIR_IN_WORKSPACE',
    `the state directory ${dir} is inside the agentscm workspace ${workspace}, where a checkpoint would record ` +
      'the private key',
    { hint: 'pass a --state-dir outside every workspace, e.g. ~/.agentscm-collector' },
  );
}

/**
 * Generate a key into STATE_DIR/signing-key.json (`agentscm agent-task key`): refuses a
 * directory inside a workspace (KEY_STATE_DIR_IN_WORKSPACE), creates the directory 0700 if absent, refuses an
 * accessible directory (KEY_PERMISSIONS) and an existing
 * key file (KEY_FILE_EXISTS; link() never replaces, so a concurrent writer cannot be overwritten either).
 */
export function createSigningKey(stateDir: string): CreatedKey {
  const dir = resolve(stateDir);
  refuseStateDirInWorkspace(dir);
  let stats = lstatOrNull(dir);
  if (stats === null) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      ioError(`cannot create ${dir}`, error);
    }
    stats = lstatSync(dir);
  }
  checkPrivateDir(dir, stats);
  const keyFile = join(dir, KEY_FILE_NAME);
  if (lstatOrNull(keyFile) !== null) {
    throw new AgentscmError('KEY_FILE_EXISTS', `${keyFile} already exists; a key file is never overwritten`, {
      hint: 'use the existing key, or choose another --state-dir',
    });
  }
  const { privateKey, publicKey } = generateKeyPair();
  // Never torn, never replacing a key file that appeared meanwhile (native/private-files.ts).
  if (createPrivateFileOnce(keyFile, encodeKeyFile(privateKey)) === 'exists') {
    throw new AgentscmError('KEY_FILE_EXISTS', `${keyFile} already exists; a key file is never overwritten`, {
      hint: 'use the existing key, or choose another --state-dir',
    });
  }
  return {
    key_file: keyFile,
    public_key: Buffer.from(publicKey).toString('hex'),
    verification_key_id: verificationKeyId(publicKey),
  };
}

/** Read and validate a key file: owner-private file in an owner-private directory, then strict decode. */
export function loadSigningKey(keyFilePath: string): SigningKey {
  const path = resolve(keyFilePath);
  // A missing key file or directory is a wrong argument (INPUT_NOT_FOUND), named as given.
  const missingHint = 'pass the key file `agentscm agent-task key --state-dir DIR` created, or create one that way';
  const dirStats = lstatOrNull(dirname(path));
  if (dirStats === null) throw inputNotFound('the key file', keyFilePath, missingHint);
  checkPrivateDir(dirname(path), dirStats);
  const stats = lstatOrNull(path);
  if (stats === null) throw inputNotFound('the key file', keyFilePath, missingHint);
  checkPrivateFile(path, stats);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return ioError(`cannot open ${path}`, error);
  }
  try {
    // Size from the open descriptor, before allocating: a key file is at most 1 KiB.
    const size = fstatSync(fd).size;
    if (size > KEY_FILE_MAX_BYTES)
      throw new AgentscmError(
        'KEY_FILE_INVALID',
        `${path} is ${size} bytes; a key file is at most ${KEY_FILE_MAX_BYTES}`,
      );
    const buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return decodeKeyFile(buffer.subarray(0, read));
  } finally {
    closeSync(fd);
  }
}

/** What `agentscm doctor` found in a collector state directory (docs/doctor.md "keys"). */
export type KeyStateInspection =
  | { readonly state: 'ok'; readonly keyFile: string; readonly verificationKeyId: string; readonly publicKey: string }
  | {
      readonly state: 'dir_missing' | 'dir_not_private' | 'key_missing' | 'key_not_private' | 'key_invalid';
      readonly keyFile: string;
      readonly problem: string;
      readonly hint: string | undefined;
    };

/**
 * Read-only check of a state directory with the same rules as loadSigningKey (owner-private
 * real directory, 0600 regular key file, strict decode), reported as a state instead of thrown.
 * Never creates, repairs or prints the key.
 */
export function inspectKeyStateDir(stateDir: string): KeyStateInspection {
  const dir = resolve(stateDir);
  const keyFile = join(dir, KEY_FILE_NAME);
  const problemOf = (state: Exclude<KeyStateInspection['state'], 'ok'>, error: unknown): KeyStateInspection => {
    if (!(error instanceof AgentscmError)) throw error;
    return { state, keyFile, problem: error.message, hint: error.hint };
  };
  let dirStats: Stats | null;
  try {
    dirStats = lstatOrNull(dir);
  } catch (error) {
    return problemOf('dir_missing', error);
  }
  if (dirStats === null)
    return {
      state: 'dir_missing',
      keyFile,
      problem: `${dir} does not exist`,
      hint: 'create a key with `agentscm agent-task key --state-dir DIR`, or pass the right --state-dir',
    };
  try {
    checkPrivateDir(dir, dirStats);
  } catch (error) {
    return problemOf('dir_not_private', error);
  }
  let fileStats: Stats | null;
  try {
    fileStats = lstatOrNull(keyFile);
  } catch (error) {
    return problemOf('key_missing', error);
  }
  if (fileStats === null)
    return {
      state: 'key_missing',
      keyFile,
      problem: `${keyFile} does not exist`,
      hint: 'create a key with `agentscm agent-task key --state-dir DIR`',
    };
  try {
    checkPrivateFile(keyFile, fileStats);
  } catch (error) {
    return problemOf('key_not_private', error);
  }
  try {
    const key = loadSigningKey(keyFile);
    return { state: 'ok', keyFile, verificationKeyId: verificationKeyId(key.publicKey), publicKey: key.publicKeyHex };
  } catch (error) {
    return problemOf('key_invalid', error);
  }
}
