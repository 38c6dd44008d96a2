/**
 * One timed child process of a bench: wall time, CPU time and peak resident set. CPU and RSS come
 * from getrusage of the child as GNU time (/usr/bin/time) reports them, so nothing is loaded into
 * the child that it would not load anyway (an --import probe would start Node's ESM loader even in
 * `node -e 0` and raise the floor). Where /usr/bin/time is missing, a probe module loaded before
 * the entry writes the same figures at exit to fd 3 instead.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface ChildTiming {
  /** Wall time of the whole process, ms. */
  readonly wall: number;
  /** CPU time the process used (user + system, every thread), ms. */
  readonly cpu: number;
  /** Peak resident set of the process, KiB. */
  readonly maxRssKiB: number;
}

export const PROBE = `data:text/javascript,${encodeURIComponent(
  'import{writeSync}from"node:fs";process.on("exit",()=>{const u=process.resourceUsage();' +
    'try{writeSync(3,`${u.userCPUTime+u.systemCPUTime} ${u.maxRSS}`)}catch{}});',
)}`;

export interface TimedRun {
  /** Arguments of node: the entry (and any node flags before it) and its arguments. */
  readonly args: readonly string[];
  readonly input?: Buffer | null;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Judges the run; a run that fails it is an error of the bench. */
  readonly check?: (result: { code: number | null; stdout: string; stderr: string }) => boolean;
}

const GNU_TIME = '/usr/bin/time';
const TIME_MARK = 'agentscm-bench-rusage';

/** Run `node ...args` once, asynchronously (a hub in this process keeps answering). */
export function timedNode(run: TimedRun): Promise<ChildTiming> {
  const gnu = existsSync(GNU_TIME);
  const [file, args] = gnu
    ? [GNU_TIME, ['-f', `${TIME_MARK} %U %S %M`, process.execPath, ...run.args]]
    : [process.execPath, ['--import', PROBE, ...run.args]];
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: run.env ?? process.env,
      ...(run.cwd === undefined ? {} : { cwd: run.cwd }),
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let probe = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (probe += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = performance.now() - start;
      let figures: { cpu: number; maxRssKiB: number } | null = null;
      if (gnu) {
        // GNU time appends its line to the child's stderr (and says so when the child exits non-zero).
        const mark = stderr.lastIndexOf(TIME_MARK);
        const line = /^agentscm-bench-rusage ([0-9.]+) ([0-9.]+) ([0-9]+)\n?$/.exec(mark < 0 ? '' : stderr.slice(mark));
        if (line !== null) figures = { cpu: (Number(line[1]) + Number(line[2])) * 1000, maxRssKiB: Number(line[3]) };
        stderr = (mark < 0 ? stderr : stderr.slice(0, mark)).replace(/Command exited with non-zero status \d+\n$/, '');
      } else {
        const line = /^([0-9]+) ([0-9]+)$/.exec(probe);
        if (line !== null) figures = { cpu: Number(line[1]) / 1000, maxRssKiB: Number(line[2]) };
      }
      const ok = run.check === undefined ? code === 0 : run.check({ code, stdout, stderr });
      if (!ok || figures === null)
        reject(new Error(`node ${run.args.join(' ')} exited ${String(code)}: ${stdout}${stderr}`));
      else resolve({ wall, ...figures });
    });
    child.stdin.end(run.input ?? undefined);
  });
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
