/**
 * Revision and digest prefixes (docs/cli.md "Prefixes"): wherever a command takes a revision
 * or digest, a unique prefix of at least 8 lowercase hex digits names it, as git accepts an
 * abbreviated object name. An ambiguous prefix is ID_PREFIX_AMBIGUOUS and an unknown one the
 * caller's not-found code, each with the number of candidates; a shorter or non-hex value is
 * ID_INVALID. A full 64-hex value is returned unchanged, for the caller's own lookup.
 */
import { AgentscmError, type ErrorCode } from '../contracts/errors.js';
import { quoteForMessage } from '../contracts/message-text.js';

/** The shortest prefix accepted. */
export const MIN_PREFIX_HEX = 8;

const FULL = /^[0-9a-f]{64}$/;
const PREFIX = /^[0-9a-f]{8,63}$/;

export interface PrefixLookup {
  /** What the value names, for messages: "revision", "review context". */
  readonly what: string;
  /** The code for a prefix that matches nothing. */
  readonly notFound: ErrorCode;
  /** Where the user finds the full values, for hints. */
  readonly listHint: string;
  /** How many stored values start with the prefix, and the first of them (in order). */
  readonly candidates: (prefix: string) => { readonly count: number; readonly first: string | null };
}

/** The full 64-hex value `value` names (itself when it is full), or the error above. */
export function resolveHexPrefix(value: string, lookup: PrefixLookup): string {
  if (FULL.test(value)) return value;
  if (!PREFIX.test(value)) {
    const shown = value.length > 80 ? `${quoteForMessage(value.slice(0, 80))}…` : quoteForMessage(value);
    throw new AgentscmError(
      'ID_INVALID',
      `${lookup.what} ${shown} is neither 64 lowercase hex digits nor a prefix of at least ${MIN_PREFIX_HEX} of them`,
      {
        hint: lookup.listHint,
        details: { what: lookup.what },
      },
    );
  }
  const { count, first } = lookup.candidates(value);
  if (count === 0 || first === null) {
    throw new AgentscmError(lookup.notFound, `no ${lookup.what} starts with ${value} (0 candidates)`, {
      hint: lookup.listHint,
    });
  }
  if (count > 1) {
    throw new AgentscmError('ID_PREFIX_AMBIGUOUS', `${lookup.what} prefix ${value} matches ${count} candidates`, {
      hint: `give more digits; ${lookup.listHint}`,
    });
  }
  return first;
}

/**
 * The SQL range [prefix, prefix + 'g') holds exactly the lowercase-hex values starting with prefix, and uses the index.
 */
export function prefixRange(prefix: string): [string, string] {
  return [prefix, `${prefix}g`];
}
