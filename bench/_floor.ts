/**
 * The floor of any Node CLI: `node -e 0`, one bare Node start, measured in the same run as what a
 * bench compares (issue 30: "every bench prints `node -e 0` from the same run as the floor").
 * Each bench times it between its own rounds and prints floorLine() beside its figures.
 */
import { spawn, spawnSync } from 'node:child_process';

/** Wall time of one `node -e 0`, ms (synchronous: for benches that time their CLI with spawnSync). */
export function nodeFloorSync(): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  const ms = performance.now() - start;
  if (result.status !== 0) throw new Error(`node -e 0 exited ${String(result.status)}`);
  return ms;
}

/** Wall time of one `node -e 0`, ms, leaving this process's event loop free meanwhile. */
export function nodeFloor(): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(performance.now() - start);
      else reject(new Error(`node -e 0 exited ${String(code)}`));
    });
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/**
 * One line: the median of `values` (ms, `node -e 0` runs), and `of` (another median, ms, e.g. the
 * bench's old floor or its main figure) as a ratio to it.
 */
export function floorLine(values: readonly number[], of?: { readonly name: string; readonly ms: number }): string {
  const f = median(values);
  const than = of === undefined ? '' : `; ${of.name} is ${(of.ms / f).toFixed(2)}× it`;
  return `floor: node -e 0 (bare Node start, same run) median ${f.toFixed(1)} ms of ${values.length}${than}\n`;
}

/** The floor's median, ms, for a bench's JSON summary. */
export function floorMs(values: readonly number[]): number {
  return Number(median(values).toFixed(1));
}

/** `runs` bare Node starts one after another (for benches that time no process of their own). */
export function floorRuns(runs = 9): number[] {
  return Array.from({ length: runs }, nodeFloorSync);
}
