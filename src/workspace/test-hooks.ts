import { pauseAtTestPoint } from '../native/test-pause.js';

/**
 * Test hook (docs/workspace.md "Test hooks"): when AGENTSCM_TEST_PAUSE_AT names a pause point,
 * the process announces `agentscm-test-paused:<point>` on stderr and blocks there, so that a
 * test can SIGKILL it at an exact step of a two-database operation. Honoured only at the
 * points listed in PAUSE_POINTS; with the variable unset it costs one comparison.
 */
export const PAUSE_POINTS = [
  'init:after-pending',
  'init:after-authority',
  'checkpoint:after-scan',
  'checkpoint:in-blob-transaction',
  'checkpoint:after-pending',
  'checkpoint:in-authority-transaction',
  'checkpoint:after-authority',
] as const;

export type PausePoint = (typeof PAUSE_POINTS)[number];

export function pausePoint(point: PausePoint): void {
  pauseAtTestPoint(point);
}
