/**
 * The `--change` form of `skill-workflow run` and `skill-workflow plan` (docs/skill-workflows.md
 * "Running a target's requirement on a Change"): the flags, and the check that the command line
 * uses one form — a definition FILE, or --change — and not both or neither.
 */
import { Flags } from '@oclif/core';

import { repositoryFlag } from '../_base.js';
import { AgentscmError } from '../../contracts/errors.js';

export const changeFlags = {
  change: Flags.string({
    description:
      "Compile the target's installed requirement for this Change's current version instead of reading a FILE.",
    helpValue: 'ID',
  }),
  target: Flags.string({
    description: 'With --change: the target whose installed requirement is compiled (default: main).',
    helpValue: 'NAME',
  }),
  context: Flags.string({
    description:
      'With --change: digest (or unique prefix) of the review context the command steps bind (default: the only one ' +
      "of the Change's current version at the current policy epoch).",
    helpValue: 'DIGEST',
  }),
  repository: repositoryFlag,
};

export interface ChangeFlagValues {
  readonly change?: string | undefined;
  readonly target?: string | undefined;
  readonly context?: string | undefined;
  readonly repository?: string | undefined;
}

/** Refuse a command line that mixes the two forms; `usage` is the command's two usage lines. */
export function checkChangeForm(flags: ChangeFlagValues, file: string | undefined, usage: string): void {
  if (flags.change !== undefined && file !== undefined) {
    throw new AgentscmError('USAGE', 'a definition FILE and --change exclude each other', { hint: usage });
  }
  if (flags.change === undefined) {
    const stray = (['target', 'context', 'repository'] as const).filter((name) => flags[name] !== undefined);
    if (stray.length > 0) {
      throw new AgentscmError('USAGE', `--${stray.join(', --')} only goes with --change`, { hint: usage });
    }
    if (file === undefined) throw new AgentscmError('USAGE', 'pass a definition FILE or --change ID', { hint: usage });
  }
}
