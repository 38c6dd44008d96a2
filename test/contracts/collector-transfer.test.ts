/**
 * The collector transfer envelope v1 against test/vectors/collector-v1.json (copied unchanged
 * from the project's shared vectors; computed independently with Python's json module, hashlib
 * and the cryptography package; read here with the exact-integer parser because its fence is
 * the largest u64): canonical header bytes, header digest, signature, the framed envelope, its
 * length and SHA-256 reproduced byte for byte; then every refusal of the reader with its code.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  checkTransferSignature,
  decodeTransferHeader,
  encodeTransferEnvelope,
  encodeTransferHeader,
  frameTransferEnvelope,
  readTransferEnvelope,
  readTransferPrefix,
  signTransferHeader,
  TRANSFER_LIMITS,
  transferDigest,
  transferHeaderDigest,
  transferHeaderToJson,
  transferKindOf,
  transferRecordEntry,
  verifyTransferEnvelope,
  type TransferHeader,
} from '../../src/contracts/collector/transfer.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import { encodeCanonical, formatJson } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject, U64_MAX, type JsonObject, type JsonValue } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { generateKeyPair, publicKeyOf, signDigest, verificationKeyId } from '../../src/crypto/ed25519.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';

const vector = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'collector-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(vector));
const text = (name: string): string => {
  const value = vector[name];
  assert.equal(typeof value, 'string', name);
  return value as string;
};
const seed = Buffer.from(text('test_private_key_seed_hex'), 'hex');
const publicKey = Buffer.from(text('public_key_hex'), 'hex');
const headerBytes = Buffer.from(text('transfer_header_canonical_utf8'), 'utf8');
const records = (vector.records_hex as string[]).map((hex) => Buffer.from(hex, 'hex'));
const envelope = Buffer.from(text('envelope_hex'), 'hex');
const header: TransferHeader = decodeTransferHeader(headerBytes);
const signature = Buffer.from(text('transfer_signature_hex'), 'hex');

/** The error an envelope check throws, with its code and details. */
function refusal(fn: () => unknown): AgentscmError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentscmError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

/** The header JSON (exact integers) with one edit, re-encoded canonically. */
function editedHeaderBytes(edit: (value: JsonObject) => void): Buffer {
  const value = transferHeaderToJson(header);
  edit(value);
  return encodeCanonical(value);
}

test('the vector header decodes and re-encodes to its exact canonical bytes', () => {
  assert.ok(encodeTransferHeader(header).equals(headerBytes));
  assert.equal(header.fence, U64_MAX);
  const fromVectorJson = encodeCanonical(vector.transfer_header as JsonValue);
  assert.ok(fromVectorJson.equals(headerBytes));
});

test('the header digest of the vector is reproduced (domain agentscm.collector-transfer.v1)', () => {
  assert.equal(transferHeaderDigest(headerBytes), text('transfer_header_digest'));
});

test('signing the header with the vector seed reproduces the signature and key id', () => {
  assert.equal(Buffer.from(publicKeyOf(seed)).toString('hex'), text('public_key_hex'));
  assert.equal(verificationKeyId(publicKey), text('verification_key_id'));
  assert.equal(Buffer.from(signTransferHeader(header, seed)).toString('hex'), text('transfer_signature_hex'));
});

test('the record entries of the vector are the length and plain SHA-256 of its record bytes', () => {
  assert.deepEqual(transferRecordEntry('execution_request', records[0] as Buffer), header.records[0]);
  assert.deepEqual(transferRecordEntry('execution_record', records[1] as Buffer), header.records[1]);
});

test('the whole framed envelope, its length and its SHA-256 are reproduced byte for byte', () => {
  const encoded = encodeTransferEnvelope(header, records, seed);
  assert.equal(encoded.toString('hex'), text('envelope_hex'));
  assert.equal(encoded.byteLength, Number(vector.envelope_length));
  assert.equal(transferDigest(encoded), text('envelope_sha256'));
  assert.ok(frameTransferEnvelope(headerBytes, signature, records).equals(envelope));
});

