/**
 * Over 400 lines: one decoder pipeline (ajv setup, keyword extensions, error mapping) that only works whole.
 *
 * Typed decoders: the strict JSON parser followed by ajv (strict mode) over one JSON Schema
 * (docs/wire.md "Strict JSON decoding"). The decoder owns the rules JSON Schema cannot state on its
 * own: exact u64 integers (`u64: true`, normalised to bigint), UTF-8 byte bounds
 * (`maxUtf8Bytes`), identifier fields (`idKind`), and the version check that runs before full
 * validation. Every ajv failure maps to one stable code; docs/strict-json.md lists the mapping.
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, Options, SchemaObject, ValidateFunction } from 'ajv';

import { AgentscmError, type ErrorCode } from '../errors.js';
import { isJsonObject, type JsonValue } from './json-value.js';
import { PRECOMPILED } from './precompiled-schemas.js';
import { validateMaxUtf8Bytes, validateU64 } from './schema-keywords.js';
import { DEFAULT_MAX_DEPTH, escapePointerToken, parseStrictJson } from './strict-json.js';

/** Identifier kinds an `idKind` annotation may name; a pattern failure there is ID_INVALID. */
export const ID_KINDS = ['id', 'repository', 'digest', 'signature'] as const;
export type IdKind = (typeof ID_KINDS)[number];

export interface DecoderOptions {
  /** Top-level field checked before full validation (missing → SCHEMA_MISSING_FIELD). */
  readonly versionField?: string;
  /** Values of versionField this build accepts (anything else → SCHEMA_VERSION_UNSUPPORTED). */
  readonly supportedVersions?: readonly (number | bigint)[];
  /** Nesting limit passed to the parser (default 64). */
  readonly maxDepth?: number;
}

export interface Decoder<T> {
  /** Stable schema id; docs/schemas/<id>.schema.json is its published form. */
  readonly id: string;
  /** The JSON Schema as written (custom keywords included). */
  readonly schema: SchemaObject;
  readonly options: DecoderOptions;
  /** Size check, strict parse, version check, schema validation; u64 fields come out as bigint. */
  decode(bytes: Uint8Array, maxBytes: number): T;
  /** Version check and schema validation of an already parsed value; the input is not modified. */
  validate(value: JsonValue): T;
  /**
   * Compile the schema now (it is otherwise compiled on first use, so that a command pays only
   * for the schemas it needs); throws when the schema does not compile under ajv strict mode.
   */
  compile(): void;
}

/**
 * Decoder ids name the published file docs/schemas/<id>.schema.json, so `/` may group them
 * into folders ("agent-task/claim-request"); no segment starts with a dot.
 */
