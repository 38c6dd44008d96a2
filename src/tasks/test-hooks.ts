/**
 * Test hook (docs/agent-tasks.md "Test hooks"): when AGENTSCM_TEST_PAUSE_AT is
 * `task:after-journal-commit`, a task transition announces `agentscm-test-paused:<point>` on
 * stderr right after its journal commit and blocks before answering, so that a test can SIGKILL
 * the process between the commit and the response. With the variable unset it costs one
 * comparison.
 */
export const TASK_PAUSE_POINTS = ['task:after-journal-commit'] as const;
export type TaskPausePoint = (typeof TASK_PAUSE_POINTS)[number];

const PAUSE_LIMIT_MS = 120_000;

export function taskPausePoint(point: TaskPausePoint): void {
  if (process.env.AGENTSCM_TEST_PAUSE_AT !== point) return;
  process.stderr.write(`agentscm-test-paused:${point}\n`);
  const cell = new Int32Array(new SharedArrayBuffer(4));
  Atomics.wait(cell, 0, 0, PAUSE_LIMIT_MS);
  process.stderr.write(`agentscm-test-pause-expired:${point}\n`);
  process.exit(99);
}