test('the vector envelope verifies under its key; records are views of the input', () => {
  const verified = verifyTransferEnvelope(envelope, publicKey);
  assert.equal(verified.verification_key_id, text('verification_key_id'));
  assert.equal(verified.headerDigest, text('transfer_header_digest'));
  assert.equal(verified.length, 1436);
  assert.deepEqual(verified.header, header);
  assert.equal(Buffer.from(verified.signature).toString('hex'), text('transfer_signature_hex'));
  assert.deepEqual(
    verified.records.map((record) => Buffer.from(record.bytes).toString('hex')),
    vector.records_hex,
  );
  assert.equal(verified.records[0]?.bytes.buffer, envelope.buffer, 'a record is a view, not a copy');
  assert.deepEqual(readTransferEnvelope(envelope).header, header);
});

// ------------------------------------------------------------ tampering

interface Leaf {
  readonly path: readonly (string | number)[];
  readonly value: JsonValue;
}

function leaves(value: JsonValue, path: (string | number)[] = []): Leaf[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => leaves(item, [...path, index]));
  if (isJsonObject(value)) return Object.keys(value).flatMap((key) => leaves(value[key] as JsonValue, [...path, key]));
  return [{ path, value }];
}

/** Another valid value of the same kind: the last hex digit or id character changed, an integer moved by one. */
function otherValue(value: JsonValue): JsonValue {
  if (typeof value === 'bigint') return value === U64_MAX ? value - 1n : value + 1n;
  if (typeof value === 'number') return value + 1;
  assert.equal(typeof value, 'string');
  const s = value as string;
  const last = s.at(-1) as string;
  const replacement = /^[0-9a-f]+$/.test(s) ? (last === '0' ? '1' : '0') : last === 'x' ? 'y' : 'x';
  return `${s.slice(0, -1)}${replacement}`;
}

function setAt(value: JsonObject, path: readonly (string | number)[], leaf: JsonValue): void {
  let node = value as Record<string | number, JsonValue>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, JsonValue>;
  node[path.at(-1) as string | number] = leaf;
}

test('every header field tampered without re-signing is refused by the signature check', () => {
  const tampered: string[] = [];
  for (const leaf of leaves(transferHeaderToJson(header))) {
    const name = leaf.path.join('.');
    // The version is checked before the signature; a record's kind or length changes the framing (both below).
    if (name === 'version' || name.endsWith('.kind') || name.endsWith('.length')) continue;
    const bytes = editedHeaderBytes((value) => setAt(value, leaf.path, otherValue(leaf.value)));
    assert.ok(!bytes.equals(headerBytes), name);
    const forged = frameTransferEnvelope(bytes, signature, records);
    // The framing and the record digests alone accept it: only the signature tells.
    if (!name.endsWith('.digest')) readTransferEnvelope(forged);
    const error = refusal(() => verifyTransferEnvelope(forged, publicKey));
    assert.equal(error.code, 'TRANSFER_SIGNATURE_INVALID', name);
    tampered.push(name);
  }
  assert.equal(tampered.length, 23, tampered.join(' '));
});

test('a tampered version, record kind or record length is refused by its own check', () => {
  const version = frameTransferEnvelope(
    editedHeaderBytes((v) => (v.version = 2)),
    signature,
    records,
  );
  const versionError = refusal(() => verifyTransferEnvelope(version, publicKey));
  assert.equal(versionError.code, 'TRANSFER_HEADER_INVALID');
  assert.equal(versionError.details?.cause_code, 'SCHEMA_VERSION_UNSUPPORTED');

  const swapped = editedHeaderBytes((v) => {
    const list = v.records as JsonObject[];
    (list[0] as JsonObject).kind = 'execution_record';
    (list[1] as JsonObject).kind = 'execution_request';
  });
  assert.equal(
    codeOf(() => verifyTransferEnvelope(frameTransferEnvelope(swapped, signature, records), publicKey)),
    'TRANSFER_RECORDS_INVALID',
  );

  const longer = editedHeaderBytes((v) => (((v.records as JsonObject[])[1] as JsonObject).length = 49n));
  assert.equal(
    codeOf(() => verifyTransferEnvelope(frameTransferEnvelope(longer, signature, records), publicKey)),
    'TRANSFER_TRUNCATED',
  );
  const shorter = editedHeaderBytes((v) => (((v.records as JsonObject[])[1] as JsonObject).length = 47n));
  assert.equal(
    codeOf(() => verifyTransferEnvelope(frameTransferEnvelope(shorter, signature, records), publicKey)),
    'TRANSFER_TRAILING_BYTES',
  );
});

