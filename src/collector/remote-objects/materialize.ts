/**
 * Materialize a claimed revision on a collector host with no copy of the store (docs/collect.md
 * "Collecting on another host"): its revision object, every tree from the root down and every
 * blob are fetched by digest and checked (client.ts) into the object cache before the first file
 * of the snapshot is written; the snapshot is then written from the cache by the same writer as
 * a local one (snapshot.ts), with the same bounds. Any refusal leaves no snapshot.
 */
import { objectMismatch } from '../../contracts/collector/object-batch.js';
import { AgentscmError } from '../../contracts/errors.js';
import { workspacePathProblem } from '../../contracts/paths.js';
import { checkSnapshotSize, SNAPSHOT_LIMITS, SnapshotWriter, type SnapshotResult } from '../snapshot.js';
import type { ObjectCache } from './cache.js';
import type { ObjectClient } from './client.js';

export interface FetchedFile {
  readonly path: string;
  readonly mode: 'file' | 'executable' | 'symlink';
  readonly blob: string;
}

/** Every file of the revision (trees fetched and checked), in whole-path byte order. */
export async function fetchRevisionFiles(client: ObjectClient, revision: string): Promise<FetchedFile[]> {
  const files: FetchedFile[] = [];
  const walk = async (digest: string, prefix: string): Promise<void> => {
    for (const entry of await client.tree(digest)) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      const problem = workspacePathProblem(path);
      if (problem !== undefined) throw objectMismatch(`tree ${digest} names a path that ${problem}`);
      if (entry.kind === 'directory') {
        await walk(entry.digest, path);
        continue;
      }
      files.push({ path, mode: entry.kind, blob: entry.digest });
      if (files.length > SNAPSHOT_LIMITS.maxEntries) checkSnapshotSize(revision, files.length, 0n);
    }
  };
  await walk(await client.revisionTree(revision), '');
  return files;
}

/** Fetch what the cache lacks of `revision`: its trees and every blob; its files, in path order. */
export async function fetchRevision(client: ObjectClient, revision: string): Promise<FetchedFile[]> {
  const files = await fetchRevisionFiles(client, revision);
  await client.blobs(files.map((file) => file.blob));
  return files;
}

/** Write fetched files to parent/<digest> from the verified objects of the cache. */
export function writeFetchedSnapshot(
  cache: ObjectCache,
  files: readonly FetchedFile[],
  input: { revision: string; parent: string; digest: string },
): SnapshotResult {
  const writer = new SnapshotWriter(input.parent, input.digest);
  try {
    for (const file of files) {
      const bytes = cache.read('blobs', file.blob);
      if (bytes === null)
        throw new AgentscmError(
          'REMOTE_HUB_UNAVAILABLE',
          `blob ${file.blob} left the object cache while it was written`,
          {
            hint: 'collect again',
          },
        );
      checkSnapshotSize(input.revision, writer.entries, writer.bytes + BigInt(bytes.byteLength));
      writer.write(file, [bytes]);
    }
    return writer.finish();
  } catch (error) {
    throw writer.abort(error, input.revision);
  }
}

/** Fetch what the cache lacks of `revision`, then write it to parent/<digest> from verified objects. */
export async function materializeRemoteSnapshot(
  client: ObjectClient,
  cache: ObjectCache,
  input: { revision: string; parent: string; digest: string },
): Promise<SnapshotResult> {
  return writeFetchedSnapshot(cache, await fetchRevision(client, input.revision), input);
}
