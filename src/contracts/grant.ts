/**
 * Grants and their bearer tokens (docs/wire.md "Authority identity and grants"): an actor is
 * OWNER/AGENT; a token is `agentscm_` followed by 43 base64url characters, the unpadded
 * encoding of 256 random bits; the authority keeps only the token's SHA-256. Pure: formats and
 * digests, no I/O and no randomness (the caller supplies the bytes).
 */
import { sha256Hex } from '../crypto/sha256.js';
import { AgentscmError } from './errors.js';
import { validateId } from './ids.js';
import type { AgentRef } from './task/common.js';

/** Every token starts with this prefix, so that a leaked token is recognizable. */
export const GRANT_TOKEN_PREFIX = 'agentscm_';
/** Random bytes behind a token (256 bits). */
export const GRANT_TOKEN_BYTES = 32;
/** Length of a token: the prefix and 43 base64url characters. */
export const GRANT_TOKEN_LENGTH = GRANT_TOKEN_PREFIX.length + 43;

const TOKEN_PATTERN = /^agentscm_[A-Za-z0-9_-]{43}$/;

/** What a grant allows: `agent` runs task operations; `reader` is kept for the hub's read-only routes. */
export type GrantScope = 'agent' | 'reader';
export const GRANT_SCOPES: readonly GrantScope[] = ['agent', 'reader'];

/** The live origin of a task operation: the grant and the generation its token belongs to. */
export interface GrantOrigin {
  readonly owner_id: string;
  readonly agent_id: string;
  readonly grant_id: string;
  readonly grant_generation: bigint;
}

/** Parse `OWNER/AGENT` (each an id of docs/wire.md "Identifiers"); USAGE otherwise. */
export function parseActor(text: string, flag = '--actor'): AgentRef {
  const slash = text.indexOf('/');
  if (slash < 0 || slash !== text.lastIndexOf('/')) {
    throw new AgentscmError('USAGE', `${flag} ${JSON.stringify(text.slice(0, 300))} is not OWNER/AGENT`, {
      hint: `pass ${flag} OWNER/AGENT, e.g. ${flag} alice/claude-1`,
    });
  }
  return {
    owner_id: validateId(text.slice(0, slash), 'actor owner'),
    agent_id: validateId(text.slice(slash + 1), 'actor agent'),
  };
}

/** Parse a grant scope (`agent` or `reader`); USAGE otherwise. */
export function parseGrantScope(text: string): GrantScope {
  if (text === 'agent' || text === 'reader') return text;
  throw new AgentscmError('USAGE', `--scope ${JSON.stringify(text.slice(0, 64))} is not agent or reader`, {
    hint: 'pass --scope agent (task operations) or --scope reader',
  });
}

/** The token for 32 random bytes (the caller draws them from a CSPRNG). */
export function formatGrantToken(random: Uint8Array): string {
  if (random.byteLength !== GRANT_TOKEN_BYTES)
    throw new AgentscmError('INTERNAL', `a grant token needs ${GRANT_TOKEN_BYTES} random bytes`);
  return `${GRANT_TOKEN_PREFIX}${Buffer.from(random).toString('base64url')}`;
}

/**
 * Whether `text` is exactly a token: the prefix, 43 base64url characters, and the canonical
 * encoding of 32 bytes (the last character carries 2 unused bits, which must be zero).
 */
export function isGrantToken(text: string): boolean {
  if (!TOKEN_PATTERN.test(text)) return false;
  const body = text.slice(GRANT_TOKEN_PREFIX.length);
  return Buffer.from(body, 'base64url').toString('base64url') === body;
}

/** What the authority stores of a token: the plain SHA-256 of its ASCII bytes, lowercase hex. */
export function grantTokenSha256(token: string): string {
  return sha256Hex(Buffer.from(token, 'ascii'));
}