test('a changed signature, another key, or a key the header does not name is refused', () => {
  for (const index of [0, 31, 32, 63]) {
    const forged = Buffer.from(envelope);
    const at = TRANSFER_LIMITS.prefixBytes + headerBytes.byteLength + index;
    forged[at] = (forged[at] as number) ^ 0x01;
    assert.equal(
      codeOf(() => verifyTransferEnvelope(forged, publicKey)),
      'TRANSFER_SIGNATURE_INVALID',
      `signature byte ${index}`,
    );
  }
  const other = generateKeyPair();
  const error = refusal(() => verifyTransferEnvelope(envelope, other.publicKey));
  assert.equal(error.code, 'TRANSFER_SIGNATURE_INVALID');
  assert.equal(error.details?.verification_key_id, verificationKeyId(other.publicKey));

  // Signed by the other key over a header that still names the vector key.
  const foreignSignature = signDigest(Buffer.from(transferHeaderDigest(headerBytes), 'hex'), other.privateKey);
  const foreign = frameTransferEnvelope(headerBytes, foreignSignature, records);
  assert.equal(
    codeOf(() => verifyTransferEnvelope(foreign, other.publicKey)),
    'TRANSFER_KEY_MISMATCH',
  );
  assert.equal(
    codeOf(() => verifyTransferEnvelope(foreign, publicKey)),
    'TRANSFER_SIGNATURE_INVALID',
  );

  const smallOrder = Buffer.alloc(32);
  smallOrder[0] = 1;
  assert.equal(
    codeOf(() => verifyTransferEnvelope(envelope, smallOrder)),
    'PUBLIC_KEY_INVALID',
  );
  assert.equal(
    codeOf(() => checkTransferSignature(readTransferEnvelope(envelope), publicKey)),
    'ok',
  );
});

test('every proper prefix of the envelope is refused as truncated', () => {
  for (let length = 0; length < envelope.byteLength; length++) {
    const code = codeOf(() => verifyTransferEnvelope(envelope.subarray(0, length), publicKey));
    assert.equal(code, 'TRANSFER_TRUNCATED', `first ${length} bytes`);
  }
});

test('bytes after the last record are refused as trailing bytes', () => {
  for (const extra of [Buffer.from([0]), Buffer.from('{}'), Buffer.alloc(4096, 0x41)]) {
    const error = refusal(() => verifyTransferEnvelope(Buffer.concat([envelope, extra]), publicKey));
    assert.equal(error.code, 'TRANSFER_TRAILING_BYTES');
    assert.equal(error.details?.declared_length, envelope.byteLength);
  }
  assert.equal(
    codeOf(() => readTransferEnvelope(Buffer.concat([envelope, Buffer.from([0])]))),
    'TRANSFER_TRAILING_BYTES',
  );
});

test('a wrong magic is refused, whichever of its bytes differs', () => {
  for (let index = 0; index < 8; index++) {
    const wrong = Buffer.from(envelope);
    wrong[index] = (wrong[index] as number) ^ 0x20;
    assert.equal(
      codeOf(() => verifyTransferEnvelope(wrong, publicKey)),
      'TRANSFER_MAGIC_INVALID',
      `magic byte ${index}`,
    );
  }
  assert.equal(
    codeOf(() => readTransferEnvelope(Buffer.from('AGSCMTR2'))),
    'TRANSFER_MAGIC_INVALID',
  );
  assert.equal(
    codeOf(() => readTransferEnvelope(Buffer.from('{"version":1}'))),
    'TRANSFER_MAGIC_INVALID',
  );
  assert.equal(
    codeOf(() => readTransferEnvelope(Buffer.from('AG'))),
    'TRANSFER_TRUNCATED',
  );
});

