/**
 * docs/doctor.md documents every finding code of DOCTOR_CODES with the status it is always
 * reported with (and no code that does not exist); the Node.js range check reads the package's
 * engines range as npm does for the forms the package uses.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { checkNode, satisfiesNodeRange } from '../../src/doctor/doctor.js';
import { DOCTOR_CODES } from '../../src/doctor/finding.js';
import { REPO_ROOT } from '../helpers/cli.js';

test('docs/doctor.md has one row per finding code, with its status', () => {
  const rows = new Map<string, string>();
  for (const line of readFileSync(join(REPO_ROOT, 'docs', 'doctor.md'), 'utf8').split('\n')) {
    const row = /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|\s*(pass|warn|fail|skip)\s*\|/.exec(line);
    if (row?.[1] === undefined || row[2] === undefined) continue;
    assert.equal(rows.has(row[1]), false, `${row[1]} has two rows`);
    rows.set(row[1], row[2]);
  }
  assert.deepEqual(Object.fromEntries([...rows].sort()), Object.fromEntries(Object.entries(DOCTOR_CODES).sort()));
});

// The package's own range (package.json engines.node) and the comparator forms it may use.
const RANGE = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).engines.node as string;
const CASES: [string, string, boolean][] = [
  ['20.18.1', RANGE, true],
  ['20.20.2', RANGE, true],
  ['20.18.0', RANGE, false],
  ['18.19.0', RANGE, false],
  ['21.7.3', RANGE, false],
  ['22.0.0', RANGE, true],
  ['24.1.0', RANGE, true],
  ['22.3.0-nightly2024', RANGE, true],
  ['20.0.0', '=20.0.0', true],
  ['19.9.9', '<20 || >22', true],
  ['22.0.1', '>22', true],
  ['22.0.0', '<=22.0.0', true],
  ['22.0.0', 'not-a-range', false],
];

test('the Node.js range check: the package range and each comparator form', () => {
  for (const [version, range, expected] of CASES)
    assert.equal(satisfiesNodeRange(version, range), expected, `${version} in ${range}`);
});

test('a Node.js outside the range is NODE_UNSUPPORTED with the install fix', () => {
  const unsupported = checkNode('18.19.0', RANGE);
  assert.deepEqual(
    { status: unsupported.status, code: unsupported.code },
    { status: 'fail', code: 'NODE_UNSUPPORTED' },
  );
  assert.equal(
    unsupported.fix,
    `install a Node.js release in ${RANGE} (e.g. the current Node.js 22 LTS) and run agentscm with it`,
  );
  assert.equal(checkNode('22.11.0', RANGE).code, 'OK');
});
