/**
 * Where the operator set up the collector of an installed command profile (migration 012;
 * docs/agent-tasks.md "One path for the agent"): the state directory, the key file and the
 * runtime flags `collector add` used. `next`, `qualification` and the Stop feedback read them back
 * to print the exact claim and collect command lines the agent runs on the operator's machine.
 */
import { prepared, readTransaction, writeTransaction, type Authority } from './store.js';

/** One profile's recorded collector setup (absolute paths, as `collector add` resolved them). */
export interface CollectorSetup {
  readonly collector_profile_id: string;
  readonly state_dir: string;
  readonly key_file: string;
  readonly docker: string;
  readonly docker_socket: string;
  readonly recorded_at_ms: number;
}

/** Record (or replace) the setup of an installed profile. */
export function recordCollectorSetup(auth: Authority, setup: CollectorSetup): void {
  writeTransaction(auth, () => {
    prepared(
      auth,
      `INSERT INTO collector_setups (collector_profile_id, state_dir, key_file, docker, docker_socket, recorded_at_ms)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (collector_profile_id) DO UPDATE SET state_dir = excluded.state_dir,
         key_file = excluded.key_file, docker = excluded.docker, docker_socket = excluded.docker_socket,
         recorded_at_ms = excluded.recorded_at_ms`,
    ).run(
      setup.collector_profile_id,
      setup.state_dir,
      setup.key_file,
      setup.docker,
      setup.docker_socket,
      setup.recorded_at_ms,
    );
  });
}

/** The recorded setup of a profile, or null (a profile installed from a file, or before step 012). */
export function findCollectorSetup(auth: Authority, profileId: string): CollectorSetup | null {
  return readTransaction(auth, () => {
    const row = prepared(
      auth,
      `SELECT collector_profile_id, state_dir, key_file, docker, docker_socket, recorded_at_ms
       FROM collector_setups WHERE collector_profile_id = ?`,
    ).get(profileId) as CollectorSetup | undefined;
    return row ?? null;
  });
}
