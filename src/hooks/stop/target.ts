/**
 * The hub an agent-owned Stop hook asks (docs/stop-hooks.md "Agent-owned mode"): the task-stop
 * flags as install-stop writes them and task-stop / task-codex-stop take them — the four that name
 * the hub, its profile and the token, and `--target`, the target whose installed requirement is
 * part of the local subject (the one the hub profile pins; default `main`). Kept apart from
 * install-stop.ts so that the hook does not load the installers' settings merge.
 */
import { isAbsolute } from 'node:path';

import { AgentscmError } from '../../contracts/errors.js';
import { validateId } from '../../contracts/ids.js';

const OWNER_NAME = /^[A-Za-z0-9._-]{1,128}\/[A-Za-z0-9._-]{1,128}$/;

/** The target whose requirement the hook reads when no `--target` is given. */
export const DEFAULT_TASK_STOP_TARGET = 'main';

export interface TaskStopTarget {
  readonly endpoint: string;
  readonly repository: string;
  readonly profile: string;
  readonly tokenFile: string;
  /** The target the hub profile pins (its installed requirement is part of the subject); absent: `main`. */
  readonly target?: string;
}

function usage(message: string, hint: string): AgentscmError {
  return new AgentscmError('USAGE', message, { hint });
}

/** The task-stop flags, as install-stop writes them and task-stop / task-codex-stop take them (USAGE otherwise). */
export function checkTaskStopTarget(task: TaskStopTarget): void {
  let url: URL;
  try {
    url = new URL(task.endpoint);
  } catch {
    throw usage(
      `--endpoint ${JSON.stringify(task.endpoint)} is not a URL`,
      'pass the hub URL, e.g. https://hub.example:8443',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw usage(`--endpoint must be an http or https URL, not ${url.protocol}`, 'pass the hub URL');
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    throw usage(
      '--endpoint must not carry credentials, a query or a fragment',
      'pass the hub URL; the token comes from --token-file',
    );
  if (!OWNER_NAME.test(task.repository))
    throw usage(
      `--repository ${JSON.stringify(task.repository)} is not OWNER/NAME`,
      'pass the repository as OWNER/NAME',
    );
  validateId(task.profile, '--profile');
  if (task.target !== undefined) validateId(task.target, '--target');
  if (!isAbsolute(task.tokenFile))
    throw usage(
      `--token-file must be an absolute path, not ${JSON.stringify(task.tokenFile)}`,
      "the hook runs from the client's working directory; pass the token file's absolute path",
    );
}
