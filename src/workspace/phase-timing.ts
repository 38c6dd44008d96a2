/**
 * Phase timing of a checkpoint (docs/workspace.md "Performance"): with AGENTSCM_TIMING=1 set,
 * `checkpoint` prints one stderr line per phase when it ends — the milliseconds of wall clock
 * and of CPU time (user + system) it took, and the time since the process started. Without the
 * variable every call is a no-op that reads no clock.
 */

export interface PhaseTimer {
  /** Close the phase running since the last mark (or since creation) under `name`. */
  mark(name: string): void;
  /** Print the phases (stderr) and stop. */
  report(): void;
}

const NOOP: PhaseTimer = {
  mark: () => undefined,
  report: () => undefined,
};

/** A phase timer, live only when AGENTSCM_TIMING=1. */
export function phaseTimer(label: string, env: NodeJS.ProcessEnv = process.env): PhaseTimer {
  if (env.AGENTSCM_TIMING !== '1') return NOOP;
  const lines: string[] = [];
  let wall = performance.now();
  let cpu = process.cpuUsage();
  lines.push(
    `timing ${label}: started ${wall.toFixed(1)} ms after the process ` +
      `(${((cpu.user + cpu.system) / 1000).toFixed(1)} ms cpu)`,
  );
  return {
    mark(name) {
      const nowWall = performance.now();
      const nowCpu = process.cpuUsage();
      const cpuMs = (nowCpu.user - cpu.user + nowCpu.system - cpu.system) / 1000;
      lines.push(
        `timing ${label}: ${name.padEnd(24)} ${(nowWall - wall).toFixed(1).padStart(7)} ms wall ` +
          `${cpuMs.toFixed(1).padStart(7)} ms cpu`,
      );
      wall = nowWall;
      cpu = nowCpu;
    },
    report() {
      const end = process.cpuUsage();
      lines.push(
        `timing ${label}: ended ${performance.now().toFixed(1)} ms after the process ` +
          `(${((end.user + end.system) / 1000).toFixed(1)} ms cpu)`,
      );
      process.stderr.write(`${lines.join('\n')}\n`);
      lines.length = 0;
    },
  };
}
