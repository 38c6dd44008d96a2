import { pauseAtTestPoint } from '../native/test-pause.js';

/**
 * Test hook (docs/agent-tasks.md "Test hooks"): when AGENTSCM_TEST_PAUSE_AT is
 * `task:after-journal-commit`, a task transition announces `agentscm-test-paused:<point>` on
 * stderr right after its journal commit and blocks before answering, so that a test can SIGKILL
 * the process between the commit and the response. With the variable unset it costs one
 * comparison.
 */
export const TASK_PAUSE_POINTS = ['task:after-journal-commit'] as const;
export type TaskPausePoint = (typeof TASK_PAUSE_POINTS)[number];

export function taskPausePoint(point: TaskPausePoint): void {
  pauseAtTestPoint(point);
}
