/**
 * The clients' schemas compiled into the code are exactly the copies kept under
 * docs/schemas/external/ (sources in its README), and those copies are themselves valid
 * draft-07 schemas.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { Ajv } from 'ajv';

import {
  CLAUDE_SETTINGS_HOOKS_SCHEMA,
  CODEX_HOOKS_CONFIG_SCHEMA,
} from '../../src/agent-state/hook-settings-schemas.js';
import { CODEX_STOP_INPUT_SCHEMA, CODEX_STOP_OUTPUT_SCHEMA } from '../../src/hooks/stop/codex-schemas.js';
import { REPO_ROOT } from '../helpers/cli.js';

const CASES: [string, object][] = [
  ['claude-code/settings.hooks.schema.json', CLAUDE_SETTINGS_HOOKS_SCHEMA],
  ['codex-hooks/hooks.config.schema.json', CODEX_HOOKS_CONFIG_SCHEMA],
  ['codex-hooks/stop.command.input.schema.json', CODEX_STOP_INPUT_SCHEMA],
  ['codex-hooks/stop.command.output.schema.json', CODEX_STOP_OUTPUT_SCHEMA],
];

for (const [file, compiled] of CASES) {
  test(`${file}: the compiled copy is the file, and it is a valid schema`, () => {
    const onDisk = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'schemas', 'external', file), 'utf8')) as object;
    assert.deepEqual(compiled, onDisk);
    const ajv = new Ajv({ strict: false, allowUnionTypes: true });
    assert.ok(ajv.validateSchema(onDisk), JSON.stringify(ajv.errors));
  });
}
