/**
 * Canonical relative paths (spec "Instructions and named references": ASCII, `/` the only
 * separator, no empty, `.` or `..` component, no leading `/`, no backslash, no control
 * character including NUL and DEL, no `:` drive or prefix form; skill packages: at most 512
 * bytes). One definition for every area: references, package entries, revision paths.
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

/** Why a path is not a canonical relative path (spec "Instructions and named references"), or undefined when it is. */
export function relativePathProblem(path: string): string | undefined {
  if (path.length === 0) return 'it is empty';
  // Length before the per-character scan, so an oversize input costs nothing more.
  if (path.length > MAX_RELATIVE_PATH_BYTES) return `it is longer than ${MAX_RELATIVE_PATH_BYTES} bytes (${path.length})`;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c > 0x7e && c !== 0x7f) return `it contains the non-ASCII character U+${c.toString(16).toUpperCase().padStart(4, '0')} at ${i}`;
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

/** Validate a canonical relative path (spec: named references; 512-byte package path bound) → the path, or PATH_INVALID. */
export function validateRelativePath(path: string, what = 'path'): string {
  if (typeof path !== 'string') {
    throw new AgentscmError('PATH_INVALID', `${what} must be a string`);
  }
  const problem = relativePathProblem(path);
  if (problem !== undefined) {
    const shown = path.length > 80 ? `${JSON.stringify(path.slice(0, 80))}…` : JSON.stringify(path);
    throw new AgentscmError('PATH_INVALID', `${what} ${shown} is not a canonical relative path: ${problem}`, {
      hint: `use ASCII components joined by /, without ., .., \\, : or control characters, at most ${MAX_RELATIVE_PATH_BYTES} bytes`,
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

/** Join components into one canonical relative path (spec "Instructions and named references"), validated. */
export function joinRelativePath(...components: readonly string[]): string {
  return validateRelativePath(components.filter((c) => c !== '').join('/'));
}
