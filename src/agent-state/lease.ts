/**
 * The mutation lease `botte-mutation-lease-v1` (docs/agent-state.md "The mutation lease": confirmed
 * writers also acquire an atomic `botte-mutation-lease-v1` in the local temporary directory): one
 * writer per git root, whichever subdirectory it starts from. The lease is the file
 * `botte-mutation-lease-v1-<first 32 hex of SHA-256 of the root's real path>.json` in the local
 * temporary directory, one JSON object of kind `botte-mutation-lease-v1` naming its holder (the
 * same section gives the format), created complete and atomically (written aside, then hard-linked
 * to its name, which fails when it exists). Any file at that name holds the lease, whoever wrote
 * it; one whose holder process is gone is reported as stale and never removed here.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { isJsonObject } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { sha256Hex } from '../crypto/sha256.js';

export const LEASE_KIND = 'botte-mutation-lease-v1';
const MAX_LEASE_BYTES = 64 * 1024;

export interface LeaseHolder {
  readonly agent_id: string;
  /** The holder's declared write scopes (read by the edit hook). */
  readonly scopes: readonly string[];
  readonly pid: number;
  readonly hostname: string;
  readonly process_start: string | null;
  readonly acquired_at_ms: number;
}

export interface LeaseRecord extends LeaseHolder {
  readonly kind: typeof LEASE_KIND;
  readonly git_root: string;
  readonly token: string;
}

export interface HeldLease {
  readonly path: string;
  readonly record: LeaseRecord;
}

export type LeaseAttempt =
  | { readonly acquired: true; readonly lease: HeldLease }
  | {
      readonly acquired: false;
      /** `conflict`: a live holder; `stale`: the holder process is gone (the file is left in place). */
      readonly reason: 'conflict' | 'stale';
      readonly path: string;
      readonly holder: LeaseHolder | null;
    };

/** The lease file of a git root (its real path), under `dir`. */
export function leasePathFor(root: string, dir: string): string {
  return join(dir, `${LEASE_KIND}-${sha256Hex(Buffer.from(root, 'utf8')).slice(0, 32)}.json`);
}

/** Start time of a process from /proc (Linux), so that a reused pid is not taken for the holder. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** False when the holder's process is known to be gone (same host, no such pid, or a reused pid). */
export function holderAlive(holder: LeaseHolder): boolean {
  if (holder.hostname !== hostname()) return true; // another host's process cannot be checked: assume live
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  if (holder.process_start !== null) {
    const now = processStart(holder.pid);
    if (now !== null && now !== holder.process_start) return false;
  }
  return true;
}

/** The holder named by the lease file at `path`, or null when there is none or it is unreadable. */
export function readLeaseHolder(path: string): LeaseHolder | null {
  try {
    const value = parseStrictJson(readFileSync(path), { maxBytes: MAX_LEASE_BYTES });
    if (!isJsonObject(value) || value.kind !== LEASE_KIND) return null;
    const { agent_id, scopes, pid, hostname: host, process_start, acquired_at_ms } = value;
    if (
      typeof agent_id !== 'string' ||
      typeof pid !== 'number' ||
      typeof host !== 'string' ||
      typeof acquired_at_ms !== 'number'
    )
      return null;
    const paths = Array.isArray(scopes) ? scopes.filter((scope): scope is string => typeof scope === 'string') : [];
    return {
      agent_id,
      scopes: paths,
      pid,
      hostname: host,
      process_start: typeof process_start === 'string' ? process_start : null,
      acquired_at_ms,
    };
  } catch {
    return null;
  }
}

/** Take the lease of `root` for this process, or say who holds it (docs/agent-state.md "The mutation lease"). */
export function acquireMutationLease(
  root: string,
  agentId: string,
  writeScopes: readonly string[],
  dir: string,
): LeaseAttempt {
  const path = leasePathFor(root, dir);
  const record: LeaseRecord = {
    kind: LEASE_KIND,
    git_root: root,
    agent_id: agentId,
    scopes: [...writeScopes],
    pid: process.pid,
    hostname: hostname(),
    process_start: processStart(process.pid),
    acquired_at_ms: Date.now(),
    token: randomBytes(16).toString('hex'),
  };
  const aside = `${path}.${record.token}.tmp`;
  try {
    writeFileSync(aside, `${JSON.stringify(record)}\n`, { flag: 'wx', mode: 0o600 });
    try {
      linkSync(aside, path);
      return { acquired: true, lease: { path, record } };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(aside);
    }
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot create the mutation lease ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const holder = readLeaseHolder(path);
  // An unreadable lease is treated as held: only its owner or an operator removes it.
  return { acquired: false, reason: holder !== null && !holderAlive(holder) ? 'stale' : 'conflict', path, holder };
}

/** Release a held lease: removed only while it is still this holder's (same token). */
export function releaseMutationLease(lease: HeldLease): { readonly released: boolean; readonly lost: boolean } {
  let current: string;
  try {
    current = readFileSync(lease.path, 'utf8');
  } catch {
    return { released: false, lost: true };
  }
  if (!current.includes(`"token":"${lease.record.token}"`)) return { released: false, lost: true };
  try {
    unlinkSync(lease.path);
    return { released: true, lost: false };
  } catch {
    return { released: false, lost: true };
  }
}