test('a changed record byte is a record digest mismatch naming the record', () => {
  const recordsStart = envelope.byteLength - (records[0] as Buffer).byteLength - (records[1] as Buffer).byteLength;
  for (const [index, offset] of [
    [0, recordsStart],
    [0, recordsStart + 58],
    [1, recordsStart + 59],
    [1, envelope.byteLength - 1],
  ] as const) {
    const changed = Buffer.from(envelope);
    changed[offset] = (changed[offset] as number) ^ 0x01;
    const error = refusal(() => verifyTransferEnvelope(changed, publicKey));
    assert.equal(error.code, 'TRANSFER_RECORD_DIGEST_MISMATCH');
    assert.equal(error.details?.index, index);
    assert.equal(
      codeOf(() => readTransferEnvelope(changed)),
      'TRANSFER_RECORD_DIGEST_MISMATCH',
    );
  }
});

test('an envelope over 16 MiB is refused from its declared lengths, from the prefix alone', () => {
  // Record lengths that add up to `total` bytes in all, signed: nothing but the size is wrong.
  const declaring = (total: number): Buffer => {
    let bytes: Buffer = headerBytes;
    for (let round = 0; round < 3; round++) {
      const length =
        total -
        TRANSFER_LIMITS.prefixBytes -
        bytes.byteLength -
        TRANSFER_LIMITS.signatureBytes -
        (records[0] as Buffer).byteLength;
      bytes = editedHeaderBytes((v) => (((v.records as JsonObject[])[1] as JsonObject).length = BigInt(length)));
    }
    return bytes;
  };
  const prefixOf = (bytes: Buffer): Buffer =>
    Buffer.concat([
      Buffer.from('AGSCMTR1'),
      Buffer.from([0, 0, bytes.byteLength >> 8, bytes.byteLength & 0xff]),
      bytes,
    ]);
  const big = declaring(TRANSFER_LIMITS.maxEnvelopeBytes + 1);
  const bigSignature = signDigest(Buffer.from(transferHeaderDigest(big), 'hex'), seed);
  const prefix = prefixOf(big);
  // The first 12 + header_length bytes are enough to refuse it: no record byte is needed or held.
  const error = refusal(() => readTransferPrefix(prefix));
  assert.equal(error.code, 'TRANSFER_TOO_LARGE');
  assert.equal(error.details?.declared_length, String(TRANSFER_LIMITS.maxEnvelopeBytes + 1));
  // Given the prefix, the signature and a few bytes, the whole-envelope reader says too large, not truncated.
  const short = Buffer.concat([prefix, bigSignature, records[0] as Buffer]);
  assert.equal(
    codeOf(() => verifyTransferEnvelope(short, publicKey)),
    'TRANSFER_TOO_LARGE',
  );
  // Exactly 16 MiB declared is within the limit: the same prefix is then merely truncated.
  assert.equal(
    readTransferPrefix(prefixOf(declaring(TRANSFER_LIMITS.maxEnvelopeBytes))).declaredLength,
    TRANSFER_LIMITS.maxEnvelopeBytes,
  );
  // A length near the u64 maximum does not wrap around.
  const huge = editedHeaderBytes((v) => (((v.records as JsonObject[])[0] as JsonObject).length = U64_MAX));
  assert.equal(
    codeOf(() => readTransferPrefix(prefixOf(huge))),
    'TRANSFER_TOO_LARGE',
  );
});

