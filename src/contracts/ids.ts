/**
 * Identifier rules of docs/wire.md "Identifiers": repository 32 lowercase hex; revisions and
 * digests 64 lowercase hex; signatures 128 lowercase hex; every other id or code
 * `^[A-Za-z0-9._-]{1,128}$`. Each rule exists once as a checker and once as a JSON Schema
 * fragment (marked with `idKind`, so a pattern failure inside a decoder is ID_INVALID too).
 */
import { AgentscmError } from './errors.js';

export const ID_PATTERN = '^[A-Za-z0-9._-]{1,128}$';
export const REPOSITORY_ID_PATTERN = '^[0-9a-f]{32}$';
export const DIGEST_PATTERN = '^[0-9a-f]{64}$';
export const SIGNATURE_PATTERN = '^[0-9a-f]{128}$';

/** Longest general id, in characters (= bytes: ids are ASCII). */
export const MAX_ID_LENGTH = 128;

export const ID_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_ID_LENGTH,
  pattern: ID_PATTERN,
  idKind: 'id',
} as const;
export const REPOSITORY_ID_SCHEMA = {
  type: 'string',
  minLength: 32,
  maxLength: 32,
  pattern: REPOSITORY_ID_PATTERN,
  idKind: 'repository',
} as const;
export const DIGEST_SCHEMA = {
  type: 'string',
  minLength: 64,
  maxLength: 64,
  pattern: DIGEST_PATTERN,
  idKind: 'digest',
} as const;
export const SIGNATURE_SCHEMA = {
  type: 'string',
  minLength: 128,
  maxLength: 128,
  pattern: SIGNATURE_PATTERN,
  idKind: 'signature',
} as const;
/** A u64 field (fence, epoch, version, lease ms, length): decoded exactly, as bigint. */
export const U64_SCHEMA = { u64: true } as const;

const ID_RE = new RegExp(ID_PATTERN);
const REPOSITORY_RE = new RegExp(REPOSITORY_ID_PATTERN);
const DIGEST_RE = new RegExp(DIGEST_PATTERN);
const SIGNATURE_RE = new RegExp(SIGNATURE_PATTERN);

function check(value: unknown, re: RegExp, maxLength: number, what: string, rule: string): string {
  // The length check first keeps the regex away from oversize input and the message short.
  if (typeof value !== 'string' || value.length > maxLength || !re.test(value)) {
    const shown =
      typeof value !== 'string'
        ? typeof value
        : value.length > 80
          ? `${JSON.stringify(value.slice(0, 80))}… (${value.length} characters)`
          : JSON.stringify(value);
    // The message states the rule; a hint repeating it would say nothing more.
    throw new AgentscmError('ID_INVALID', `${what} ${shown} is not valid: it must be ${rule}`, { details: { what } });
  }
  return value;
}

/** A general id or code (docs/wire.md "Identifiers": ^[A-Za-z0-9._-]{1,128}$) → the id, or ID_INVALID. */
export function validateId(value: unknown, what = 'id'): string {
  return check(value, ID_RE, MAX_ID_LENGTH, what, '1 to 128 characters of A-Z a-z 0-9 . _ -');
}

/** A repository id (docs/wire.md "Identifiers": 32 lowercase hex) → the id, or ID_INVALID. */
export function validateRepositoryId(value: unknown, what = 'repository id'): string {
  return check(value, REPOSITORY_RE, 32, what, '32 lowercase hex digits');
}

/** A revision id or SHA-256 digest (docs/wire.md "Identifiers": 64 lowercase hex) → the digest, or ID_INVALID. */
export function validateDigestHex(value: unknown, what = 'digest'): string {
  return check(value, DIGEST_RE, 64, what, '64 lowercase hex digits');
}

/** An Ed25519 signature (docs/wire.md "Keys": 128 lowercase hex) → the signature, or ID_INVALID. */
export function validateSignatureHex(value: unknown, what = 'signature'): string {
  return check(value, SIGNATURE_RE, 128, what, '128 lowercase hex digits');
}

/** Non-throwing form of validateId (docs/wire.md "Identifiers"). */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_ID_LENGTH && ID_RE.test(value);
}

/** Non-throwing form of validateDigestHex (docs/wire.md "Identifiers"). */
export function isDigestHex(value: unknown): value is string {
  return typeof value === 'string' && value.length === 64 && DIGEST_RE.test(value);
}
