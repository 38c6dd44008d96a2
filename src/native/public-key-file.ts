/**
 * `--public-key-file` of `receipt verify` and `agent-task enroll` (docs/keys-and-enrollment.md
 * "Public key files"): a public key read from a file instead of pasted as 64 hex digits.
 */
import { AgentscmError } from '../contracts/errors.js';
import { decodeKeyFile, KEY_FILE_MAX_BYTES, parsePublicKeyHex } from '../contracts/key-file.js';
import { readBoundedInput } from './bounded-input.js';

/** The most a --public-key-file may hold: a key file (KEY_FILE_MAX_BYTES) is the largest form. */
const PUBLIC_KEY_FILE_MAX_BYTES = KEY_FILE_MAX_BYTES;

/**
 * The public key a `--public-key-file` names: the file holds the 64 lowercase hex digits (one
 * trailing newline allowed), or it is a signing key file (`agent-task key`, `collector add`), whose
 * `public_key` is checked against its private key before it is used.
 */
export function readPublicKeyFile(path: string): string {
  const bytes = readBoundedInput(path, {
    limit: PUBLIC_KEY_FILE_MAX_BYTES,
    what: 'the public key file',
    missingHint: 'pass a file holding the signer public key (64 hex), or the signing-key.json of the collector',
    tooLargeHint: 'a public key file holds 64 hex digits or one signing key file',
  });
  const text = bytes.toString('utf8');
  const hex = /^([0-9a-f]{64})\n?$/.exec(text)?.[1];
  if (hex !== undefined) {
    parsePublicKeyHex(hex);
    return hex;
  }
  if (text.trimStart().startsWith('{')) return decodeKeyFile(bytes).publicKeyHex;
  throw new AgentscmError(
    'PUBLIC_KEY_INVALID',
    `${path} holds neither a public key (64 lowercase hex) nor a key file`,
    {
      hint: 'pass the public_key printed by `agentscm agent-task collector add`, or its signing-key.json',
    },
  );
}
