/**
 * Canonical relative paths (docs/wire.md "Workspace paths": ASCII, `/` the only
 * separator, no empty, `.` or `..` component, no leading `/`, no backslash, no control
 * character including NUL and DEL, no `:` drive or prefix form; skill packages: at most 512
 * bytes). One definition for every area that keeps the ASCII rule: named references, skill
 * package entries, recipe working directories.
 *
 * Workspace paths (docs/wire.md "Workspace paths") are wider: any valid UTF-8 kept byte-exact
 * (no normalization), `/`-separated, no empty, `.` or `..` component, no U+0000–U+001F control
 * character, at most 512 UTF-8 bytes. Revisions record workspace paths.
 */
import { AgentscmError } from './errors.js';

/** Longest canonical relative path, in bytes (= ASCII characters). */
export const MAX_RELATIVE_PATH_BYTES = 512;

/** JSON Schema fragment for a canonical relative path; the decoder's output still goes through validateRelativePath. */
export const RELATIVE_PATH_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_RELATIVE_PATH_BYTES,
  // Printable ASCII without backslash and colon; component rules are checked in code.
  pattern: '^[\\x20-\\x39\\x3b-\\x5b\\x5d-\\x7e]+$',
} as const;

/** Why a path is not a canonical relative path (docs/wire.md "Workspace paths"), or undefined when it is. */
export function relativePathProblem(path: string): string | undefined {
  if (path.length === 0) return 'it is empty';
  // Length before the per-character scan, so an oversize input costs nothing more.
  if (path.length > MAX_RELATIVE_PATH_BYTES)
    return `it is longer than ${MAX_RELATIVE_PATH_BYTES} bytes (${path.length})`;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c > 0x7e && c !== 0x7f)
      return `it contains the non-ASCII character U+${c.toString(16).toUpperCase().padStart(4, '0')} at ${i}`;
    if (c < 0x20 || c === 0x7f) return `it contains the control character 0x${c.toString(16).padStart(2, '0')} at ${i}`;
    if (c === 0x5c) return `it contains a backslash at ${i} (only / separates components)`;
    if (c === 0x3a) return `it contains ":" at ${i} (drive and prefix forms are not relative)`;
  }
  if (path.startsWith('/')) return 'it starts with / (absolute)';
  if (path.endsWith('/')) return 'it ends with /';
  for (const component of path.split('/')) {
    if (component === '') return 'it has an empty component (//)';
    if (component === '.') return 'it has a "." component';
    if (component === '..') return 'it has a ".." component';
  }
  return undefined;
}

/**
 * Validate a canonical relative path (docs/wire.md "Workspace paths"; 512-byte package path
 * bound) → the path, or PATH_INVALID.
 */
export function validateRelativePath(path: string, what = 'path'): string {
  if (typeof path !== 'string') {
    throw new AgentscmError('PATH_INVALID', `${what} must be a string`);
  }
  const problem = relativePathProblem(path);
  if (problem !== undefined) {
    const shown = path.length > 80 ? `${JSON.stringify(path.slice(0, 80))}…` : JSON.stringify(path);
    throw new AgentscmError('PATH_INVALID', `${what} ${shown} is not a canonical relative path: ${problem}`, {
      hint:
        `use ASCII components joined by /, without ., .., \\, : or control characters, at most ` +
        `${MAX_RELATIVE_PATH_BYTES} bytes`,
      details: { what, reason: problem },
    });
  }
  return path;
}

/** Whole-component containment of canonical relative paths (spec: source_paths expectations); `dir` "" is the root. */
export function isRelativePathWithin(dir: string, path: string): boolean {
  if (dir === '') return true;
  return path === dir || (path.startsWith(dir) && path.charCodeAt(dir.length) === 0x2f);
}

/** Join components into one canonical relative path (docs/wire.md "Workspace paths"), validated. */
export function joinRelativePath(...components: readonly string[]): string {
  return validateRelativePath(components.filter((c) => c !== '').join('/'));
}

/** Longest workspace path, in UTF-8 bytes (the same bound as canonical relative paths). */
export const MAX_WORKSPACE_PATH_BYTES = MAX_RELATIVE_PATH_BYTES;

/**
 * Why one component of a workspace path (a file or directory name) cannot be recorded, or
 * undefined when it can (docs/wire.md "Workspace paths"). The string is already valid UTF-8
 * (a name that was not is refused before it becomes a string).
 */
export function workspaceNameProblem(name: string): string | undefined {
  if (name === '') return 'it has an empty component';
  if (name === '.') return 'it has a "." component';
  if (name === '..') return 'it has a ".." component';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20) return `it contains the control character 0x${c.toString(16).padStart(2, '0')}`;
    if (c === 0x2f) return 'it contains / inside a name';
    // A lone surrogate has no UTF-8 form: such a string never names a recorded file.
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = name.charCodeAt(i + 1);
      if (c >= 0xdc00 || !(next >= 0xdc00 && next <= 0xdfff))
        return `it contains a lone surrogate U+${c.toString(16).toUpperCase()} (not UTF-8)`;
      i += 1;
    }
  }
  return undefined;
}

/** Why a string is not a workspace path (docs/wire.md "Workspace paths"), or undefined when it is. */
export function workspacePathProblem(path: string): string | undefined {
  if (path.length === 0) return 'it is empty';
  if (path.length > MAX_WORKSPACE_PATH_BYTES || Buffer.byteLength(path, 'utf8') > MAX_WORKSPACE_PATH_BYTES) {
    return `it is longer than ${MAX_WORKSPACE_PATH_BYTES} bytes`;
  }
  if (path.startsWith('/')) return 'it starts with / (absolute)';
  if (path.endsWith('/')) return 'it ends with /';
  for (const component of path.split('/')) {
    const problem = workspaceNameProblem(component);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Validate a workspace path (a path of a revision) → the path, or PATH_INVALID. */
export function validateWorkspacePath(path: string, what = 'path'): string {
  if (typeof path !== 'string') throw new AgentscmError('PATH_INVALID', `${what} must be a string`);
  const problem = workspacePathProblem(path);
  if (problem !== undefined) {
    const shown = path.length > 80 ? `${JSON.stringify(path.slice(0, 80))}…` : JSON.stringify(path);
    throw new AgentscmError('PATH_INVALID', `${what} ${shown} is not a workspace path: ${problem}`, {
      hint:
        `use UTF-8 names joined by /, without empty, . or .. components or control characters, at most ` +
        `${MAX_WORKSPACE_PATH_BYTES} bytes`,
      details: { what, reason: problem },
    });
  }
  return path;
}

/**
 * Order of the UTF-8 bytes of two strings (= Unicode code point order), without encoding
 * them: UTF-16 code units compare the same way except that surrogates (U+D800–U+DFFF, which
 * encode code points above U+FFFF) must sort after U+E000–U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
