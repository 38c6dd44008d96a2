/**
 * The 8-continuation counter of the Stop hooks (docs/stop-hooks.md "The continuation counter"): how
 * many times in a row a hook blocked one session's stop for one Change. A fresh stop
 * (stop_hook_active false or absent) starts again from 0; a continuation with 8 blocks already
 * counted ends continuation (the hook passes without doing its work), as Claude Code itself stops
 * honouring blocks after 8 in a row. The counter is the only file a Stop hook creates:
 * D/agent-stop/<key>, text "N\n", written atomically, removed on a pass. A counter that cannot be
 * read, parsed or written is HOOK_COUNTER_UNAVAILABLE, which the hook reports with exit 1
 * (non-blocking).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { AgentscmError } from '../../contracts/errors.js';
import { sha256Hex } from '../../crypto/sha256.js';
import type { Store } from '../../native/store-handle.js';
import type { StopPayload } from './payload.js';

/** Blocks in a row after which a Stop hook lets the agent stop. */
export const MAX_STOP_CONTINUATIONS = 8;
export const STOP_COUNTER_DIR = 'agent-stop';

export interface StopCounter {
  readonly file: string;
  /** Blocks already counted for this session and Change (0 for a fresh stop). */
  readonly blocks: number;
  /** True when continuation must end now: the hook passes without doing its work. */
  readonly exhausted: boolean;
}

function unavailable(why: string, cause?: unknown): AgentscmError {
  return new AgentscmError('HOOK_COUNTER_UNAVAILABLE', `the Stop hook counter ${why}`, {
    hint:
      `remove the file under the data directory's ${STOP_COUNTER_DIR}/ folder if it is damaged; the hook did ` +
      'nothing',
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The counter file of a session and Change under the store's data directory (a file location: no
 * database is opened); the key is a digest, so no payload text reaches a path.
 */
export function stopCounterFile(store: Pick<Store, 'dataDir'>, payload: StopPayload, change: string): string {
  const key = sha256Hex(`agentscm.stop-counter.v1\0${payload.client}\0${payload.session_id}\0${change}`).slice(0, 32);
  return join(store.dataDir, STOP_COUNTER_DIR, key);
}

/** Read the counter for this stop (HOOK_COUNTER_UNAVAILABLE when unreadable). */
export function readStopCounter(store: Pick<Store, 'dataDir'>, payload: StopPayload, change: string): StopCounter {
  const file = stopCounterFile(store, payload, change);
  if (!payload.stop_hook_active) return { file, blocks: 0, exhausted: false };
  let text: string;
  try {
    text = existsSync(file) ? readFileSync(file, 'utf8') : '0\n';
  } catch (error) {
    throw unavailable(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, error);
  }
  const match = /^(0|[1-9][0-9]{0,2})\n$/.exec(text);
  if (match?.[1] === undefined) throw unavailable('does not hold a count');
  const blocks = Number(match[1]);
  return { file, blocks, exhausted: blocks >= MAX_STOP_CONTINUATIONS };
}

/** Record one more block (HOOK_COUNTER_UNAVAILABLE when it cannot be written). */
export function countStopBlock(counter: StopCounter): void {
  try {
    // The data directory itself must exist (it is never created here): only agent-stop/ is.
    const dir = join(counter.file, '..');
    if (!existsSync(dir)) mkdirSync(dir, { mode: 0o700 });
    const aside = `${counter.file}.${process.pid}.tmp`;
    writeFileSync(aside, `${counter.blocks + 1}\n`, { mode: 0o600 });
    renameSync(aside, counter.file);
  } catch (error) {
    throw unavailable(`cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'})`, error);
  }
}

/** Forget the count after a pass or an exhausted continuation. */
export function clearStopCounter(counter: StopCounter): void {
  try {
    rmSync(counter.file, { force: true });
  } catch (error) {
    throw unavailable(`cannot be removed (${(error as NodeJS.ErrnoException).code ?? 'error'})`, error);
  }
}
