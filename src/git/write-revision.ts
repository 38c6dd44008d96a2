/**
 * A native revision written into a git repository as a tree, and a tree as a commit (docs/git.md "Landing to git",
 * "Exporting revisions and candidate versions").
 *
 * The git object IDs of blobs and trees are computed here (SHA-1 of git's object encoding: `blob SIZE\0` and the
 * content; `tree SIZE\0` and entries `MODE NAME\0` + 20 bytes, in git's order, which is the native trees' order) and
 * remembered per native digest in the authority (`git_objects`), so that a one-file landing on a large tree
 * converts the changed path only.
 * The objects converted are written as one pack read by `git index-pack --stdin --strict` (git checks every object
 * and that every object named is present; a loose object costs a file of its own: 10,000 of them take seconds);
 * blobs over PACK_BLOB_LIMIT are streamed to `git hash-object -w --stdin-paths` instead.
 * Modes: file 100644, executable 100755, symlink 120000, directory 40000.
 * Repositories with SHA-256 object names are refused (GIT_FAILED).
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';

import { AgentscmError } from '../contracts/errors.js';
import type { TreeEntryKind } from '../contracts/tree.js';
import { getBlobInfo, streamBlob } from '../native/blobs.js';
import { gitObjectOf, rememberGitObjects, revisionRoot } from '../native/git-targets.js';
import type { Authority } from '../native/store.js';
import { readTreeEntries } from '../native/trees.js';
import { git, gitLine, tryGit } from './run.js';

const MODES: Readonly<Record<TreeEntryKind, string>> = {
  file: '100644',
  executable: '100755',
  symlink: '120000',
  directory: '40000',
};

/** The git mode of a native entry kind. */
export function gitMode(kind: TreeEntryKind): string {
  return MODES[kind];
}

/** Blobs up to this size read while converting are kept for the write (at most KEEP_TOTAL_BYTES in all). */
const KEEP_BLOB_BYTES = 1024 * 1024;
const KEEP_TOTAL_BYTES = 64 * 1024 * 1024;

/** Git object IDs of native trees and blobs, computed without writing anything. */
class Converter {
  /** Native digest → git ID of everything computed (not cached). */
  readonly computed = new Map<string, string>();
  /** Git ID → native blob digest of blobs computed here. */
  readonly blobs = new Map<string, string>();
  /** Git ID → tree object body of trees computed here. */
  readonly trees = new Map<string, Buffer>();
  /** Contents of small blobs read here, kept so that a pack needs not read them again. */
  readonly bodies = new Map<string, Buffer>();
  private kept = 0;
  /** Git IDs taken from the cache (their presence in the repository is checked). */
  readonly cachedRefs = new Set<string>();

  constructor(
    private readonly auth: Authority,
    private readonly useCache: boolean,
  ) {}

  private cached(native: string): string | null {
    const known = this.computed.get(native);
    if (known !== undefined) return known;
    if (!this.useCache) return null;
    const sha = gitObjectOf(this.auth, native);
    if (sha !== null) this.cachedRefs.add(sha);
    return sha;
  }

  blob(digest: string): string {
    const known = this.cached(digest);
    if (known !== null) return known;
    const info = getBlobInfo(this.auth, digest);
    if (info === null) throw new AgentscmError('STORE_CORRUPT', `blob ${digest} of a stored tree is not stored`);
    const hash = createHash('sha1').update(`blob ${info.size.toString()}\0`);
    const keep = info.size <= BigInt(KEEP_BLOB_BYTES) && this.kept + Number(info.size) <= KEEP_TOTAL_BYTES;
    const kept: Buffer[] = [];
    for (const chunk of streamBlob(this.auth, digest)) {
      hash.update(chunk);
      if (keep) kept.push(chunk);
    }
    const sha = hash.digest('hex');
    if (keep) {
      this.bodies.set(sha, kept.length === 1 ? (kept[0] as Buffer) : Buffer.concat(kept));
      this.kept += Number(info.size);
    }
    this.computed.set(digest, sha);
    this.blobs.set(sha, digest);
    return sha;
  }

  tree(rowid: number, digest: string): string {
    const known = this.cached(digest);
    if (known !== null) return known;
    const parts: Buffer[] = [];
    for (const entry of readTreeEntries(this.auth, rowid)) {
      const sha = entry.kind === 'directory' ? this.tree(entry.object, entry.digest) : this.blob(entry.digest);
      parts.push(Buffer.from(`${MODES[entry.kind]} ${entry.name}\0`, 'utf8'), Buffer.from(sha, 'hex'));
    }
    const body = Buffer.concat(parts);
    const sha = createHash('sha1')
      .update(`tree ${String(body.byteLength)}\0`)
      .update(body)
      .digest('hex');
    this.computed.set(digest, sha);
    this.trees.set(sha, body);
    return sha;
  }
}

