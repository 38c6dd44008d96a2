/**
 * Validation against the agent clients' own JSON Schemas (docs/schemas/external/). Those are
 * not agentscm's schemas and do not follow its strict-mode conventions (annotations such as
 * `default` beside `$ref`, untyped `if` branches), so they get their own Ajv instance, non-strict,
 * created on first use; agentscm's own contracts keep the strict one of src/contracts/json/schema.ts.
 * ajv itself is loaded then too, not at import: the Claude Code Stop hook, which imports this module
 * for Codex's schemas, never pays for it.
 */
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';

import type { JsonValue } from '../contracts/json/json-value.js';

let ajv: Ajv | null = null;
const compiled = new Map<object, ValidateFunction>();

/**
 * Check a value against an external schema: null when it conforms, else the first problem as
 * `PATH: MESSAGE`. u64 numbers of the strict parser (bigint) are compared as numbers.
 */
export function externalSchemaProblem(schema: object, value: JsonValue): string | null {
  if (ajv === null) {
    const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as { Ajv: typeof Ajv };
    ajv = new AjvClass({ strict: false, allErrors: false, allowUnionTypes: true, validateFormats: false });
  }
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(toPlain(value))) return null;
  const first = validate.errors?.[0];
  return first === undefined
    ? 'does not conform'
    : `${first.instancePath === '' ? '(root)' : first.instancePath}: ${first.message ?? 'does not conform'}`;
}

function toPlain(value: JsonValue): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(toPlain);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlain(v)]));
  return value;
}
