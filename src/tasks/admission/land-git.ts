/**
 * `land` with its git mirror (docs/admission.md, docs/git.md "Landing to git"): the native landing commits first
 * (landChange); then, when the target is linked to a git branch, every pending landing of it is written to git. A
 * git failure leaves the native landing as it is and the mirror pending (reported, not thrown): the next `land` or
 * `doctor --fix` writes it with the same commit ID.
 */
import { isAgentscmError, type AgentscmError } from '../../contracts/errors.js';
import { mirrorTarget, type MirrorReport } from '../../git/land-mirror.js';
import type { Store } from '../../native/store-handle.js';
import { pauseAtTestPoint } from '../../native/test-pause.js';
import { landChange, type AdmissionSelection, type LandResult } from './admission.js';

/** Test pause point (src/native/test-pause.ts): the native landing committed, its git mirror not written yet. */
export const LAND_GIT_PAUSE_POINT = 'admission:land-before-git';

export type GitMirrorState =
  | { readonly state: 'written'; readonly commit: string | null; readonly report: MirrorReport }
  | { readonly state: 'pending'; readonly error: AgentscmError };

export interface LandWithGitResult extends LandResult {
  /** null: the target is not linked to git. */
  readonly git: GitMirrorState | null;
}

/** Mirror a target's pending landings; a failure is the pending state with its error. */
export function mirrorLandings(store: Store, repository: string, target: string, nowMs: number): GitMirrorState | null {
  try {
    const report = mirrorTarget(store.authority(), repository, target, nowMs);
    if (report === null) return null;
    return { state: 'written', commit: report.head, report };
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    return { state: 'pending', error };
  }
}

/** `agentscm land`: landChange, then the git mirror of the target when it is linked. */
export function landWithGit(store: Store, input: AdmissionSelection): LandWithGitResult {
  const landed = landChange(store, input);
  pauseAtTestPoint(LAND_GIT_PAUSE_POINT);
  const git = mirrorLandings(store, landed.landing.repository, landed.landing.target, Date.now());
  return { ...landed, git };
}
