/**
 * Doctor's git finding (docs/doctor.md "git", docs/git.md "Repair after a crash"): every target linked to a git
 * branch with landings not yet written to git is GIT_MIRROR_PENDING; `doctor --fix` writes them through the one
 * mirror `land` uses (src/git/land-mirror.ts), giving the commit IDs the interrupted landing would have written.
 */
import { mirrorTarget } from '../git/land-mirror.js';
import { listGitLinks, pendingMirrors } from '../native/git-targets.js';
import { readTransaction, type Authority } from '../native/store.js';
import { describeError, finding, passed, type DoctorFinding } from './finding.js';

/** One finding per linked target: pending mirrors, or in step with git. None when no target is linked. */
export function checkGitMirrors(auth: Authority | null): DoctorFinding[] {
  if (auth === null) return [];
  return readTransaction(auth, () =>
    listGitLinks(auth).map((link) => {
      const pending = pendingMirrors(auth, link).length;
      const subject = `target ${link.target} (git ${link.git_repo} branch ${link.branch})`;
      return pending === 0
        ? passed('git', `${subject}: every landing is written to git`)
        : finding(
            'git',
            'GIT_MIRROR_PENDING',
            `${subject}: ${String(pending)} landing${pending === 1 ? ' is' : 's are'} not written to git yet`,
            `agentscm --data-dir ${auth.dataDir} doctor --fix`,
          );
    }),
  );
}

/** `doctor --fix`: write every pending mirror; one finding per linked target. */
export function repairGitMirrors(auth: Authority, nowMs: number): DoctorFinding[] {
  return listGitLinks(auth).map((link) => {
    const subject = `target ${link.target} (git ${link.git_repo} branch ${link.branch})`;
    try {
      const report = mirrorTarget(auth, link.repository, link.target, nowMs);
      const written = report?.written ?? [];
      return passed(
        'git',
        written.length === 0
          ? `${subject}: nothing to write`
          : `${subject}: wrote ${String(written.length)} pending landing${written.length === 1 ? '' : 's'}, branch ` +
              `at ${report?.head ?? '(none)'}`,
      );
    } catch (error) {
      const { code, message } = describeError(error);
      return finding(
        'git',
        'GIT_MIRROR_FAILED',
        `${subject}: ${code}: ${message}`,
        'follow the hint of the code in docs/errors.md "git", then run doctor --fix again',
      );
    }
  });
}
