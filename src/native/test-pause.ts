/**
 * Test pause points: when AGENTSCM_TEST_PAUSE_AT names the point a process reaches, it
 * announces `agentscm-test-paused:<point>` on stderr and blocks there, so that a test can
 * SIGKILL it at an exact step of a multi-database operation. Each area lists its own points
 * (src/workspace/test-hooks.ts, src/tasks/test-hooks.ts); with the variable unset a point costs
 * one comparison. With AGENTSCM_TEST_PAUSE_RESUME_FILE also set, the paused process resumes
 * (announcing `agentscm-test-resumed:<point>`) once that file exists, so that a test can act
 * while it is paused and then let it run on.
 */
import { existsSync, writeSync } from 'node:fs';

/** A paused process gives up after this long, so that a failed test cannot leak it forever. */
const PAUSE_LIMIT_MS = 120_000;
/** How often a resumable pause looks for its resume file. */
const RESUME_POLL_MS = 20;

// Read once, when the process starts: a test sets the variable in the environment of the process
// it spawns, and each read of process.env is a call into the C++ environment (task transitions
// pass a point on every call).
const PAUSE_AT = process.env.AGENTSCM_TEST_PAUSE_AT;
const RESUME_FILE = process.env.AGENTSCM_TEST_PAUSE_RESUME_FILE;

/**
 * Straight to file descriptor 2: a point may be reached in the hub's task worker thread
 * (src/hub/task-worker.ts), whose process.stderr is relayed through the main thread's event loop
 * while this thread blocks; a direct write is on the process's stderr before the pause begins.
 */
function announce(line: string): void {
  writeSync(2, `${line}\n`);
}

export function pauseAtTestPoint(point: string): void {
  if (PAUSE_AT !== point) return;
  announce(`agentscm-test-paused:${point}`);
  const cell = new Int32Array(new SharedArrayBuffer(4));
  if (RESUME_FILE !== undefined && RESUME_FILE !== '') {
    const deadline = Date.now() + PAUSE_LIMIT_MS;
    while (Date.now() < deadline) {
      if (existsSync(RESUME_FILE)) {
        announce(`agentscm-test-resumed:${point}`);
        return;
      }
      Atomics.wait(cell, 0, 0, RESUME_POLL_MS);
    }
  } else {
    Atomics.wait(cell, 0, 0, PAUSE_LIMIT_MS);
  }
  announce(`agentscm-test-pause-expired:${point}`);
  // In the hub's task worker this ends the worker thread only; the hub answers INTERNAL.
  process.exit(99);
}
