/**
 * What the collector-setup tests share: the runtime flags of the local engine, the placeholder
 * substitution of the printed agent commands and a fingerprint of the store rows a refusal must
 * leave alone.
 */
import Database from 'better-sqlite3';

import { nativePaths } from '../../src/native/store.js';
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