test('an input over 16 MiB is refused by its length before its magic is looked at', () => {
  const oversize = Buffer.alloc(TRANSFER_LIMITS.maxEnvelopeBytes + 1);
  envelope.copy(oversize);
  assert.equal(
    codeOf(() => verifyTransferEnvelope(oversize, publicKey)),
    'TRANSFER_TOO_LARGE',
  );
});

test('a declared header over 64 KiB is refused from the 12-byte prefix, before the header is read', () => {
  for (const length of [TRANSFER_LIMITS.maxHeaderBytes + 1, 0xffffffff]) {
    const prefix = Buffer.alloc(12);
    prefix.write('AGSCMTR1', 0, 'ascii');
    prefix.writeUInt32BE(length, 8);
    const error = refusal(() => readTransferPrefix(prefix));
    assert.equal(error.code, 'TRANSFER_HEADER_TOO_LARGE');
    assert.equal(error.details?.header_length, length);
  }
  assert.equal(
    codeOf(() => frameTransferEnvelope(Buffer.alloc(TRANSFER_LIMITS.maxHeaderBytes + 1), signature, records)),
    'TRANSFER_HEADER_TOO_LARGE',
  );
});

test('a header that is not strict JSON of its schema is refused, naming the decoding rule', () => {
  const cases: [string, Buffer, string][] = [
    ['unknown field', editedHeaderBytes((v) => ((v.origin as JsonObject).scope = 'agent')), 'SCHEMA_UNKNOWN_FIELD'],
    ['missing field', editedHeaderBytes((v) => delete v.request_digest), 'SCHEMA_MISSING_FIELD'],
    ['fence 0', editedHeaderBytes((v) => (v.fence = 0n)), 'SCHEMA_BOUND'],
    ['bad audience', editedHeaderBytes((v) => (v.audience = 'FEDCBA9876543210FEDCBA9876543210')), 'ID_INVALID'],
    [
      'record length 0',
      editedHeaderBytes((v) => (((v.records as JsonObject[])[0] as JsonObject).length = 0n)),
      'SCHEMA_BOUND',
    ],
    [
      '34 records',
      editedHeaderBytes((v) =>
        (v.records as JsonValue[]).push(
          ...Array.from({ length: 32 }, () => structuredClone((v.records as JsonValue[])[1] as JsonValue)),
        ),
      ),
      'SCHEMA_BOUND',
    ],
    ['not JSON', Buffer.from('{"version":1,'), 'JSON_SYNTAX'],
    ['empty', Buffer.alloc(0), 'JSON_SYNTAX'],
    [
      'duplicate key',
      Buffer.from(headerBytes.toString('utf8').replace('{"version":1,', '{"version":1,"version":1,')),
      'JSON_DUPLICATE_KEY',
    ],
    [
      'invalid UTF-8',
      Buffer.concat([headerBytes.subarray(0, 20), Buffer.from([0xff]), headerBytes.subarray(21)]),
      'JSON_INVALID_UTF8',
    ],
  ];
  for (const [name, bytes, cause] of cases) {
    const error = refusal(() => verifyTransferEnvelope(frameTransferEnvelope(bytes, signature, records), publicKey));
    assert.equal(error.code, 'TRANSFER_HEADER_INVALID', name);
    assert.equal(error.details?.cause_code, cause, name);
  }
});

test('a header that is valid but not canonical is refused, even when it is signed', () => {
  const spaced = Buffer.from(formatJson(transferHeaderToJson(header)));
  const reordered = (() => {
    const value = transferHeaderToJson(header);
    const out: JsonObject = {};
    for (const key of Object.keys(value).reverse()) out[key] = value[key] as JsonValue;
    return encodeCanonical(out);
  })();
  for (const bytes of [spaced, reordered]) {
    const signed = signDigest(Buffer.from(transferHeaderDigest(bytes), 'hex'), seed);
    assert.equal(
      codeOf(() => verifyTransferEnvelope(frameTransferEnvelope(bytes, signed, records), publicKey)),
      'TRANSFER_HEADER_NOT_CANONICAL',
    );
  }
});

