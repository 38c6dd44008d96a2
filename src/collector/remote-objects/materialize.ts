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
import type { TreeEntry } from '../../contracts/tree.js';
import { checkSnapshotSize, SNAPSHOT_LIMITS, SnapshotWriter, type SnapshotResult } from '../snapshot.js';
import type { ObjectCache } from './cache.js';
import type { ObjectClient } from './client.js';

export interface FetchedFile {
  readonly path: string;
  readonly mode: 'file' | 'executable' | 'symlink';
  readonly blob: string;
}

/**
 * Every file of the revision (trees fetched and checked, one batch request per level of the
 * tree), in whole-path byte order.
 */
export async function fetchRevisionFiles(client: ObjectClient, revision: string): Promise<FetchedFile[]> {
  const root = await client.revisionTree(revision);
  const entriesOf = new Map<string, TreeEntry[]>();
  let level = [root];
  let files = 0;
  while (level.length > 0) {
    const fetched = await client.trees(level);
    const next = new Set<string>();
    for (const [digest, entries] of fetched) {
      entriesOf.set(digest, entries);
      for (const entry of entries) {
        if (entry.kind !== 'directory') files += 1;
        else if (!entriesOf.has(entry.digest)) next.add(entry.digest);
      }
      if (files > SNAPSHOT_LIMITS.maxEntries) checkSnapshotSize(revision, files, 0n);
    }
    level = [...next];
  }
  const out: FetchedFile[] = [];
  const walk = (digest: string, prefix: string): void => {
    for (const entry of entriesOf.get(digest) ?? []) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      const problem = workspacePathProblem(path);
      if (problem !== undefined) throw objectMismatch(`tree ${digest} names a path that ${problem}`);
      if (entry.kind === 'directory') walk(entry.digest, path);
      else out.push({ path, mode: entry.kind, blob: entry.digest });
      if (out.length > SNAPSHOT_LIMITS.maxEntries) checkSnapshotSize(revision, out.length, 0n);
    }
  };
  walk(root, '');
  return out;
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