const DECODER_ID = /^(?=.{1,128}$)[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

const U64_DECIMAL = { type: 'string', pattern: '^(0|[1-9][0-9]{0,19})$' };

/**
 * `validateSchema` checks every schema against the draft-07 meta-schema and the custom keyword
 * meta-schemas before compiling it. Building those meta-schema validators is most of the cost
 * of a new Ajv instance (about 70 ms, paid by every command that decodes input), and our schemas
 * are constants of this code base: the run-time instance skips it, and the registry test checks
 * every registered schema with a validating instance (metaSchemaProblems). Strict mode (unknown
 * keywords, types) still applies when a schema compiles.
 */
function createAjv(validateSchema: boolean, code: Options['code'] = {}): Ajv {
  // ajv compiles a keyword's meta-schema when the keyword is added, whatever validateSchema says.
  const keywordMetaSchema = (metaSchema: SchemaObject): { metaSchema?: SchemaObject } =>
    validateSchema ? { metaSchema } : {};
  // Loaded on first use, not at import: the built CLI validates with the validators compiled when
  // it was built (PRECOMPILED) and loads ajv only for a schema outside the registry.
  const { Ajv } = loadAjv();
  const ajv = new Ajv({
    validateSchema,
    strict: true,
    allErrors: false,
    allowUnionTypes: true,
    verbose: true,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    validateFormats: false,
    // ajv's optimizer only shortens the generated code (unused names, inlined constants); the
    // checks are the same. Skipping it makes a cold compile about a third cheaper, which is
    // what a short command pays for each schema it decodes (docs/qualification.md "Performance").
    code: { optimize: false, ...code },
  });
  ajv.addKeyword({
    keyword: 'u64',
    modifying: true,
    errors: true,
    validate: validateU64,
    ...keywordMetaSchema({
      anyOf: [
        { type: 'boolean' },
        { type: 'object', properties: { minimum: U64_DECIMAL, maximum: U64_DECIMAL }, additionalProperties: false },
      ],
    }),
  });
  ajv.addKeyword({
    keyword: 'maxUtf8Bytes',
    type: 'string',
    schemaType: 'number',
    errors: true,
    validate: validateMaxUtf8Bytes,
    ...keywordMetaSchema({ type: 'integer', minimum: 0 }),
  });
  // Annotation only: it tells the error mapper that a pattern failure is an identifier error.
  ajv.addKeyword({ keyword: 'idKind', schemaType: 'string', ...keywordMetaSchema({ enum: [...ID_KINDS] }) });
  return ajv;
}

function loadAjv(): { Ajv: typeof Ajv } {
  return createRequire(import.meta.url)('ajv') as { Ajv: typeof Ajv };
}

/**
 * The instance bin/precompile-schemas.ts compiles the registered schemas with when the CLI is
 * built: the run-time options, with the generated code kept (and ajv's optimizer on: the same
 * checks in shorter code).
 */
export function createStandaloneAjv(): Ajv {
  return createAjv(false, { source: true, optimize: true });
}

/** Every decoder defined in this process, by id (see schema-registry.ts for the published set). */
const DEFINED = new Map<string, Decoder<unknown>>();

/** Decoders defined so far in this process, sorted by id (docs/wire.md: schemas kept in one place). */
export function definedDecoders(): readonly Decoder<unknown>[] {
  return [...DEFINED.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

let sharedAjv: Ajv | undefined;
function ajvInstance(): Ajv {
  sharedAjv ??= createAjv(false);
  return sharedAjv;
}

let validatingAjv: Ajv | undefined;
/**
 * What is wrong with a schema against the draft-07 meta-schema and the meta-schemas of the
 * custom keywords (`u64`, `maxUtf8Bytes`, `idKind`), or null. The run-time instance does not
 * check this (see createAjv); tests run it over every registered schema.
 */
export function metaSchemaProblems(schema: object): string | null {
  validatingAjv ??= createAjv(true);
  if (validatingAjv.validateSchema(schema) !== true)
    return validatingAjv.errorsText(validatingAjv.errors, { dataVar: 'schema' });
  // Custom keyword values are checked against their meta-schemas when the schema compiles.
  try {
    validatingAjv.compile(schema as SchemaObject);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

type SchemaNode = Record<string, unknown>;

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typesOf(node: SchemaNode): string[] {
  const t = node.type;
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  return [];
}

/**
 * A pattern bounds a string's length on its own when it is anchored at both ends and has no
 * unbounded quantifier (`*`, `+`, `{n,}`), e.g. `^[0-9a-f]{64}$`. Conservative: an escaped
 * `\\+` also counts as unbounded, and such a schema then needs maxLength.
 */
function isFinitePattern(pattern: unknown): boolean {
  return (
    typeof pattern === 'string' && pattern.startsWith('^') && pattern.endsWith('$') && !/[*+]|\{\d*,\}/.test(pattern)
  );
}

/**
 * Definition-time rules (a failure is a programming error, thrown as a plain Error): every
 * object schema closes itself with `additionalProperties: false`, every array has maxItems,
 * every string has maxLength / maxUtf8Bytes / enum / const / a finite pattern, every map (patternProperties) has
 * maxProperties, and `u64` never sits at the top level.
 */
function checkSchemaRules(id: string, root: SchemaObject): void {
  const problems: string[] = [];
  const visit = (node: unknown, at: string): void => {
    if (!isNode(node)) return;
    const types = typesOf(node);
    const isObject =
      types.includes('object') || 'properties' in node || 'patternProperties' in node || 'required' in node;
    if (isObject && node.additionalProperties !== false)
      problems.push(`${at || '/'}: object schema without "additionalProperties": false`);
    if (isObject && 'patternProperties' in node && typeof node.maxProperties !== 'number')
      problems.push(`${at || '/'}: map schema (patternProperties) without maxProperties`);
    if ((types.includes('array') || 'items' in node) && typeof node.maxItems !== 'number')
      problems.push(`${at || '/'}: array schema without maxItems`);
    if (
      types.includes('string') &&
      !(
        'maxLength' in node ||
        'maxUtf8Bytes' in node ||
        'enum' in node ||
        'const' in node ||
        isFinitePattern(node.pattern)
      )
    ) {
      problems.push(`${at || '/'}: string schema without maxLength, maxUtf8Bytes or an anchored finite pattern`);
    }
    for (const key of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']) {
      const map = node[key];
      if (isNode(map))
        for (const [name, child] of Object.entries(map)) visit(child, `${at}/${key}/${escapePointerToken(name)}`);
    }
    for (const key of [
      'items',
      'additionalItems',
      'contains',
      'not',
      'if',
      'then',
      'else',
      'propertyNames',
      'additionalProperties',
      'unevaluatedItems',
      'unevaluatedProperties',
    ]) {
      const child = node[key];
      if (Array.isArray(child)) child.forEach((c, i) => visit(c, `${at}/${key}/${i}`));
      else visit(child, `${at}/${key}`);
    }
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
      const list = node[key];
      if (Array.isArray(list)) list.forEach((c, i) => visit(c, `${at}/${key}/${i}`));
    }
  };
  visit(root, '');
  if ('u64' in root) problems.push('/: u64 cannot be the top-level value (it is normalised in its parent)');
  if (problems.length > 0)
    throw new Error(
      `schema ${id} breaks the schema rules of src/contracts/json/schema.ts:\n  ${problems.join('\n  ')}`,
    );
}

const BOUND_KEYWORDS = new Set([
  'maxItems',
  'minItems',
  'maxLength',
  'minLength',
  'maxProperties',
  'minProperties',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'maxUtf8Bytes',
]);

interface MappedError {
  readonly code: ErrorCode;
  readonly pointer: string;
  readonly text: string;
}

function mapAjvError(error: ErrorObject): MappedError {
  const base = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      return {
        code: 'SCHEMA_UNKNOWN_FIELD',
        pointer: `${base}/${escapePointerToken(field)}`,
        text: `unknown field ${JSON.stringify(field)}`,
      };
    }
    case 'required': {
      const field = String(params.missingProperty);
      return {
        code: 'SCHEMA_MISSING_FIELD',
        pointer: `${base}/${escapePointerToken(field)}`,
        text: `missing required field ${JSON.stringify(field)}`,
      };
    }
    case 'u64':
      return {
        code: params.reason === 'range' ? 'SCHEMA_BOUND' : 'SCHEMA_TYPE',
        pointer: base,
        text: error.message ?? 'must be a u64',
      };
    case 'pattern': {
      const parent: unknown = error.parentSchema;
      const kind = isNode(parent) ? parent.idKind : undefined;
      const text = `${error.message ?? 'does not match its pattern'}`;
      return {
        code: typeof kind === 'string' ? 'ID_INVALID' : 'SCHEMA_TYPE',
        pointer: base,
        text: typeof kind === 'string' ? `is not a valid ${kind} identifier (${text})` : text,
      };
    }
    case 'enum':
      return { code: 'SCHEMA_TYPE', pointer: base, text: `must be one of ${JSON.stringify(params.allowedValues)}` };
    case 'const':
      return { code: 'SCHEMA_TYPE', pointer: base, text: `must be ${JSON.stringify(params.allowedValue)}` };
    default:
      return {
        code: BOUND_KEYWORDS.has(error.keyword) ? 'SCHEMA_BOUND' : 'SCHEMA_TYPE',
        pointer: base,
        text: error.message ?? `fails ${error.keyword}`,
      };
  }
}

function depthOf(pointer: string): number {
  let n = 0;
  for (const c of pointer) if (c === '/') n++;
  return n;
}

function unescapePointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The node at a JSON pointer (ajv's schemaPath without its leading `#`, or an instancePath). */
function nodeAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const token of pointer.split('/').slice(1)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isNode(node)) node = node[unescapePointerToken(token)];
    else return undefined;
  }
  return node;
}

