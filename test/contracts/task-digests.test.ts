/**
 * Domain-separated identities (docs/wire.md "Canonical encoding and digests": domains): every leaf
 * of the decoded value — enumerated from the decoded object, so a field the digest forgot is caught
 * — changes the digest when it changes; each kind uses its own domain and mutations one per action.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { observationDigest } from '../../src/contracts/collector/observation.js';
import { digestCanonical, domainDigest, DOMAINS, mutationDomain } from '../../src/contracts/digest.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { attemptDigest, attemptToJson, workflowTaskAttemptDecoder } from '../../src/contracts/task/attempt.js';
import {
  claimRequestDigest,
  claimRequestToJson,
  mutationRequestDigest,
  mutationRequestToJson,
  taskClaimRequestDecoder,
  taskMutationRequestDecoder,
  type TaskMutationRequest,
} from '../../src/contracts/task/requests.js';
import {
  assertionToJson,
  resultRequestDigest,
  taskResultAssertionDecoder,
  type TaskResultAssertion,
} from '../../src/contracts/task/result.js';
import { taskDigest, taskToJson, workflowTaskDecoder } from '../../src/contracts/task/task.js';
import {
  PASSING_ROWS,
  sampleAssertion,
  sampleAttempt,
  sampleClaim,
  sampleMutation,
  sampleTask,
} from '../support/task-contracts.js';

type Path = (string | number)[];

/** Every leaf path of a decoded value (objects and arrays walked; empty arrays count as leaves). */
function leaves(value: unknown, path: Path = []): Path[] {
  if (Array.isArray(value)) return value.length === 0 ? [path] : value.flatMap((item, i) => leaves(item, [...path, i]));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [path];
}

function changed(value: unknown): unknown {
  if (typeof value === 'bigint') return value + 1n;
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'string') return value.endsWith('0') ? `${value.slice(0, -1)}1` : `${value.slice(0, -1)}0`;
  if (value === null)
    return { registration_id: 'r', executor_id: 'e', registration_epoch: 1n, verification_key_id: '0'.repeat(64) };
  if (Array.isArray(value)) return ['extra'];
  throw new Error(`cannot change a value of type ${typeof value}`);
}

function withChange<T>(value: T, path: Path): T {
  const copy = structuredClone(value) as unknown as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (last === undefined) throw new Error('empty path');
  node[last] = changed(node[last]);
  return copy as unknown as T;
}

function checkSensitivity<T>(
  name: string,
  value: T,
  digest: (v: T) => string,
  skip: (path: Path) => boolean = () => false,
): number {
  const base = digest(value);
  let count = 0;
  for (const path of leaves(value)) {
    if (skip(path)) continue;
    assert.notEqual(
      digest(withChange(value, path)),
      base,
      `${name}: changing ${path.join('.')} must change the digest`,
    );
    count++;
  }
  return count;
}

const task = workflowTaskDecoder.validate(taskToJson(sampleTask()));
const claim = taskClaimRequestDecoder.validate(claimRequestToJson(sampleClaim(task)));
const attempt = workflowTaskAttemptDecoder.validate(attemptToJson(sampleAttempt(task, claim)));
const mutation = taskMutationRequestDecoder.validate(
  mutationRequestToJson({ ...sampleMutation(task, attempt, 'cancel'), reason: 'stop' }),
);
const assertion = taskResultAssertionDecoder.validate(assertionToJson(sampleAssertion(task, attempt, PASSING_ROWS)));

test('task digest: every bound input of the task, its subject and its entrypoint changes it', () => {
  const count = checkSensitivity('task', task, taskDigest);
  // 13 subject fields + task fields + entrypoint fields + 3 criteria × 4 + 1 reference × 3
  assert.ok(count >= 13 + 5 + 8 + 12 + 3, `only ${count} leaves were checked`);
});

test('attempt, claim and mutation digests: every field changes them', () => {
  assert.ok(checkSensitivity('attempt', attempt, attemptDigest) >= 13);
  assert.ok(checkSensitivity('claim', claim, claimRequestDigest) >= 11);
  // The action selects the domain as well as a field; changing it to another valid action is checked below.
  assert.ok(checkSensitivity('mutation', mutation, mutationRequestDigest, (p) => p[0] === 'action') >= 14);
});

test('result request digest covers every field, the observation digest every field but provenance', () => {
  const signedLike: TaskResultAssertion = {
    ...assertion,
    executor_provenance: { observation_digest: '1'.repeat(64), signature: '2'.repeat(128) },
  };
  assert.ok(checkSensitivity('result', signedLike, resultRequestDigest) >= 20);
  checkSensitivity('observation', signedLike, observationDigest, (p) => p[0] === 'executor_provenance');
  assert.equal(observationDigest(signedLike), observationDigest(assertion));
});

test('mutation digests are separated by action: same fields, different domain', () => {
  const actions: TaskMutationRequest['action'][] = ['heartbeat', 'cancel', 'reconcile'];
  const digests = actions.map((action) => mutationRequestDigest({ ...mutation, action }));
  assert.equal(new Set(digests).size, 3);
  for (const action of actions) {
    const request = { ...mutation, action };
    assert.equal(
      mutationRequestDigest(request),
      digestCanonical(mutationDomain(action), mutationRequestToJson(request)),
    );
  }
  assert.equal(claimRequestDigest(claim), digestCanonical(mutationDomain('claim'), claimRequestToJson(claim)));
});

test('each kind hashes under its own domain (the same bytes give different identities)', () => {
  const bytes = encodeCanonical(taskToJson(task));
  assert.equal(taskDigest(task), domainDigest(DOMAINS.task, bytes));
  const domains = [
    DOMAINS.task,
    DOMAINS.attempt,
    DOMAINS.result,
    DOMAINS.observation,
    mutationDomain('claim'),
    mutationDomain('heartbeat'),
  ];
  assert.equal(new Set(domains.map((d) => domainDigest(d, bytes))).size, domains.length);
  assert.equal(attemptDigest(attempt), domainDigest(DOMAINS.attempt, encodeCanonical(attemptToJson(attempt))));
  assert.equal(
    resultRequestDigest(assertion),
    domainDigest(DOMAINS.result, encodeCanonical(assertionToJson(assertion))),
  );
});

test('field order of the input does not matter: digests use the declared order', () => {
  const json = taskToJson(task);
  const reversed = Object.fromEntries(Object.entries(json).reverse());
  const decoded = workflowTaskDecoder.decode(encodeCanonical(reversed));
  assert.equal(taskDigest(decoded), taskDigest(task));
});
