/**
 * Identifier checks at the native boundary (WIRE.md "Identifiers"). Every value that reaches
 * a query is checked first so that a malformed ID is ID_INVALID (exit 2), never "not found".
 */
import { AgentscmError } from '../contracts/errors.js';

const REPOSITORY_ID = /^[0-9a-f]{32}$/;
const DIGEST = /^[0-9a-f]{64}$/;
const GENERIC_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function isRepositoryId(value: string): boolean {
  return REPOSITORY_ID.test(value);
}

export function isDigest(value: string): boolean {
  return DIGEST.test(value);
}

export function isGenericId(value: string): boolean {
  return GENERIC_ID.test(value);
}

function printable(value: string): string {
  const clipped = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  return JSON.stringify(clipped);
}

/** A repository ID is 32 lowercase hex (WIRE.md). */
export function checkRepositoryId(value: string): string {
  if (!isRepositoryId(value)) {
    throw new AgentscmError('ID_INVALID', `repository ID ${printable(value)} is not 32 lowercase hex characters`);
  }
  return value;
}

/** A revision or blob digest is 64 lowercase hex (WIRE.md). */
export function checkDigest(value: string, what: string): string {
  if (!isDigest(value)) throw new AgentscmError('ID_INVALID', `${what} ${printable(value)} is not 64 lowercase hex characters`);
  return value;
}

/** Every other ID (change, target, repository name): ^[A-Za-z0-9._-]{1,128}$ (WIRE.md). */
export function checkGenericId(value: string, what: string): string {
  if (!isGenericId(value)) throw new AgentscmError('ID_INVALID', `${what} ${printable(value)} must match ^[A-Za-z0-9._-]{1,128}$`);
  return value;
}
