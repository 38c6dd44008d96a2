import { pauseAtTestPoint } from '../native/test-pause.js';

/**
 * Test hooks (docs/agent-tasks.md "Test hooks"): when AGENTSCM_TEST_PAUSE_AT names one of these
 * points, a task transition announces `agentscm-test-paused:<point>` on stderr and blocks there
 * (resuming once AGENTSCM_TEST_PAUSE_RESUME_FILE exists, when that is set), so that a test can
 * SIGKILL the process or act while it waits:
 * - `task:after-journal-commit`: right after the journal commit, before answering;
 * - `task:before-native-reservation`: after the last authorization of the guard and the journal
 *   BEGIN IMMEDIATE, before the native writer reservation (a grant revoked here must refuse);
 * - `task:in-native-reservation`: holding the reservation, after the grant recheck (a revocation
 *   started here must wait for the commit).
 * With the variable unset a point costs one comparison.
 */
export const TASK_PAUSE_POINTS = [
  'task:after-journal-commit',
  'task:before-native-reservation',
  'task:in-native-reservation',
] as const;
export type TaskPausePoint = (typeof TASK_PAUSE_POINTS)[number];

export function taskPausePoint(point: TaskPausePoint): void {
  pauseAtTestPoint(point);
}
