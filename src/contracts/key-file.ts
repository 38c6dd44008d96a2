/**
 * The private key file of docs/wire.md "Keys":
 * {"version":1,"algorithm":"ed25519","private_key":hex64,"public_key":hex64,"key_id":hex64},
 * key_id = verification_key_id = SHA-256 of the 32 raw public key bytes. Pure encode/decode;
 * the file I/O and permission checks live in src/collector/key-store.ts. (In contracts/, not
 * crypto/, because decoding needs the strict JSON decoder and the error table.)
 */
import { publicKeyOf, publicKeyProblem, verificationKeyId } from '../crypto/ed25519.js';
import { AgentscmError, isAgentscmError } from './errors.js';
import { DIGEST_SCHEMA } from './ids.js';
import { encodeCanonicalText } from './json/canonical-json.js';
import { defineDecoder } from './json/schema.js';

export { KEY_FILE_NAME, isKeyFileName } from './key-file-name.js';

/** A key file is tiny; anything larger is not one. */
export const KEY_FILE_MAX_BYTES = 1024;

export interface KeyFile {
  readonly version: 1;
  readonly algorithm: 'ed25519';
  readonly private_key: string;
  readonly public_key: string;
  readonly key_id: string;
}

/** A decoded, self-consistent key. */
export interface SigningKey {
  readonly privateKey: Uint8Array;
  readonly publicKey: Uint8Array;
  /** 64 lowercase hex. */
  readonly publicKeyHex: string;
  readonly keyId: string;
}

export const KEY_FILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'algorithm', 'private_key', 'public_key', 'key_id'],
  properties: {
    version: { type: 'integer', const: 1 },
    algorithm: { const: 'ed25519' },
    private_key: DIGEST_SCHEMA,
    public_key: DIGEST_SCHEMA,
    key_id: DIGEST_SCHEMA,
  },
} as const;

const keyFileDecoder = defineDecoder<KeyFile>('agent-task.key-file', KEY_FILE_SCHEMA, {
  versionField: 'version',
  supportedVersions: [1],
});

/** The file bytes of a key (compact JSON in declared order plus a newline). */
export function encodeKeyFile(privateKey: Uint8Array): Uint8Array {
  const publicKey = publicKeyOf(privateKey);
  const text = encodeCanonicalText({
    version: 1,
    algorithm: 'ed25519',
    private_key: Buffer.from(privateKey).toString('hex'),
    public_key: Buffer.from(publicKey).toString('hex'),
    key_id: verificationKeyId(publicKey),
  });
  return Buffer.from(`${text}\n`, 'utf8');
}

function invalid(message: string, cause?: unknown): never {
  throw new AgentscmError('KEY_FILE_INVALID', message, {
    hint: 'use a key file written by `agentscm agent-task key`',
    cause,
  });
}

/** Decode and check a key file: strict JSON, and public_key and key_id derived from private_key. */
export function decodeKeyFile(bytes: Uint8Array): SigningKey {
  let file: KeyFile;
  try {
    file = keyFileDecoder.decode(bytes, KEY_FILE_MAX_BYTES);
  } catch (error) {
    if (isAgentscmError(error)) invalid(`the key file is malformed: ${error.message}`, error);
    throw error;
  }
  const privateKey = new Uint8Array(Buffer.from(file.private_key, 'hex'));
  const publicKey = publicKeyOf(privateKey);
  const publicKeyHex = Buffer.from(publicKey).toString('hex');
  if (publicKeyHex !== file.public_key) invalid('the key file public_key is not the public key of its private_key');
  const keyId = verificationKeyId(publicKey);
  if (keyId !== file.key_id) invalid('the key file key_id is not the SHA-256 of its public key');
  const problem = publicKeyProblem(publicKey);
  if (problem !== undefined) invalid(`the key file public key is unusable: ${problem}`);
  return { privateKey, publicKey, publicKeyHex, keyId };
}

/** Parse and check an operator-supplied public key: 64 lowercase hex, a canonical point, not of small order. */
export function parsePublicKeyHex(hex: string): Uint8Array {
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new AgentscmError('PUBLIC_KEY_INVALID', 'the public key must be 64 lowercase hex characters (32 bytes)', {
      hint: 'pass the public_key printed by `agentscm agent-task key`',
    });
  }
  const bytes = new Uint8Array(Buffer.from(hex, 'hex'));
  const problem = publicKeyProblem(bytes);
  if (problem !== undefined) {
    throw new AgentscmError('PUBLIC_KEY_INVALID', `the public key is not usable for Ed25519: ${problem}`, {
      hint: 'pass the public_key printed by `agentscm agent-task key`',
    });
  }
  return bytes;
}
