/**
 * The local exclude list `WORKSPACE/.agentscm/exclude` (docs/workspace.md "Excluded paths"): git
 * ignore patterns, one a line, that every scan honours (status, checkpoint, init-repo), like
 * git's `.git/info/exclude`. It lives in `.agentscm/`, so it is itself never recorded. Lines are
 * checked here (a pattern git would accept but that can never match — an unclosed `[`, a
 * trailing `\`, an unknown `[:class:]`, nothing left after `!` or `/` — is refused by line
 * number, WORKSPACE_EXCLUDE_INVALID); the matching is the `ignore` package's, the one the scan
 * already uses for `.gitignore` files, so the two kinds of file can never disagree on a pattern.
 * Writers (install-stop, install-edit-hook) add anchored paths with addExcludePatterns.
 */
import { isUtf8 } from 'node:buffer';
import { lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';

import { AgentscmError } from '../contracts/errors.js';
import { checkStateDir, ensureStateDir, WORKSPACE_STATE_DIR, workspaceStatePaths } from './state-dir.js';

export const EXCLUDE_FILE_NAME = 'exclude';
/** Largest exclude file, in bytes. */
export const MAX_EXCLUDE_BYTES = 64 * 1024;
/** Most patterns (lines that are neither blank nor comments) in an exclude file. */
export const MAX_EXCLUDE_PATTERNS = 1024;

const POSIX_CLASSES = new Set([
  'alnum',
  'alpha',
  'blank',
  'cntrl',
  'digit',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'xdigit',
]);

/** Absolute path of a workspace root's exclude file. */
export function excludeFilePath(root: string): string {
  return join(workspaceStatePaths(root).dir, EXCLUDE_FILE_NAME);
}

/** The workspace-relative display name of the exclude file. */
export const EXCLUDE_FILE_LABEL = `${WORKSPACE_STATE_DIR}/${EXCLUDE_FILE_NAME}`;

/** True for a blank or comment line (git: no pattern). */
function isNoPattern(line: string): boolean {
  return line.trim() === '' || line.startsWith('#');
}

/** Git drops trailing spaces unless a backslash escapes them (the escaped one stays). */
function trimTrailingSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === ' ') {
    let slashes = 0;
    for (let k = end - 2; k >= 0 && text[k] === '\\'; k--) slashes += 1;
    if (slashes % 2 === 1) break;
    end -= 1;
  }
  return text.slice(0, end);
}

/**
 * Why one pattern line can never match (git accepts it and silently matches nothing), or
 * undefined for a usable line. The line has no line terminator.
 */
export function excludeLineProblem(line: string): string | undefined {
  if (isNoPattern(line)) return undefined;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(line)) return 'it holds a control character';
  let body = line.startsWith('!') ? line.slice(1) : line;
  // Trailing spaces are dropped unless escaped (git); the escape keeps the space.
  body = trimTrailingSpaces(body);
  if (body.replace(/^\//, '').replace(/\/$/, '') === '') return 'it names no path (nothing after "!" or "/")';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '\\') {
      if (i + 1 >= body.length) return 'it ends with a "\\" that escapes nothing (write "\\\\" for a backslash)';
      i += 1;
      continue;
    }
    if (ch !== '[') continue;
    // A class: an optional ! or ^, then a ] right away is literal; up to the closing ].
    let j = i + 1;
    if (body[j] === '!' || body[j] === '^') j += 1;
    if (body[j] === ']') j += 1;
    let closed = false;
    for (; j < body.length; j++) {
      const c = body[j];
      if (c === '\\') {
        j += 1;
        continue;
      }
      if (c === '[' && body[j + 1] === ':') {
        const end = body.indexOf(':]', j + 2);
        if (end === -1) return `it has an unclosed "[:" at character ${j + 1}`;
        const name = body.slice(j + 2, end);
        if (!POSIX_CLASSES.has(name)) return `it names an unknown character class "[:${name}:]"`;
        j = end + 1;
        continue;
      }
      if (c === ']') {
        closed = true;
        break;
      }
    }
    if (!closed) return `it has an unclosed "[" at character ${i + 1 + (line.length - body.length)}`;
    i = j;
  }
  return undefined;
}

function invalid(label: string, why: string): AgentscmError {
  return new AgentscmError('WORKSPACE_EXCLUDE_INVALID', `${label}: ${why}; nothing was scanned`, {
    hint: `fix that line of ${label} (git ignore pattern syntax, docs/workspace.md "Excluded paths") and run again`,
  });
}

/**
 * Check an exclude file's bytes: at most MAX_EXCLUDE_BYTES, UTF-8, at most MAX_EXCLUDE_PATTERNS
 * patterns, every pattern usable (excludeLineProblem). The pattern lines, in order (blank and
 * comment lines dropped; a trailing CR of a CRLF line removed).
 */
