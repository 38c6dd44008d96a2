/**
 * Identifier checks at the native boundary (docs/wire.md "Identifiers"), delegating to the one
 * definition in contracts/ids.ts. Every value is checked before it reaches a query, so a
 * malformed ID is ID_INVALID (exit 2), never "not found".
 */
import { isDigestHex, isId, validateDigestHex, validateId, validateRepositoryId } from '../contracts/ids.js';

const REPOSITORY_ID = /^[0-9a-f]{32}$/;

export function isRepositoryId(value: string): boolean {
  return value.length === 32 && REPOSITORY_ID.test(value);
}

export function isDigest(value: string): boolean {
  return isDigestHex(value);
}

export function isGenericId(value: string): boolean {
  return isId(value);
}

/** A repository ID is 32 lowercase hex (docs/wire.md). */
export function checkRepositoryId(value: string): string {
  return validateRepositoryId(value, 'repository ID');
}

/** A revision or blob digest is 64 lowercase hex (docs/wire.md). */
export function checkDigest(value: string, what: string): string {
  return validateDigestHex(value, what);
}

/** Every other ID (change, target, repository name): ^[A-Za-z0-9._-]{1,128}$ (docs/wire.md). */
export function checkGenericId(value: string, what: string): string {
  return validateId(value, what);
}