const UNION_SEGMENT = /\/(anyOf|oneOf)\/(\d+)(?=\/|$)/;

/** Where the outermost union of an error's schema path is, and which branch the error is in. */
function outerUnion(
  error: ErrorObject,
  below: string,
): { readonly prefix: string; readonly branch: number } | undefined {
  if (!error.schemaPath.startsWith(below)) return undefined;
  const rest = error.schemaPath.slice(below.length);
  const match = UNION_SEGMENT.exec(rest);
  if (match === null) return undefined;
  return { prefix: below + rest.slice(0, match.index) + `/${match[1] ?? 'anyOf'}`, branch: Number(match[2]) };
}

function admitsConstant(node: unknown, member: string): boolean | undefined {
  if (!isNode(node)) return undefined;
  if ('const' in node) return JSON.stringify(node.const) === member;
  if (Array.isArray(node.enum)) return node.enum.some((e) => JSON.stringify(e) === member);
  return undefined;
}

/**
 * How far a value is from one branch of a union: a tag member (const or enum) whose value is the
 * tag of another branch rules the branch out, since it names the shape the sender meant; any other
 * member the branch does not admit, declare or find counts one.
 */
function branchDistance(branches: readonly unknown[], index: number, value: unknown): number {
  const branch = branches[index];
  if (!isNode(branch)) return Number.MAX_SAFE_INTEGER;
  const types = typesOf(branch);
  const valueType =
    value === null
      ? 'null'
      : Array.isArray(value)
        ? 'array'
        : typeof value === 'bigint' || typeof value === 'number'
          ? 'integer'
          : typeof value;
  if (types.length > 0 && !types.includes(valueType) && !(valueType === 'integer' && types.includes('number')))
    return 1_000_000;
  if (!isNode(value) || !isNode(branch.properties)) return 0;
  const declared = branch.properties;
  let distance = 0;
  for (const [key, child] of Object.entries(declared)) {
    if (!Object.hasOwn(value, key)) continue;
    const member = JSON.stringify(value[key], (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
    if (admitsConstant(child, member) !== false) continue;
    const tagOfAnother = branches.some(
      (other, i) =>
        i !== index &&
        isNode(other) &&
        isNode(other.properties) &&
        admitsConstant(other.properties[key], member) === true,
    );
    distance += tagOfAnother ? 10_000 : 1;
  }
  for (const key of Object.keys(value)) if (!Object.hasOwn(declared, key)) distance += 1;
  const required = Array.isArray(branch.required) ? (branch.required as unknown[]) : [];
  for (const key of required) if (typeof key === 'string' && !Object.hasOwn(value, key)) distance += 1;
  return distance;
}

/**
 * Keep only the errors of the union branch the value is closest to, outermost union first: with
 * anyOf/oneOf ajv reports the first failure of every branch, and the one to report is the
 * failure of the shape the sender meant (the branch whose tag matches, then the one whose members
 * fit best), not whichever branch happens to be listed first.
 */
function errorsOfClosestBranches(
  errors: readonly ErrorObject[],
  schema: unknown,
  value: unknown,
): readonly ErrorObject[] {
  let kept = errors.filter((error) => error.keyword !== 'anyOf' && error.keyword !== 'oneOf');
  const unionErrors = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  let below = '#';
  for (let round = 0; round < 64; round++) {
    const located = kept.map((error) => ({ error, union: outerUnion(error, below) }));
    const first = located.find((entry) => entry.union !== undefined)?.union;
    if (first === undefined) break;
    const branches = new Set(
      located.filter((entry) => entry.union?.prefix === first.prefix).map((entry) => entry.union?.branch),
    );
    const unionError = unionErrors.find((error) => error.schemaPath === first.prefix);
    const list = nodeAt(schema, first.prefix.slice(1));
    let chosen = first.branch;
    if (branches.size > 1 && unionError !== undefined && Array.isArray(list)) {
      const at = nodeAt(value, unionError.instancePath);
      let best = Number.MAX_SAFE_INTEGER;
      for (const branch of branches) {
        if (branch === undefined) continue;
        const distance = branchDistance(list, branch, at);
        if (distance < best) {
          best = distance;
          chosen = branch;
        }
      }
    }
    kept = located
      .filter(
        (entry) => entry.union === undefined || entry.union.prefix !== first.prefix || entry.union.branch === chosen,
      )
      .map((entry) => entry.error);
    below = `${first.prefix}/${chosen}`;
  }
  return kept;
}

/**
 * Pick the error to report: the deepest failure of the closest union branches (see
 * errorsOfClosestBranches), which names what the sender actually got wrong.
 */
function chooseError(errors: readonly ErrorObject[], schema: unknown, value: unknown): MappedError {
  let best: MappedError | undefined;
  for (const error of errorsOfClosestBranches(errors, schema, value)) {
    const mapped = mapAjvError(error);
    if (best === undefined || depthOf(mapped.pointer) > depthOf(best.pointer)) best = mapped;
  }
  if (best !== undefined) return best;
  const first = errors[0];
  return first === undefined ? { code: 'SCHEMA_TYPE', pointer: '', text: 'is invalid' } : mapAjvError(first);
}

const HINTS: Partial<Record<ErrorCode, string>> = {
  SCHEMA_UNKNOWN_FIELD: 'remove the field; unknown fields are refused at every depth',
  SCHEMA_MISSING_FIELD: 'add the field',
  SCHEMA_TYPE: 'fix the value to match the published schema',
  SCHEMA_BOUND: 'keep the value within the bound stated in the published schema',
  ID_INVALID: 'ids are ^[A-Za-z0-9._-]{1,128}$; repository ids 32 and digests 64 lowercase hex',
};

function toVersionBigint(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return undefined;
}

/** A typed decoder for one schema (docs/wire.md "Strict JSON decoding"); defined once at module load. */
export function defineDecoder<T>(id: string, schema: object, options: DecoderOptions = {}): Decoder<T> {
  if (!DECODER_ID.test(id)) throw new Error(`decoder id ${JSON.stringify(id)} must match ${DECODER_ID.source}`);
  const schemaObject = schema as SchemaObject;
  checkSchemaRules(id, schemaObject);
  if (
    options.versionField !== undefined &&
    (options.supportedVersions === undefined || options.supportedVersions.length === 0)
  ) {
    throw new Error(`decoder ${id}: versionField needs a non-empty supportedVersions`);
  }
  // Compiled on first use: ajv compilation is most of the start-up time of a command that
  // would otherwise compile every registered schema at import.
  let compiled: ValidateFunction | undefined;
  const validator = (): ValidateFunction => {
    if (compiled === undefined) {
      try {
        compiled = PRECOMPILED?.get(id) ?? ajvInstance().compile<unknown>(schemaObject);
      } catch (cause) {
        throw new Error(`schema ${id} does not compile under ajv strict mode: ${(cause as Error).message}`, { cause });
      }
    }
    return compiled;
  };
  const supported = (options.supportedVersions ?? []).map((v) => BigInt(v));

  const fail = (code: ErrorCode, pointer: string, text: string, extra: Record<string, unknown> = {}): never => {
    const shown = pointer === '' ? '/' : pointer;
    throw new AgentscmError(code, `${id}: ${shown} ${text}`, {
      hint: HINTS[code],
      details: { schema: id, pointer: shown, ...extra },
    });
  };

  const versionPointer = options.versionField === undefined ? '' : `/${escapePointerToken(options.versionField)}`;
  const checkVersion = (value: JsonValue): void => {
    const field = options.versionField;
    if (field === undefined) return;
    const pointer = versionPointer;
    if (!isJsonObject(value)) fail('SCHEMA_TYPE', '', 'must be an object');
    const object = value as Record<string, JsonValue>;
    if (!Object.hasOwn(object, field))
      fail('SCHEMA_MISSING_FIELD', pointer, `missing required field ${JSON.stringify(field)}`);
    const version = toVersionBigint(object[field]);
    if (version === undefined) fail('SCHEMA_TYPE', pointer, 'must be an unsigned integer version');
    if (!supported.includes(version as bigint)) {
      throw new AgentscmError(
        'SCHEMA_VERSION_UNSUPPORTED',
        `${id}: ${pointer} is ${String(version)}; this build supports ${supported.join(', ')}`,
        {
          hint: `send ${field} ${supported.join(' or ')}`,
          details: { schema: id, pointer, supported: supported.map(String) },
        },
      );
    }
  };

  const run = (value: JsonValue): T => {
    checkVersion(value);
    const validate = validator();
    if (!validate(value)) {
      const mapped = chooseError(validate.errors ?? [], schemaObject, value);
      fail(mapped.code, mapped.pointer, mapped.text);
    }
    return value as T;
  };

  const decoder: Decoder<T> = {
    id,
    schema: schemaObject,
    options,
    decode(bytes: Uint8Array, maxBytes: number): T {
      return run(parseStrictJson(bytes, { maxBytes, maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH }));
    },
    validate(value: JsonValue): T {
      // Validation normalises u64 numbers to bigint in place; work on a copy of the caller's value.
      return run(structuredClone(value));
    },
    compile(): void {
      validator();
    },
  };
  const previous = DEFINED.get(id);
  // One id names one published file: two different schemas under one id is a programming error.
  if (previous !== undefined && JSON.stringify(previous.schema) !== JSON.stringify(schemaObject)) {
    throw new Error(`decoder id ${id} is already defined with a different schema`);
  }
  DEFINED.set(id, decoder);
  return decoder;
}
