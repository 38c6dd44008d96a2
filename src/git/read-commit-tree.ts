/**
 * A git commit's tree read as native revision entries (docs/git.md "Checkpointing a git commit"):
 * `git rev-parse` resolves the revision, `git ls-tree -r -z -l --full-tree` lists every file with
 * its mode and size (checked against the scan bounds before any content is read), and one
 * `git cat-file --batch` streams the contents, each stored in the native blob store by SHA-256.
 * A blob whose git ID `git_objects` already maps to a stored native blob is not read at all; every blob read
 * has its git ID recomputed from its bytes, and only then is the pair remembered there.
 * Modes 100644 and 100755 are files and executables, 120000 a symlink whose blob is the link
 * target; a gitlink (160000, a submodule) is refused. Nothing of the work tree is read or written.
 * git runs with the options and environment of src/agent-state/safe-git.ts.
 */
import { isUtf8 } from 'node:buffer';
import { spawn } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { checkGitDir, runGitSync, safeGitArgs, safeGitEnv } from '../agent-state/safe-git.js';
import { AgentscmError } from '../contracts/errors.js';
import { isKeyFileName } from '../contracts/key-file-name.js';
import { compareUtf8, workspacePathProblem } from '../contracts/paths.js';
import { createSha256 } from '../crypto/sha256.js';
import { BLOB_CHUNK_BYTES, isBlobStored, putChunkedBlob, putSmallBlob } from '../native/blobs.js';
import { nativeObjectsOfGit, rememberGitObjects } from '../native/git-targets.js';
import type { EntryMode, RevisionEntry } from '../native/revisions.js';
import { writeTransaction, type Authority } from '../native/store.js';
import type { ScanBounds } from '../workspace/scan.js';

/** The native entry kind of each git file mode; 160000 (gitlink) and anything else are refused. */
const GIT_MODES: Readonly<Record<string, EntryMode>> = {
  '100644': 'file',
  '100755': 'executable',
  '120000': 'symlink',
};

/** Small blobs are written in batches of at most this many bytes (one transaction each). */
const BATCH_BYTES = 8 * BLOB_CHUNK_BYTES;

export interface GitCommitTree {
  readonly commit: string;
  readonly tree: string;
  /** Sorted by path bytes, as a revision wants them. */
  readonly entries: RevisionEntry[];
  readonly totalBytes: bigint;
  /** Blobs this read stored that the native store did not hold. */
  readonly storedBlobs: number;
}

function gitFailed(what: string, stderr: string): AgentscmError {
  return new AgentscmError('GIT_FAILED', `git ${what} failed: ${stderr.trim().slice(0, 400) || 'no message'}`, {
    hint: 'check that git is installed and that `git fsck` finds the repository sound, then run again',
  });
}

function unrecordable(message: string): AgentscmError {
  return new AgentscmError('GIT_TREE_UNRECORDABLE', `${message}; nothing was recorded`, {
    hint:
      'rename or remove the path in git (a new commit), or checkpoint another commit; docs/git.md ' +
      '"Checkpointing a git commit" lists what the native store takes',
  });
}

