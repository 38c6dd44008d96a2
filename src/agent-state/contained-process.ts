/**
 * runContainedProcess (docs/agent-state.md "Containment"): on POSIX the command runs
 * in a new process group, held behind a bootstrap until the group is confirmed, and the whole
 * group is terminated after the root exits or times out, so descendants cannot outlive the
 * observation window. An attachment failure keeps the real command from starting. The result
 * carries structured containment evidence.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';

/** The bootstrap waits on fd 3 for the go byte, closes it, then becomes the real command. */
const BOOTSTRAP = 'IFS= read -r _ <&3 || exit 125; exec 3<&-; exec "$@"';

export interface ContainedOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Milliseconds before the group is terminated; 0 or undefined: no time-out. */
  readonly timeoutMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL (default 2000). */
  readonly graceMs?: number;
  /** Where the command's stdout goes: this process's stdout, or its stderr (so --json stdout stays one document). */
  readonly stdout: 'inherit' | 'stderr';
  /** Fault injection for tests: decides whether the new group counts as attached. */
  readonly verifyGroup?: (pgid: number) => boolean;
}

export interface ContainmentEvidence {
  readonly method: 'posix-process-group';
  /** The new process group (= the root's pid), or null when the process could not be spawned. */
  readonly process_group: number | null;
  readonly attached: boolean;
  readonly started: boolean;
  /** Live members of the group other than the root when the root exited or timed out. */
  readonly descendants_at_root_exit: readonly number[];
  readonly signals_sent: readonly ('SIGTERM' | 'SIGKILL')[];
  /** Signals agentscm received during the run and passed on to the group. */
  readonly signals_forwarded: readonly ForwardedSignal[];
  /** True when no live member remained at the end of the observation window. */
  readonly group_empty: boolean;
  readonly error: string | null;
}

export interface ContainedResult {
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly timed_out: boolean;
  readonly duration_ms: number;
  readonly containment: ContainmentEvidence;
}

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type ForwardedSignal = (typeof FORWARDED_SIGNALS)[number];

const PROC = '/proc';
const HAS_PROC = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/** Live (not zombie) members of a process group; on hosts without /proc, [pgid] when the group exists. */
export function liveGroupMembers(pgid: number): number[] {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return [];
  }
  if (!HAS_PROC) return [pgid];
  const members: number[] = [];
  for (const name of readdirSync(PROC)) {
    if (!/^[0-9]+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`${PROC}/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    // Fields after the command name (which may contain spaces and parentheses): state ppid pgrp.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') members.push(Number(name));
  }
  return members;
}

function signalGroup(pgid: number, signal: 'SIGTERM' | 'SIGKILL'): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitEmpty(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (liveGroupMembers(pgid).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}

function defaultVerifyGroup(pgid: number): boolean {
  // A group whose id is the child's pid exists only if the child leads it (setsid succeeded).
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Run a command contained in a new process group (docs/agent-state.md "Containment"). */
export async function runContainedProcess(options: ContainedOptions): Promise<ContainedResult> {
  const started = Date.now();
  const graceMs = options.graceMs ?? 2000;
  if (process.platform === 'win32') {
    return {
      exit_code: null,
      signal: null,
      timed_out: false,
      duration_ms: 0,
      containment: {
        method: 'posix-process-group',
        process_group: null,
        attached: false,
        started: false,
        descendants_at_root_exit: [],
        signals_sent: [],
        signals_forwarded: [],
        group_empty: true,
        error: 'process-group containment needs a POSIX host',
      },
    };
  }
  const child = spawn('/bin/sh', ['-c', BOOTSTRAP, 'agentscm-contained', options.command, ...options.args], {
    cwd: options.cwd,
    detached: true,
    stdio: ['inherit', options.stdout === 'stderr' ? 2 : 'inherit', 'inherit', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const spawnError = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (error) => resolve(error));
  });
  const pgid = child.pid ?? null;
  const gate = child.stdio[3] as Writable | null;
  const notStarted = (error: string, attached: boolean): ContainedResult => ({
    exit_code: null,
    signal: null,
    timed_out: false,
    duration_ms: Date.now() - started,
    containment: {
      method: 'posix-process-group',
      process_group: pgid,
      attached,
      started: false,
      descendants_at_root_exit: [],
      signals_sent: [],
      signals_forwarded: [],
      group_empty: pgid === null ? true : liveGroupMembers(pgid).length === 0,
      error,
    },
  });
  if (spawnError !== null || pgid === null || gate === null)
    return notStarted(`spawn failed: ${spawnError?.message ?? 'no pid'}`, false);
  const verify = options.verifyGroup ?? defaultVerifyGroup;
  if (!verify(pgid)) {
    // The bootstrap is still waiting on fd 3: the real command never ran. Kill it by group and
    // by pid (without a group, only the latter reaches it); a closed fd 3 also makes it exit.
    signalGroup(pgid, 'SIGKILL');
    try {
      process.kill(pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    gate.destroy();
    await exited;
    return notStarted(`the process group ${pgid} could not be confirmed; the command was not started`, false);
  }
  // The group is not in the terminal's foreground: a Ctrl-C, a hang-up or a SIGTERM sent to
  // agentscm is passed on to the group, and the run still ends normally (group terminated, lease
  // released, state reported).
  const forwarded: ForwardedSignal[] = [];
  const forward = (signal: ForwardedSignal): void => {
    forwarded.push(signal);
    try {
      process.kill(-pgid, signal);
    } catch {
      // The group is already gone.
    }
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  gate.end('go\n');
  gate.on('error', () => undefined);

  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    if (options.timeoutMs !== undefined && options.timeoutMs > 0)
      timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
  });
  const first = await Promise.race([exited, timeout]);
  if (timer !== undefined) clearTimeout(timer);
  const signals: ('SIGTERM' | 'SIGKILL')[] = [];
  let descendants: number[];
  if (first === 'timeout') {
    timedOut = true;
    descendants = liveGroupMembers(pgid).filter((pid) => pid !== pgid);
  } else {
    descendants = liveGroupMembers(pgid);
  }
  let empty = liveGroupMembers(pgid).length === 0;
  if (!empty) {
    signalGroup(pgid, 'SIGTERM');
    signals.push('SIGTERM');
    empty = await waitEmpty(pgid, graceMs);
    if (!empty) {
      signalGroup(pgid, 'SIGKILL');
      signals.push('SIGKILL');
      empty = await waitEmpty(pgid, 2000);
    }
  }
  const root = await exited;
  for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
  return {
    exit_code: root.code,
    signal: root.signal,
    timed_out: timedOut,
    duration_ms: Date.now() - started,
    containment: {
      method: 'posix-process-group',
      process_group: pgid,
      attached: true,
      started: true,
      descendants_at_root_exit: descendants,
      signals_sent: signals,
      signals_forwarded: forwarded,
      group_empty: empty,
      error: null,
    },
  };
}
