/**
 * Where a command collection reads what the authority binds and the revision it runs on
 * (docs/collect.md "Collecting on another host"): the local store of --data-dir, or, with
 * --endpoint and no local store, the hub — the descriptor checked there against the authority
 * as a local collect checks it, the revision fetched by digest into the verified object cache.
 * Neither given: REMOTE_STORE_MISSING, before anything runs.
 */
import type { CollectorDescriptor } from '../../contracts/collector/descriptor.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import type { Store } from '../../native/store-handle.js';
import { checkDescriptorAgainstAuthority } from '../collect-check.js';
import type { RequestBinding } from '../collect-request.js';
import { materializeSnapshot, type SnapshotResult } from '../snapshot.js';
import { ObjectCache } from './cache.js';
import { ObjectClient } from './client.js';
import { fetchRevision, writeFetchedSnapshot, type FetchedFile } from './materialize.js';

export interface RevisionSource {
  /** True when the hub stands in for a local store. */
  readonly remote: boolean;
  /** The descriptor checked against the authority (before the run and again before signing). */
  check(): Promise<RequestBinding>;
  /**
   * Before anything is reserved or run: every object of the claimed revision fetched and checked
   * (a refusal ends the collection here, with nothing run). Nothing to do with a local store.
   */
  prefetch(): Promise<void>;
  /** The claimed revision written to parent/<digest>. */
  materialize(parent: string, digest: string): Promise<SnapshotResult>;
}

/** True when the store of --data-dir exists (its authority opens). */
export function hasLocalStore(store: Store): boolean {
  try {
    store.authority();
    return true;
  } catch (error) {
    if (isAgentscmError(error, 'STORE_NOT_INITIALIZED')) return false;
    throw error;
  }
}

export function revisionSourceOf(input: {
  readonly store: Store;
  readonly endpoint: string | undefined;
  readonly token: string;
  readonly stateDir: string;
  readonly descriptor: CollectorDescriptor;
  readonly descriptorBytes: Buffer;
  readonly onFetched?: (message: string) => void;
}): RevisionSource {
  const { store, descriptor } = input;
  if (hasLocalStore(store)) {
    return {
      remote: false,
      check: () => Promise.resolve(checkDescriptorAgainstAuthority(store, descriptor, input.token)),
      prefetch: () => Promise.resolve(),
      materialize: (parent, digest) =>
        Promise.resolve(
          materializeSnapshot(store.authority(), {
            repository: descriptor.repository_id,
            revision: descriptor.subject.revision,
            parent,
            digest,
          }),
        ),
    };
  }
  if (input.endpoint === undefined) {
    throw new AgentscmError(
      'REMOTE_STORE_MISSING',
      `there is no agentscm store at ${store.dataDir} and no hub to fetch the claimed revision from`,
      {
        hint:
          "on the store's host pass --data-dir DIR; on another host pass --endpoint URL, the hub's agent-tasks " +
          'URL of the profile',
      },
    );
  }
  const cache = new ObjectCache(input.stateDir);
  const client = new ObjectClient({
    endpoint: input.endpoint,
    token: input.token,
    attemptId: descriptor.attempt.attempt_id,
    cache,
  });
  let files: readonly FetchedFile[] | null = null;
  const fetch = async (): Promise<readonly FetchedFile[]> => {
    files ??= await fetchRevision(client, descriptor.subject.revision);
    return files;
  };
  return {
    remote: true,
    check: () => client.check(input.descriptorBytes),
    prefetch: async () => {
      await fetch();
      const { requests, bytes, objects } = client.stats;
      input.onFetched?.(`fetched ${objects} objects (${bytes} bytes in ${requests} requests) from the hub`);
    },
    materialize: async (parent, digest) =>
      writeFetchedSnapshot(cache, await fetch(), { revision: descriptor.subject.revision, parent, digest }),
  };
}
