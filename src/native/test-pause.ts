/**
 * Test pause points: when AGENTSCM_TEST_PAUSE_AT names the point a process reaches, it
 * announces `agentscm-test-paused:<point>` on stderr and blocks there, so that a test can
 * SIGKILL it at an exact step of a multi-database operation. Each area lists its own points
 * (src/workspace/test-hooks.ts, src/tasks/test-hooks.ts); with the variable unset a point costs
 * one comparison.
 */

/** A paused process gives up after this long, so that a failed test cannot leak it forever. */
const PAUSE_LIMIT_MS = 120_000;

// Read once, when the process starts: a test sets the variable in the environment of the process
// it spawns, and each read of process.env is a call into the C++ environment (task transitions
// pass a point on every call).
const PAUSE_AT = process.env.AGENTSCM_TEST_PAUSE_AT;

export function pauseAtTestPoint(point: string): void {
  if (PAUSE_AT !== point) return;
  process.stderr.write(`agentscm-test-paused:${point}\n`);
  const cell = new Int32Array(new SharedArrayBuffer(4));
  Atomics.wait(cell, 0, 0, PAUSE_LIMIT_MS);
  process.stderr.write(`agentscm-test-pause-expired:${point}\n`);
  process.exit(99);
}