test('the record sequence is a command collection or a finite review; mixed and other sequences are refused', () => {
  const review = editedHeaderBytes((v) => {
    const list = v.records as JsonObject[];
    (list[0] as JsonObject).kind = 'review_request';
    (list[1] as JsonObject).kind = 'review_record';
  });
  assert.equal(
    readTransferEnvelope(frameTransferEnvelope(review, signature, records)).header.records[1]?.kind,
    'review_record',
  );
  assert.equal(transferKindOf([{ kind: 'execution_request' }, { kind: 'execution_record' }]), 'command');
  assert.equal(transferKindOf([{ kind: 'review_record' }]), 'review');
  assert.equal(
    transferKindOf([
      ...Array<{ kind: 'review_request' }>(32).fill({ kind: 'review_request' }),
      { kind: 'review_record' },
    ]),
    'review',
  );
  assert.equal(
    transferKindOf([
      ...Array<{ kind: 'review_request' }>(33).fill({ kind: 'review_request' }),
      { kind: 'review_record' },
    ]),
    null,
  );
  assert.equal(transferKindOf([{ kind: 'review_record' }, { kind: 'review_request' }]), null);
  assert.equal(transferKindOf([{ kind: 'execution_request' }, { kind: 'review_record' }]), null);
  assert.equal(transferKindOf([{ kind: 'review_request' }, { kind: 'execution_record' }]), null);
  const mixed = editedHeaderBytes((v) => (((v.records as JsonObject[])[0] as JsonObject).kind = 'review_request'));
  assert.equal(
    codeOf(() => readTransferEnvelope(frameTransferEnvelope(mixed, signature, records))),
    'TRANSFER_RECORDS_INVALID',
  );
  const unknownKind = editedHeaderBytes((v) => (((v.records as JsonObject[])[0] as JsonObject).kind = 'artifact_url'));
  assert.equal(refusal(() => decodeTransferHeader(unknownKind)).details?.cause_code, 'SCHEMA_TYPE');
  const one = editedHeaderBytes((v) => (v.records as JsonValue[]).pop());
  assert.equal(
    codeOf(() => readTransferEnvelope(frameTransferEnvelope(one, signature, records.slice(0, 1)))),
    'TRANSFER_RECORDS_INVALID',
  );
  const none = editedHeaderBytes((v) => (v.records = []));
  assert.equal(
    codeOf(() => readTransferEnvelope(frameTransferEnvelope(none, signature, []))),
    'TRANSFER_RECORDS_INVALID',
  );
});

test('the encoder refuses a key the header does not name, records that do not match, and more than 16 MiB', () => {
  assert.equal(
    codeOf(() => encodeTransferEnvelope(header, records, generateKeyPair().privateKey)),
    'SIGNING_KEY_MISMATCH',
  );
  assert.equal(
    codeOf(() => encodeTransferEnvelope(header, [records[0] as Buffer, Buffer.from('{"x":1}')], seed)),
    'TRANSFER_RECORD_DIGEST_MISMATCH',
  );
  assert.equal(
    codeOf(() => encodeTransferEnvelope(header, records.slice(0, 1), seed)),
    'TRANSFER_RECORDS_INVALID',
  );
  const large = Buffer.alloc(TRANSFER_LIMITS.maxEnvelopeBytes, 0x7b);
  const largeHeader: TransferHeader = {
    ...header,
    records: [header.records[0] as TransferHeader['records'][number], transferRecordEntry('execution_record', large)],
  };
  assert.equal(
    codeOf(() => encodeTransferEnvelope(largeHeader, [records[0] as Buffer, large], seed)),
    'TRANSFER_TOO_LARGE',
  );
});

test('signDigest signs only the 32 raw digest bytes, never the hex text', () => {
  const digest = text('transfer_header_digest');
  assert.throws(() => signDigest(Buffer.from(digest, 'utf8'), seed), RangeError);
  assert.equal(
    Buffer.from(signDigest(Buffer.from(digest, 'hex'), seed)).toString('hex'),
    text('transfer_signature_hex'),
  );
});
