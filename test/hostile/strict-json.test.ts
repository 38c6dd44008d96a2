/**
 * Reproducers for strict decoding (docs/strict-json.md "Schema errors"): a required field that
 * is absent is SCHEMA_MISSING_FIELD at the pointer of that field, at every depth and inside every
 * one-of-several shape — never SCHEMA_TYPE. Each valid document is taken apart one member at a
 * time; a removal is either accepted (an optional field) or refused as that missing field.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { signObservation } from '../../src/contracts/collector/observation.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import { isJsonObject, type JsonValue } from '../../src/contracts/json/json-value.js';
import { escapePointerToken, parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { assertionToJson, taskResultAssertionDecoder } from '../../src/contracts/task/result.js';
import { validateWorkflowDefinition, WORKFLOW_LIMITS } from '../../src/contracts/workflow-definition.js';
import { jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

/** Every document with one object member removed, with the pointer of that member. */
function* withOneMemberRemoved(
  value: JsonValue,
  pointer = '',
): Generator<{ pointer: string; document: (root: JsonValue) => JsonValue }> {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      for (const inner of withOneMemberRemoved(item, `${pointer}/${i}`)) yield inner;
    }
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      const at = `${pointer}/${escapePointerToken(key)}`;
      yield { pointer: at, document: (root) => removeAt(root, at) };
      for (const inner of withOneMemberRemoved(value[key] as JsonValue, at)) yield inner;
    }
  }
}

function removeAt(root: JsonValue, pointer: string): JsonValue {
  const copy = structuredClone(root);
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = tokens.pop() as string;
  let node: JsonValue = copy;
  for (const token of tokens)
    node = (Array.isArray(node) ? node[Number(token)] : (node as Record<string, JsonValue>)[token]) as JsonValue;
  delete (node as Record<string, JsonValue>)[last];
  return copy;
}

function outcomeOf(fn: () => unknown): { code: string; pointer?: unknown } {
  try {
    fn();
    return { code: 'ok' };
  } catch (error) {
    if (!(error instanceof AgentscmError)) throw error;
    return { code: error.code, pointer: error.details?.pointer };
  }
}

function checkEveryRemoval(name: string, valid: JsonValue, validate: (value: JsonValue) => unknown): number {
  assert.equal(outcomeOf(() => validate(valid)).code, 'ok', `${name} is valid as it is`);
  let refused = 0;
  for (const { pointer, document } of withOneMemberRemoved(valid)) {
    const outcome = outcomeOf(() => validate(document(valid)));
    if (outcome.code === 'ok') continue;
    refused += 1;
    assert.deepEqual(outcome, { code: 'SCHEMA_MISSING_FIELD', pointer }, `${name} without ${pointer}`);
  }
  return refused;
}

const readJson = (...path: string[]): JsonValue =>
  parseStrictJson(readFileSync(join(REPO_ROOT, ...path)), { maxBytes: 1 << 20 });

test('every required member of a workflow definition, when absent, is SCHEMA_MISSING_FIELD at its pointer (the action of a step included)', () => {
  for (const file of ['verify-native-workflow.json', 'verify-with-omission.json']) {
    const refused = checkEveryRemoval(file, readJson('examples', 'workflows', file), (v) =>
      validateWorkflowDefinition(v),
    );
    assert.ok(refused > 10, `${file}: only ${refused} required members`);
  }
});

test('every required member of a result assertion, signed or not, when absent, is SCHEMA_MISSING_FIELD at its pointer', () => {
  const golden = readJson('test', 'vectors', 'observation-golden-v1.json');
  assert.ok(isJsonObject(golden));
  const unsigned = taskResultAssertionDecoder.validate(golden.assertion_unsigned ?? null);
  // Signed, executor_provenance is the object branch of "null or object".
  const signed = signObservation(unsigned, Buffer.from(golden.test_private_key_seed_hex as string, 'hex'));
  assert.ok(signed.executor_provenance !== null);
  for (const [name, assertion] of [
    ['unsigned', unsigned],
    ['signed', signed],
  ] as const) {
    assert.ok(checkEveryRemoval(name, assertionToJson(assertion), (v) => taskResultAssertionDecoder.validate(v)) > 10);
  }
});

test('skill-workflow plan reports a step without an action as the missing field, exit 2', async (t) => {
  const dir = tempDir(t);
  const definition = readJson('examples', 'workflows', 'verify-native-workflow.json');
  const file = join(dir, 'no-action.json');
  writeFileSync(file, JSON.stringify(removeAt(definition, '/steps/0/action')));
  assert.ok(Buffer.byteLength(readFileSync(file)) < WORKFLOW_LIMITS.maxDefinitionBytes);
  const result = await runCli(['--data-dir', join(dir, 'data'), 'skill-workflow', 'plan', file, '--json']);
  assert.equal(result.code, 2, result.stderr);
  const error = jsonOf<{ error: { code: string; message: string; details: { pointer: string } } }>(result).error;
  assert.equal(error.code, 'SCHEMA_MISSING_FIELD');
  assert.equal(error.details.pointer, '/steps/0/action');
  assert.match(error.message, /\/steps\/0\/action missing required field "action"/);
});