/** The git tree ID of a revision, computed from the authority alone (nothing cached is trusted, nothing written). */
export function revisionGitTree(auth: Authority, repository: string, revision: string): string {
  const root = revisionRoot(auth, repository, revision);
  return new Converter(auth, false).tree(root.tree, root.digest);
}

/** Which of `ids` the repository lacks (one `git cat-file --batch-check`). */
function missingObjects(gitRepo: string, ids: readonly string[]): Set<string> {
  const missing = new Set<string>();
  if (ids.length === 0) return missing;
  const out = git(gitRepo, ['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
    input: `${ids.join('\n')}\n`,
  });
  for (const line of out.toString('utf8').split('\n')) {
    const [sha, kind] = line.split(' ');
    if (sha !== undefined && sha !== '' && kind === 'missing') missing.add(sha);
  }
  return missing;
}

/** Write objects with one `git hash-object -w --stdin-paths` and check the IDs git gives. */
function hashObjects(
  gitRepo: string,
  type: 'blob' | 'tree',
  objects: readonly [string, (path: string) => void][],
): void {
  if (objects.length === 0) return;
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-git-'));
  try {
    const paths = objects.map(([sha, write], i) => {
      const path = join(dir, String(i));
      write(path);
      return { sha, path };
    });
    const out = git(gitRepo, ['hash-object', '-w', '--no-filters', '-t', type, '--stdin-paths'], {
      input: `${paths.map((p) => p.path).join('\n')}\n`,
    });
    const ids = out
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '');
    paths.forEach((p, i) => {
      if (ids[i] !== p.sha)
        throw new AgentscmError('GIT_FAILED', `git stored a ${type} as ${ids[i] ?? '(nothing)'}, expected ${p.sha}`, {
          hint: 'agentscm writes SHA-1 repositories only (`git rev-parse --show-object-format` must say sha1)',
        });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Blobs larger than this are written loose (streamed from a file), never held whole for a pack. */
const PACK_BLOB_LIMIT = 16 * 1024 * 1024;
/** A pack is sent to git once its objects reach this many bytes. */
const PACK_BYTES = 64 * 1024 * 1024;

const PACK_TYPES = { tree: 2, blob: 3 } as const;

function packHeader(type: 'blob' | 'tree', size: number): Buffer {
  const bytes: number[] = [];
  let rest = Math.floor(size / 16);
  let byte = (PACK_TYPES[type] << 4) | (size & 0x0f);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** Write objects as packs (`git index-pack --stdin --strict`), each at most about PACK_BYTES. */
function packObjects(gitRepo: string, objects: Iterable<{ type: 'blob' | 'tree'; body: () => Buffer }>): boolean {
  let parts: Buffer[] = [];
  let count = 0;
  let bytes = 0;
  let ok = true;
  const flush = (): void => {
    if (count === 0 || !ok) return;
    const head = Buffer.alloc(12);
    head.write('PACK', 0, 'latin1');
    head.writeUInt32BE(2, 4);
    head.writeUInt32BE(count, 8);
    const body = Buffer.concat([head, ...parts]);
    const pack = Buffer.concat([body, createHash('sha1').update(body).digest()]);
    ok = tryGit(gitRepo, ['index-pack', '--stdin', '--strict'], { input: pack }).ok;
    parts = [];
    count = 0;
    bytes = 0;
  };
  for (const object of objects) {
    const body = object.body();
    const packed = deflateSync(body, { level: 1 });
    parts.push(packHeader(object.type, body.byteLength), packed);
    count += 1;
    bytes += packed.byteLength;
    if (bytes >= PACK_BYTES) flush();
  }
  flush();
  return ok;
}

function blobBytes(auth: Authority, digest: string): Buffer {
  return Buffer.concat([...streamBlob(auth, digest)]);
}

export interface WrittenTree {
  readonly tree: string;
  /** How many objects were written (0: the repository had them all). */
  readonly written: number;
}

/** Write the objects a conversion computed: large blobs loose, the rest as packs; false when git refused a pack. */
function writeConverted(auth: Authority, gitRepo: string, conv: Converter): { ok: boolean; written: number } {
  const large = [...conv.blobs].filter(
    ([, digest]) => (getBlobInfo(auth, digest)?.size ?? 0n) > BigInt(PACK_BLOB_LIMIT),
  );
  hashObjects(
    gitRepo,
    'blob',
    large.map(([sha, digest]) => [
      sha,
      (path: string) => {
        const fd = openSync(path, 'wx', 0o600);
        try {
          for (const chunk of streamBlob(auth, digest)) writeSync(fd, chunk);
        } finally {
          closeSync(fd);
        }
      },
    ]),
  );
  const skip = new Set(large.map(([sha]) => sha));
  const ok = packObjects(gitRepo, [
    ...[...conv.blobs]
      .filter(([sha]) => !skip.has(sha))
      .map(([sha, digest]) => ({ type: 'blob' as const, body: () => conv.bodies.get(sha) ?? blobBytes(auth, digest) })),
    ...[...conv.trees].map(([, body]) => ({ type: 'tree' as const, body: () => body })),
  ]);
  return { ok, written: conv.blobs.size + conv.trees.size };
}

/**
 * Write a revision's tree into the git repository at `gitRepo`; returns its tree ID. The objects converted now are
 * sent as packs checked by `index-pack --strict`, which also requires every object they name (the cached ones) to be
 * in the repository: when one is not (the cache was filled for another repository), everything is converted again
 * and sent.
 */
export function writeRevisionTree(auth: Authority, repository: string, revision: string, gitRepo: string): WrittenTree {
  const root = revisionRoot(auth, repository, revision);
  const known = gitObjectOf(auth, root.digest);
  if (known !== null && missingObjects(gitRepo, [known]).size === 0) return { tree: known, written: 0 };
  const attempt = (useCache: boolean): { conv: Converter; tree: string; ok: boolean; written: number } => {
    const conv = new Converter(auth, useCache);
    const tree = conv.tree(root.tree, root.digest);
    const result = writeConverted(auth, gitRepo, conv);
    return { conv, tree, ok: result.ok && missingObjects(gitRepo, [tree]).size === 0, written: result.written };
  };
  // A root converted before but missing here: the cache was filled for another repository.
  let done = attempt(known === null);
  if (!done.ok && done.conv.cachedRefs.size > 0) done = attempt(false);
  const { conv, tree } = done;
  if (!done.ok)
    throw new AgentscmError('GIT_FAILED', `git did not store the tree ${tree} of revision ${revision}`, {
      hint: 'agentscm writes SHA-1 repositories only (`git rev-parse --show-object-format` must say sha1)',
    });
  rememberGitObjects(auth, conv.computed);
  return { tree, written: done.written };
}

export interface CommitSpec {
  readonly tree: string;
  readonly parent: string | null;
  readonly message: string;
  /** `Name <email>`: author and committer. */
  readonly identity: string;
  /** The commit's time (author and committer), milliseconds since the epoch; written in whole seconds, UTC. */
  readonly timeMs: number;
  /** Sign with git's signing configuration (`commit-tree -S`): deterministic only with the same key and signer. */
  readonly sign: boolean;
}

const IDENTITY = /^([^<>\n]+?) <([^<>\n]*)>$/;

/** Name and email of `Name <email>`, or null. */
export function parseIdentity(identity: string): { name: string; email: string } | null {
  const match = IDENTITY.exec(identity);
  return match === null ? null : { name: match[1] as string, email: match[2] as string };
}

/** Write a commit (`git commit-tree`) with the identity and date given, nothing taken from the environment. */
export function commitTree(gitRepo: string, spec: CommitSpec): string {
  const who = parseIdentity(spec.identity);
  if (who === null)
    throw new AgentscmError('INTERNAL', `identity ${JSON.stringify(spec.identity)} is not Name <email>`);
  const date = `@${String(Math.floor(spec.timeMs / 1000))} +0000`;
  return gitLine(
    gitRepo,
    [
      'commit-tree',
      spec.tree,
      ...(spec.parent === null ? [] : ['-p', spec.parent]),
      spec.sign ? '-S' : '--no-gpg-sign',
      '-F',
      '-',
    ],
    {
      input: spec.message,
      env: {
        // The message is UTF-8 whatever the repository's i18n.commitEncoding says: no `encoding` header.
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'i18n.commitEncoding',
        GIT_CONFIG_VALUE_0: 'UTF-8',
        GIT_AUTHOR_NAME: who.name,
        GIT_AUTHOR_EMAIL: who.email,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: who.name,
        GIT_COMMITTER_EMAIL: who.email,
        GIT_COMMITTER_DATE: date,
      },
    },
  );
}