export function parseExcludeFile(bytes: Buffer, label = EXCLUDE_FILE_LABEL): string[] {
  if (bytes.length > MAX_EXCLUDE_BYTES)
    throw invalid(label, `it has ${bytes.length} bytes, more than ${MAX_EXCLUDE_BYTES}`);
  const lines = bytes.toString('utf8').split('\n');
  if (!isUtf8(bytes)) {
    let at = 0;
    for (let n = 0; n < lines.length; n++) {
      const end = bytes.indexOf(0x0a, at);
      const raw = bytes.subarray(at, end === -1 ? bytes.length : end);
      if (!isUtf8(raw)) throw invalid(label, `line ${n + 1} is not valid UTF-8`);
      at = end + 1;
    }
  }
  const patterns: string[] = [];
  for (let n = 0; n < lines.length; n++) {
    const line = (lines[n] as string).replace(/\r$/, '');
    if (isNoPattern(line)) continue;
    const problem = excludeLineProblem(line);
    if (problem !== undefined) throw invalid(label, `line ${n + 1} (${JSON.stringify(line.slice(0, 80))}): ${problem}`);
    patterns.push(line);
    if (patterns.length > MAX_EXCLUDE_PATTERNS)
      throw invalid(label, `line ${n + 1} is pattern ${patterns.length}, more than ${MAX_EXCLUDE_PATTERNS}`);
  }
  return patterns;
}

/** The exclude file's bytes, or null when there is none; never through a link. */
function readExcludeBytes(root: string): Buffer | null {
  if (!checkStateDir(root)) return null;
  const file = excludeFilePath(root);
  let stat;
  try {
    stat = lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new AgentscmError('IO_ERROR', `cannot inspect ${file}: ${(error as Error).message}`, { cause: error });
  }
  if (!stat.isFile()) {
    throw new AgentscmError(
      'WORKSPACE_STATE_UNSAFE',
      `${file} is ${stat.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; agentscm reads the exclude ` +
        'list only from a regular file',
      { hint: 'replace it by a regular file of git ignore patterns (docs/workspace.md "Excluded paths")' },
    );
  }
  if (stat.size > MAX_EXCLUDE_BYTES)
    throw invalid(EXCLUDE_FILE_LABEL, `it has ${stat.size} bytes, more than ${MAX_EXCLUDE_BYTES}`);
  try {
    return readFileSync(file);
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
}

/** The patterns of a workspace's exclude file (empty when there is none). */
export function readExcludePatterns(root: string): string[] {
  const bytes = readExcludeBytes(root);
  return bytes === null ? [] : parseExcludeFile(bytes);
}

/** The matcher of a workspace's exclude file, or null when there is no pattern. */
export function readExcludeRules(root: string): Ignore | null {
  const patterns = readExcludePatterns(root);
  return patterns.length === 0 ? null : ignore().add(patterns);
}

/**
 * Whether the exclude file alone excludes a workspace path (a directory with `dir: true`), its
 * parent directories included, as a scan decides it. `.gitignore` files are not consulted.
 */
export function isExcludedPath(rules: Ignore | null, path: string, dir = false): boolean {
  if (rules === null) return false;
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) if (rules.ignores(`${parts.slice(0, i).join('/')}/`)) return true;
  return rules.ignores(dir ? `${path}/` : path);
}

/** The anchored exclude pattern of an absolute file inside the workspace root, or null when it is outside. */
export function anchoredPattern(root: string, file: string): string | null {
  const rel = relative(root, file);
  if (rel === '' || isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`)) return null;
  // Escape what a pattern would read as special, so that the line names exactly this path.
  return `/${rel
    .split(sep)
    .join('/')
    .replace(/[\\[\]*?!# ]/g, (c) => `\\${c}`)}`;
}

export interface ExcludeAddOutcome {
  readonly file: string;
  /** Patterns this call appended (those already present are not repeated). */
  readonly added: string[];
}

/**
 * Append patterns to the exclude file unless a line already equals them, keeping every existing
 * line; creates `.agentscm/` (as init-repo does) and the file when absent. The file is checked
 * first (an invalid one is refused and left as it was) and written atomically. With dryRun
 * nothing is written.
 */
export function addExcludePatterns(root: string, patterns: readonly string[], dryRun = false): ExcludeAddOutcome {
  const file = excludeFilePath(root);
  const existing = readExcludeBytes(root);
  const present = existing === null ? [] : parseExcludeFile(existing);
  const added = patterns.filter((p, i) => !present.includes(p) && patterns.indexOf(p) === i);
  for (const p of added) {
    const problem = excludeLineProblem(p);
    if (problem !== undefined) throw new AgentscmError('INTERNAL', `exclude pattern ${p}: ${problem}`);
  }
  if (added.length === 0 || dryRun) return { file, added };
  const before = existing === null ? '' : existing.toString('utf8');
  const text = `${before}${before === '' || before.endsWith('\n') ? '' : '\n'}${added.map((p) => `${p}\n`).join('')}`;
  parseExcludeFile(Buffer.from(text, 'utf8'));
  ensureStateDir(root);
  const temp = `${file}.tmp-${process.pid}`;
  try {
    writeFileSync(temp, text, { mode: 0o644, flag: 'wx' });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new AgentscmError('IO_ERROR', `cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
  return { file, added };
}

/**
 * The matcher of git's own `.git/info/exclude` when `root` is a git work tree (its `.git` a directory) and the file is
 * a regular file, or null (docs/git.md "Binding a git work tree"). One larger than `maxBytes` is refused
 * (WORKSPACE_EXCLUDE_INVALID), as an oversized `.gitignore` stops a scan.
 */
export function readGitInfoExclude(root: string, maxBytes: number): Ignore | null {
  const file = join(root, '.git', 'info', 'exclude');
  let size: number;
  try {
    if (!lstatSync(join(root, '.git')).isDirectory()) return null;
    const stat = lstatSync(file);
    if (!stat.isFile()) return null;
    size = stat.size;
  } catch {
    return null;
  }
  if (size > maxBytes) throw invalid('.git/info/exclude', `it has ${size} bytes, more than ${maxBytes}`);
  try {
    return ignore().add(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
}
