/**
 * The definition contract: strict decoding, every bound at the limit and one past it, and the
 * stable codes of each refusal (docs/skill-workflows.md "The definition";
 * docs/wire.md "Strict JSON decoding").
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import {
  decodeWorkflowDefinition,
  encodeWorkflowDefinition,
  WORKFLOW_LIMITS,
} from '../../src/contracts/workflow-definition.js';
import { compileStructure } from '../../src/workflows/plan.js';

// Fixtures mutate nested JSON and inspect thrown errors freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const HEX64 = 'a'.repeat(64);

function base(): Loose {
  return {
    version: 1,
    name: 'verify-native-source',
    source: { repository: '0123456789abcdef0123456789abcdef', revision: '0'.repeat(64), policy_epoch: 0 },
    skill: { entrypoint: 'skills/native-workflow/SKILL.md', resources: [] },
    steps: [
      {
        id: 'verify-guide',
        needs: [],
        required: true,
        action: { kind: 'source_paths', expectations: [{ path: 'docs/guide.md', sha256: HEX64 }] },
      },
    ],
  };
}

function decode(value: unknown): ReturnType<typeof decodeWorkflowDefinition> {
  return decodeWorkflowDefinition(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)));
}

function refusal(value: unknown, code: string, pattern?: RegExp): void {
  assert.throws(
    () => compileStructure(decode(value)),
    (error: unknown) => {
      assert.ok(error instanceof AgentscmError, `expected AgentscmError, got ${String(error)}`);
      assert.equal(error.code, code, error.message);
      if (pattern !== undefined) assert.match(error.message, pattern);
      return true;
    },
  );
}

function steps(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `s${i}`,
    needs: [],
    required: true,
    action: { kind: 'source_paths', expectations: [{ path: `f${i}`, sha256: HEX64 }] },
  }));
}

test('the spec example decodes, keeps u64 exact and round-trips through canonical bytes', () => {
  const value = base();
  const raw = JSON.stringify(value).replace('"policy_epoch":0', '"policy_epoch":18446744073709551615');
  const definition = decode(raw);
  assert.equal(definition.source.policy_epoch, 18446744073709551615n);
  const again = decodeWorkflowDefinition(encodeWorkflowDefinition(definition));
  assert.deepEqual(again, definition);
  assert.equal(
    Buffer.from(encodeWorkflowDefinition(again)).toString(),
    Buffer.from(encodeWorkflowDefinition(definition)).toString(),
  );
});

test('unknown fields are refused at every depth', () => {
  refusal({ ...base(), extra: 1 }, 'SCHEMA_UNKNOWN_FIELD', /\/extra/);
  const nested = base();
  nested.steps[0].action.expectations[0].mode = 'x';
  refusal(nested, 'SCHEMA_UNKNOWN_FIELD', /expectations\/0\/mode/);
  const inSource = base();
  inSource.source.branch = 'main';
  refusal(inSource, 'SCHEMA_UNKNOWN_FIELD', /source\/branch/);
});

test('version other than 1, duplicate keys, a BOM and a fraction are refused with their own codes', () => {
  refusal({ ...base(), version: 2 }, 'SCHEMA_VERSION_UNSUPPORTED');
  refusal(
    JSON.stringify(base()).replace('"name":"verify-native-source"', '"name":"a","name":"b"'),
    'JSON_DUPLICATE_KEY',
  );
  assert.throws(
    () =>
      decodeWorkflowDefinition(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(base()))])),
    { code: 'JSON_BOM' },
  );
  refusal(JSON.stringify(base()).replace('"policy_epoch":0', '"policy_epoch":1.5'), 'JSON_NUMBER_INVALID');
});

test('the definition size is checked before parsing: at the limit it parses, one byte past it does not', () => {
  const text = JSON.stringify(base());
  const atLimit = text + ' '.repeat(WORKFLOW_LIMITS.maxDefinitionBytes - Buffer.byteLength(text));
  assert.equal(Buffer.byteLength(atLimit), WORKFLOW_LIMITS.maxDefinitionBytes);
  decode(atLimit);
  assert.throws(() => decode(`${atLimit} `), { code: 'INPUT_TOO_LARGE' });
});

test('1 to 32 steps: 32 accepted, 33 and 0 refused', () => {
  compileStructure(decode({ ...base(), steps: steps(32) }));
  refusal({ ...base(), steps: steps(33) }, 'SCHEMA_BOUND', /\/steps/);
  refusal({ ...base(), steps: [] }, 'SCHEMA_BOUND', /\/steps/);
});

test('at most 32 needs per step: 32 accepted, 33 refused', () => {
  const ok = steps(32);
  (ok[31] as Loose).needs = ok.slice(0, 31).map((s) => s.id);
  compileStructure(decode({ ...base(), steps: ok }));
  const many = steps(32);
  (many[31] as Loose).needs = [...many.slice(0, 31).map((s) => s.id), 's0', 's1'];
  refusal({ ...base(), steps: many }, 'SCHEMA_BOUND', /needs/);
});

test('1 to 32 expectations: 32 accepted, 33 and 0 refused', () => {
  const make = (n: number): Loose => {
    const value = base();
    value.steps[0].action.expectations = Array.from({ length: n }, (_, i) => ({ path: `p/${i}`, sha256: HEX64 }));
    return value;
  };
  compileStructure(decode(make(32)));
  refusal(make(33), 'SCHEMA_BOUND', /expectations/);
  refusal(make(0), 'SCHEMA_BOUND', /expectations/);
});

test('63 explicit resources accepted, 64 refused (64 package entries with SKILL.md)', () => {
  const make = (n: number): Loose => {
    const value = base();
    value.skill.resources = Array.from({ length: n }, (_, i) => `skills/native-workflow/r${i}.md`);
    return value;
  };
  assert.equal(compileStructure(decode(make(63))).layout.paths.length, 64);
  refusal(make(64), 'SCHEMA_BOUND', /resources/);
});

test('package paths: 512 bytes accepted, 513 refused', () => {
  const dir = 'skills/native-workflow/';
  const make = (length: number): Loose => {
    const value = base();
    value.skill.resources = [`${dir}${'x'.repeat(length - dir.length)}`];
    return value;
  };
  compileStructure(decode(make(512)));
  refusal(make(513), 'SCHEMA_BOUND');
});

test('identifiers, digests and the action kind are checked', () => {
  refusal({ ...base(), name: 'has space' }, 'ID_INVALID', /\/name/);
  const digest = base();
  digest.steps[0].action.expectations[0].sha256 = 'A'.repeat(64);
  refusal(digest, 'ID_INVALID', /sha256/);
  const repo = base();
  repo.source.repository = 'xyz';
  refusal(repo, 'ID_INVALID', /repository/);
  const kind = base();
  kind.steps[0].action = { kind: 'shell', script: 'rm -rf /' };
  refusal(kind, 'SCHEMA_TYPE', /action\/kind/);
  const missing = base();
  missing.steps[0].action = {
    kind: 'command',
    change: { repository: '0123456789abcdef0123456789abcdef', id: 'c' },
    change_version: 1,
    context_digest: HEX64,
  };
  refusal(missing, 'SCHEMA_MISSING_FIELD', /action\/runner/);
  const capability = base();
  capability.steps[0].action = { kind: 'require_capability', capability: 'network', reason: 'x' };
  refusal(capability, 'SCHEMA_UNKNOWN_FIELD', /action\/reason/);
});

test('paths must be canonical relative paths', () => {
  for (const path of ['/etc/passwd', '../x', 'a//b', 'a/./b', 'a\\b', 'c:x', 'tab\there']) {
    const value = base();
    value.steps[0].action.expectations[0].path = path;
    refusal(value, 'PATH_INVALID');
  }
});
