/**
 * What the collector-setup tests share: the runtime flags of the local engine, the placeholder
 * substitution of the printed agent commands and a fingerprint of the store rows a refusal must
 * leave alone.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { nativePaths } from '../../src/native/store.js';
import { jsonOf, type CliResult } from '../helpers/cli.js';
import { DOCKER_EXE, DOCKER_SOCKET } from '../support/runtime.js';

export const RUNTIME = ['--docker', DOCKER_EXE, '--docker-socket', DOCKER_SOCKET] as const;

/** The printed argv with its placeholders replaced, without the leading `agentscm`. */
export function substitute(argv: readonly string[], values: Readonly<Record<string, string>>): string[] {
  const [bin, ...rest] = argv;
  if (bin !== 'agentscm') throw new Error(`a printed command starts with agentscm, not ${String(bin)}`);
  return rest.map((word) => values[word] ?? word);
}

/** Every executor registration, revocation and installed collector profile of the store, in order. */
export function storeRows(dataDir: string): string {
  const db = new Database(nativePaths(dataDir).db, { readonly: true });
  try {
    return JSON.stringify([
      db.prepare('SELECT * FROM executor_registrations ORDER BY seq').all(),
      db.prepare('SELECT * FROM executor_revocations ORDER BY seq').all(),
      db.prepare('SELECT collector_profile_id FROM collector_profiles ORDER BY collector_profile_id').all(),
    ]);
  } finally {
    db.close();
  }
}

/**
 * `agent-task collector add --step STEP` for a scenario, into a state directory with a space in its
 * name (so printed command lines must quote it): the directory and the installed profile's ID.
 */
export async function addCollector(
  s: { readonly root: string; cli: (args: readonly string[]) => Promise<CliResult> },
  step = 'check',
): Promise<{ stateDir: string; profileId: string }> {
  const stateDir = join(s.root, 'collector state');
  const added = await s.cli([
    'agent-task',
    'collector',
    'add',
    '--step',
    step,
    '--state-dir',
    stateDir,
    ...RUNTIME,
    '--json',
  ]);
  if (added.code !== 0) throw new Error(`collector add failed (exit ${String(added.code)}): ${added.stderr}`);
  return { stateDir, profileId: jsonOf<{ collector_profile_id: string }>(added).collector_profile_id };
}
