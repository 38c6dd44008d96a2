/**
 * The one path of an agent whose step has an installed collector profile (docs/agent-tasks.md
 * "One path for the agent"): which profile a step's task is collected under, and the exact
 * `agent-task claim` and `agent-task collect` command lines — every argument filled in, with the
 * state directory and key the operator configured with `agentscm agent-task collector add` — that
 * `next`, `qualification` and the Stop feedback print. The agent runs both on the operator's
 * machine, against the local data directory.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { listCollectorProfiles } from './collector-profiles.js';
import { findCollectorSetup } from './collector-setups.js';
import { getRegistration } from './executor-registry.js';
import type { Store } from './store-handle.js';
import { readTransaction, type Authority } from './store.js';

/** At most this many descriptor names are tried for one task (one per attempt; a task has at most 64). */
const MAX_DESCRIPTOR_NAMES = 64;

/**
 * The newest installed command profile of a step whose registration is current (the profile a
 * claim of the step's task must use), or null when the step has none.
 */
export function stepCollectorProfileId(
  auth: Authority,
  scope: { readonly repository: string; readonly workflow_profile: string; readonly step: string },
): string | null {
  return readTransaction(auth, () => {
    let found: string | null = null;
    for (const installed of listCollectorProfiles(auth)) {
      const profile = installed.profile;
      if (profile.kind !== 'command' || profile.repository_id !== scope.repository) continue;
      if (profile.workflow_profile !== scope.workflow_profile || profile.step_id !== scope.step) continue;
      if (!getRegistration(auth, profile.registration_id).current) continue;
      found = installed.collector_profile_id;
    }
    return found;
  });
}

/** What the two command lines of one collector claim are built from. */
export interface CollectorCommandInput {
  /** The data directory the agent's claim and collect use (the operator's local one). */
  readonly data_dir: string;
  readonly collector_profile_id: string;
  readonly change_id: string;
  readonly context_digest: string;
  readonly task_id: string;
  readonly target: string;
  /** The agent's grant token file. */
  readonly token_file: string;
}

/**
 * A descriptor file that does not exist yet, in the collector's state directory: `TASK.N.descriptor.json`
 * for the first free N (a descriptor is never overwritten, so a later attempt of the task gets the next name).
 */
function freshDescriptor(stateDir: string, taskId: string): string {
  for (let n = 1; n < MAX_DESCRIPTOR_NAMES; n++) {
    const file = join(stateDir, `${taskId}.${n}.descriptor.json`);
    if (!existsSync(file)) return file;
  }
  return join(stateDir, `${taskId}.${MAX_DESCRIPTOR_NAMES}.descriptor.json`);
}

/**
 * The argv of the claim and the collect (each starting with `agentscm`), or null when the profile
 * has no recorded setup (installed from a file with `profile install`: the operator knows the key).
 */
export function collectorCommands(auth: Authority, input: CollectorCommandInput): string[][] | null {
  const setup = findCollectorSetup(auth, input.collector_profile_id);
  if (setup === null) return null;
  const base = ['agentscm', '--data-dir', resolve(input.data_dir), 'agent-task'];
  const tokenFile = resolve(input.token_file);
  const descriptor = freshDescriptor(setup.state_dir, input.task_id);
  return [
    [
      ...base,
      'claim',
      '--profile',
      input.collector_profile_id,
      '--change',
      input.change_id,
      '--context',
      input.context_digest,
      '--task',
      input.task_id,
      ...(input.target === 'main' ? [] : ['--target', input.target]),
      '--token-file',
      tokenFile,
      '--out',
      descriptor,
    ],
    [
      ...base,
      'collect',
      '--descriptor',
      descriptor,
      '--key',
      setup.key_file,
      '--state-dir',
      setup.state_dir,
      '--docker',
      setup.docker,
      '--docker-socket',
      setup.docker_socket,
      '--token-file',
      tokenFile,
    ],
  ];
}

/** One argv as a POSIX shell line: a word with a character the shell treats specially is single-quoted. */
export function shellCommandLine(argv: readonly string[]): string {
  return argv
    .map((word) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`))
    .join(' ');
}

/**
 * The command lines of a `next` answer (`agent-task call next`, which always has the agent's token file): the claim
 * and collect argv of a collector_claim whose profile has a recorded setup, else none. The same builder as
 * qualification's `next.commands`, fed from the answer's own subject.
 */
export function nextAnswerCommands(store: Store, answer: JsonValue, tokenFile: string): string[][] {
  if (!isJsonObject(answer) || !isJsonObject(answer.next) || !isJsonObject(answer.subject)) return [];
  const { next, subject } = answer;
  if (next.operation !== 'collector_claim') return [];
  const [taskId, profileId, changeId, contextDigest, target] = [
    next.task_id,
    next.collector_profile_id,
    subject.change_id,
    subject.context_digest,
    subject.target,
  ];
  if (
    typeof taskId !== 'string' ||
    typeof profileId !== 'string' ||
    typeof changeId !== 'string' ||
    typeof contextDigest !== 'string' ||
    typeof target !== 'string'
  )
    return [];
  const auth = store.authority();
  return readTransaction(
    auth,
    () =>
      collectorCommands(auth, {
        data_dir: store.dataDir,
        collector_profile_id: profileId,
        change_id: changeId,
        context_digest: contextDigest,
        task_id: taskId,
        target,
        token_file: tokenFile,
      }) ?? [],
  );
}
