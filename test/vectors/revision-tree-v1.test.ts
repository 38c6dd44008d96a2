/**
 * The revision tree vector (revision-tree-v1.json, docs/native-store.md "Worked example"): every
 * tree and revision digest recomputed from the encodings with node:crypto, and the encoder and
 * a real store giving the same trees and ID.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { buildTrees } from '../../src/contracts/tree.js';
import { putSmallBlob } from '../../src/native/blobs.js';
import { createRepository } from '../../src/native/repositories.js';
import { recordRevision } from '../../src/native/revisions.js';
import { createAuthority, writeTransaction, type Authority } from '../../src/native/store.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

function blob(auth: Authority, text: string): string {
  return writeTransaction(auth, () => putSmallBlob(auth, Buffer.from(text)).digest);
}

test('the tree vector of docs/native-store.md is what the encoder gives, hashed from first principles', (t) => {
  const vector = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'revision-tree-v1.json'), 'utf8')) as {
    files: { path: string; mode: 'file' | 'executable' | 'symlink'; content: string }[];
    trees: { path: string; encoding: string; digest: string }[];
    revision: { encoding: string; id: string };
  };
  const digest = (domain: string, text: string): string => {
    const bytes = Buffer.from(text, 'utf8');
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(bytes.length));
    return createHash('sha256')
      .update(Buffer.concat([Buffer.from(domain), Buffer.from([0]), length, bytes]))
      .digest('hex');
  };
  const files = vector.files.map((f) => ({
    path: f.path,
    mode: f.mode,
    blob: createHash('sha256').update(f.content, 'utf8').digest('hex'),
  }));
  const built = buildTrees(files);
  assert.deepEqual(
    built.trees.map((tree) => tree.path),
    vector.trees.map((tree) => tree.path),
  );
  for (const tree of vector.trees) {
    assert.equal(digest('agentscm.tree.v1', tree.encoding), tree.digest, `digest of tree ${JSON.stringify(tree.path)}`);
    assert.equal(built.trees.find((b) => b.path === tree.path)?.digest, tree.digest);
  }
  const root = vector.trees[vector.trees.length - 1]!.digest;
  assert.equal(vector.revision.encoding, `{"version":2,"parent":null,"tree":"${root}"}`);
  assert.equal(digest('agentscm.revision.v2', vector.revision.encoding), vector.revision.id);
  const auth = createAuthority(tempDir(t));
  try {
    const repo = createRepository(auth, 'v');
    const entries = vector.files.map((f) => ({
      path: f.path,
      mode: f.mode,
      size: BigInt(Buffer.byteLength(f.content)),
      blob: blob(auth, f.content),
    }));
    assert.equal(recordRevision(auth, repo.id, null, entries).id, vector.revision.id);
  } finally {
    auth.close();
  }
});