/** The commit and tree IDs `rev` names in the repository at `repo` (GIT_REVISION_UNKNOWN when none). */
export function resolveGitCommit(repo: string, rev: string): { commit: string; tree: string } {
  checkGitDir(repo);
  const unknown = (): AgentscmError =>
    new AgentscmError('GIT_REVISION_UNKNOWN', `git cannot resolve ${JSON.stringify(rev)} to a commit in ${repo}`, {
      hint: 'name a commit git knows there (`git log --oneline` lists them), or pass the right --git-repo',
    });
  if (rev === '' || rev.includes('\0')) throw unknown();
  const commit = runGitSync(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  if (!commit.ok) {
    if (commit.stderr.trim() !== '' && !/fatal: (Needed a single revision|ambiguous)/.test(commit.stderr))
      throw gitFailed('rev-parse', commit.stderr);
    throw unknown();
  }
  const id = commit.stdout.toString('utf8').trim();
  const tree = runGitSync(repo, ['rev-parse', '--verify', '--quiet', `${id}^{tree}`]);
  if (!tree.ok) throw gitFailed('rev-parse', tree.stderr);
  return { commit: id, tree: tree.stdout.toString('utf8').trim() };
}

interface Listed {
  readonly path: string;
  readonly mode: EntryMode;
  readonly oid: string;
  readonly size: number;
}

/** Parse `git ls-tree -r -z -l` output, checking modes, names and bounds (no content read). */
export function parseLsTree(out: Buffer, bounds: ScanBounds): Listed[] {
  const listed: Listed[] = [];
  let total = 0;
  let at = 0;
  while (at < out.length) {
    let end = out.indexOf(0, at);
    if (end === -1) end = out.length;
    const tab = out.indexOf(0x09, at);
    if (tab === -1 || tab > end) throw gitFailed('ls-tree', 'unexpected output');
    const [modeText, type, oid, sizeText] = out.subarray(at, tab).toString('latin1').split(/ +/);
    const rawPath = out.subarray(tab + 1, end);
    at = end + 1;
    if (modeText === '160000' || type === 'commit')
      throw new AgentscmError(
        'GIT_SUBMODULE_UNSUPPORTED',
        `the git tree holds a submodule at ${JSON.stringify(rawPath.toString('utf8'))}, which the native store ` +
          'cannot carry; nothing was recorded',
        { hint: 'checkpoint a commit without submodules (vendor the files instead); docs/git.md' },
      );
    const mode = GIT_MODES[modeText ?? ''];
    if (mode === undefined || type !== 'blob' || oid === undefined)
      throw unrecordable(`the git tree holds ${JSON.stringify(rawPath.toString('utf8'))} with mode ${modeText ?? '?'}`);
    if (!isUtf8(rawPath))
      throw unrecordable(`the git tree holds a path that is not UTF-8 (${rawPath.toString('hex')})`);
    const path = rawPath.toString('utf8');
    if (rawPath.length > bounds.maxPathBytes)
      throw unrecordable(`path ${JSON.stringify(path.slice(0, 80))}… is longer than ${bounds.maxPathBytes} bytes`);
    const problem = workspacePathProblem(path);
    if (problem !== undefined) throw unrecordable(`path ${JSON.stringify(path)} cannot be recorded: ${problem}`);
    if (isKeyFileName(path.slice(path.lastIndexOf('/') + 1)))
      throw unrecordable(`${path} is a collector signing key file (private)`);
    const size = Number(sizeText);
    if (!Number.isSafeInteger(size) || size < 0) throw gitFailed('ls-tree', `bad size for ${path}`);
    if (listed.length >= bounds.maxFiles) throw unrecordable(`the git tree has more than ${bounds.maxFiles} files`);
    if (mode !== 'symlink' && size > bounds.maxFileBytes)
      throw unrecordable(`${path} has ${size} bytes, more than ${bounds.maxFileBytes}`);
    total += size;
    if (total > bounds.maxTotalBytes) throw unrecordable(`the files add up to more than ${bounds.maxTotalBytes} bytes`);
    listed.push({ path, mode, oid, size });
  }
  return listed;
}

/** One blob's content as it arrives: small ones in memory, large ones in a temporary file. */
class BlobSink {
  private readonly parts: Buffer[] = [];
  private fd: number | null = null;
  private file: string | null = null;
  private readonly hash = createSha256();
  /** git's own object ID computed over the same bytes (SHA-1, or SHA-256 in a SHA-256 repository). */
  private readonly gitHash: Hash;
  received = 0;

  constructor(
    readonly size: number,
    oid: string,
    private readonly tempDir: () => string,
  ) {
    this.gitHash = createHash(oid.length === 64 ? 'sha256' : 'sha1').update(`blob ${size}\0`);
    if (size > BLOB_CHUNK_BYTES) {
      this.file = join(tempDir(), 'blob');
      this.fd = openSync(this.file, 'w', 0o600);
    }
  }

  add(chunk: Buffer): void {
    this.hash.update(chunk);
    this.gitHash.update(chunk);
    this.received += chunk.length;
    if (this.fd === null) this.parts.push(chunk);
    else writeSync(this.fd, chunk);
  }

  /** The digest, and either the bytes or a chunk source reading the temporary file. */
  finish(): { digest: string; gitId: string; bytes: Buffer | null; chunks: (() => Iterable<Uint8Array>) | null } {
    const digest = this.hash.digest('hex');
    const gitId = this.gitHash.digest('hex');
    if (this.fd === null) return { digest, gitId, bytes: Buffer.concat(this.parts), chunks: null };
    closeSync(this.fd);
    this.fd = null;
    const file = this.file as string;
    return {
      digest,
      gitId,
      bytes: null,
      chunks: function* () {
        const fd = openSync(file, 'r');
        try {
          const buffer = Buffer.alloc(BLOB_CHUNK_BYTES);
          for (;;) {
            const n = readSync(fd, buffer, 0, BLOB_CHUNK_BYTES, null);
            if (n === 0) return;
            yield Buffer.from(buffer.subarray(0, n));
          }
        } finally {
          closeSync(fd);
          rmSync(file, { force: true });
        }
      },
    };
  }
}

/**
 * Stream the blobs `oids` (unique) through one `git cat-file --batch`, storing each in the native blob store;
 * returns git object ID → SHA-256, how many blobs were new, and SHA-256 → git object ID of the SHA-1 blobs whose
 * ID was recomputed here from the bytes read (what may be remembered in `git_objects`).
 */
async function storeGitBlobs(
  repo: string,
  auth: Authority,
  objects: ReadonlyMap<string, number>,
): Promise<{ digests: Map<string, string>; created: number; verified: Map<string, string> }> {
  const digests = new Map<string, string>();
  const verified = new Map<string, string>();
  let created = 0;
  if (objects.size === 0) return { digests, created, verified };
  let temp: string | null = null;
  const tempDir = (): string => (temp ??= mkdtempSync(join(tmpdir(), 'agentscm-git-')));
  let batch: { digest: string; bytes: Buffer }[] = [];
  let batchBytes = 0;
  const flush = (): void => {
    if (batch.length === 0) return;
    const items = batch;
    batch = [];
    batchBytes = 0;
    writeTransaction(auth, () => {
      for (const item of items) if (putSmallBlob(auth, item.bytes, item.digest).created) created += 1;
    });
  };
  const order = [...objects.keys()];
  const child = spawn('git', safeGitArgs(['cat-file', '--batch', '--buffer']), {
    cwd: repo,
    env: safeGitEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    if (stderr.length < 4096) stderr += text;
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  child.stdin.on('error', () => undefined);
  child.stdin.end(`${order.join('\n')}\n`);
  try {
    let index = 0;
    let header: Buffer = Buffer.alloc(0);
    let sink: BlobSink | null = null;
    let trailer = 0;
    for await (const data of child.stdout as AsyncIterable<Buffer>) {
      let chunk = data;
      while (chunk.length > 0) {
        if (trailer > 0) {
          const n = Math.min(trailer, chunk.length);
          trailer -= n;
          chunk = chunk.subarray(n);
          continue;
        }
        if (sink === null) {
          const nl = chunk.indexOf(0x0a);
          if (nl === -1) {
            header = Buffer.concat([header, chunk]);
            if (header.length > 200) throw gitFailed('cat-file', 'unexpected output');
            break;
          }
          const line = Buffer.concat([header, chunk.subarray(0, nl)]).toString('latin1');
          header = Buffer.alloc(0);
          chunk = chunk.subarray(nl + 1);
          const [oid, type, sizeText] = line.split(' ');
          const want = order[index];
          if (want === undefined || oid !== want || type !== 'blob' || objects.get(want) !== Number(sizeText))
            throw gitFailed('cat-file', `unexpected object ${line.slice(0, 120)}`);
          sink = new BlobSink(Number(sizeText), want, tempDir);
        }
        const n = Math.min(sink.size - sink.received, chunk.length);
        sink.add(chunk.subarray(0, n));
        chunk = chunk.subarray(n);
        if (sink.received === sink.size) {
          const done = sink.finish();
          const oid = order[index] as string;
          index += 1;
          sink = null;
          trailer = 1;
          if (done.gitId !== oid) throw gitFailed('cat-file', `object ${oid} does not hash to its ID`);
          digests.set(oid, done.digest);
          if (oid.length === 40) verified.set(done.digest, oid);
          if (done.bytes !== null) {
            if (!isBlobStored(auth, done.digest)) {
              batch.push({ digest: done.digest, bytes: done.bytes });
              batchBytes += done.bytes.length;
              if (batchBytes >= BATCH_BYTES || batch.length >= 4096) flush();
            }
          } else {
            flush();
            const source = done.chunks as () => Iterable<Uint8Array>;
            const stored = writeTransaction(auth, () =>
              putChunkedBlob(auth, done.digest, BigInt(size(objects, oid)), source()),
            );
            if (stored) created += 1;
          }
        }
      }
    }
    const code = await exited;
    if (code !== 0 || index !== order.length) throw gitFailed('cat-file', stderr || `exit ${String(code)}`);
    flush();
    return { digests, created, verified };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    if (temp !== null) rmSync(temp, { recursive: true, force: true });
  }
}

function size(objects: ReadonlyMap<string, number>, oid: string): number {
  return objects.get(oid) ?? 0;
}

/**
 * Read the tree of `rev` in the git repository at `repo` (its top level) into revision entries, storing every
 * blob; bounded by `bounds` before any content is read.
 */
export async function readGitCommitTree(
  repo: string,
  rev: string,
  auth: Authority,
  bounds: ScanBounds,
  onProgress: (message: string) => void = () => undefined,
): Promise<GitCommitTree> {
  const { commit, tree } = resolveGitCommit(repo, rev);
  const listing = runGitSync(repo, ['ls-tree', '-r', '-z', '-l', '--full-tree', commit]);
  if (!listing.ok) throw gitFailed('ls-tree', listing.stderr);
  const listed = parseLsTree(listing.stdout, bounds);
  onProgress(`git commit ${commit.slice(0, 12)}: ${listed.length} files; storing their contents`);
  const all = new Map<string, number>();
  for (const item of listed) all.set(item.oid, item.size);
  // Blobs whose git ID is remembered (and whose content the native store holds) are not read again.
  const known = new Map<string, string>();
  for (const [oid, native] of nativeObjectsOfGit(auth, new Set(all.keys())))
    if (isBlobStored(auth, native)) known.set(oid, native);
  const objects = new Map<string, number>();
  for (const [oid, size] of all) if (!known.has(oid)) objects.set(oid, size);
  onProgress(`git commit ${commit.slice(0, 12)}: ${known.size} blobs known, ${objects.size} to read`);
  const read = await storeGitBlobs(repo, auth, objects);
  rememberGitObjects(auth, read.verified);
  const digests = new Map([...known, ...read.digests]);
  const created = read.created;
  let totalBytes = 0n;
  const entries: RevisionEntry[] = listed.map((item) => {
    totalBytes += BigInt(item.size);
    return { path: item.path, mode: item.mode, size: BigInt(item.size), blob: digests.get(item.oid) as string };
  });
  entries.sort((a, b) => compareUtf8(a.path, b.path));
  return { commit, tree, entries, totalBytes, storedBlobs: created };
}
