/**
 * Walk a valid document beside its published JSON Schema: every value of the document with the
 * schema node that governs it (for a union, the branch the valid value belongs to). The
 * campaign's oracle predicts error codes from these nodes, not from the decoder's own code.
 */
import type { JsonValue } from '../../../src/contracts/json/json-value.js';
import type { Path } from './json-text.js';

export type SchemaNode = Record<string, unknown>;
export type JsonType = 'null' | 'boolean' | 'integer' | 'string' | 'array' | 'object';

export interface Location {
  readonly path: Path;
  readonly value: JsonValue;
  /** The schema node as written at this place (a union stays a union). */
  readonly declared: SchemaNode;
  /** The node that governs the valid value (the matching branch of a union). */
  readonly resolved: SchemaNode;
  /** The object schema this value is a member of, when it is an object member. */
  readonly memberOf: SchemaNode | undefined;
  /** How many unions (anyOf/oneOf) enclose this place, itself included. */
  readonly unions: number;
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function jsonTypeOf(value: JsonValue): JsonType {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number' || typeof value === 'bigint') return 'integer';
  if (typeof value === 'string') return 'string';
  return Array.isArray(value) ? 'array' : 'object';
}

/** The JSON types a schema node admits (undefined: it says nothing about types). */
export function allowedTypes(node: SchemaNode): Set<JsonType> | undefined {
  const union = node.anyOf ?? node.oneOf;
  if (Array.isArray(union)) {
    const out = new Set<JsonType>();
    for (const branch of union) {
      const types = isNode(branch) ? allowedTypes(branch) : undefined;
      if (types === undefined) return undefined;
      for (const t of types) out.add(t);
    }
    return out;
  }
  if (typeof node.type === 'string' || Array.isArray(node.type)) {
    const list = (Array.isArray(node.type) ? node.type : [node.type]) as string[];
    return new Set(list.map((t) => (t === 'number' ? 'integer' : (t as JsonType))));
  }
  if ('const' in node) return new Set([jsonTypeOf(node.const as JsonValue)]);
  if (Array.isArray(node.enum)) return new Set((node.enum as JsonValue[]).map(jsonTypeOf));
  if ('u64' in node) return new Set(['integer']);
  if ('properties' in node || 'patternProperties' in node) return new Set(['object']);
  if ('items' in node) return new Set(['array']);
  return undefined;
}

/** Whether a branch is the one a valid value belongs to: its type fits and its constant members match. */
function branchFits(branch: SchemaNode, value: JsonValue): boolean {
  const types = allowedTypes(branch);
  if (types !== undefined && !types.has(jsonTypeOf(value))) return false;
  if ('const' in branch && JSON.stringify(branch.const) !== JSON.stringify(value)) return false;
  if (jsonTypeOf(value) === 'object' && isNode(branch.properties)) {
    const object = value as Record<string, JsonValue>;
    for (const [key, child] of Object.entries(branch.properties)) {
      if (
        isNode(child) &&
        'const' in child &&
        Object.hasOwn(object, key) &&
        JSON.stringify(child.const) !== JSON.stringify(object[key])
      )
        return false;
      if (
        isNode(child) &&
        Array.isArray(child.enum) &&
        Object.hasOwn(object, key) &&
        !child.enum.some((e) => JSON.stringify(e) === JSON.stringify(object[key]))
      )
        return false;
    }
    const required = Array.isArray(branch.required) ? (branch.required as string[]) : [];
    if (!required.every((key) => Object.hasOwn(object, key))) return false;
    if (branch.additionalProperties === false && !isNode(branch.patternProperties)) {
      if (!Object.keys(object).every((key) => Object.hasOwn(branch.properties as object, key))) return false;
    }
  }
  return true;
}

/** The branch of a union that a valid value belongs to (the node itself when it is no union). */
export function resolveBranch(node: SchemaNode, value: JsonValue): SchemaNode {
  const union = node.anyOf ?? node.oneOf;
  if (!Array.isArray(union)) return node;
  const branch = union.find((b): b is SchemaNode => isNode(b) && branchFits(b, value));
  if (branch === undefined)
    throw new Error(
      `no branch of ${JSON.stringify(node).slice(0, 200)} fits ${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)).slice(0, 200)}`,
    );
  return resolveBranch(branch, value);
}

/** The schema node of a member or item of a resolved container node. */
export function childSchema(node: SchemaNode, key: string | number): SchemaNode | undefined {
  if (typeof key === 'number') return isNode(node.items) ? node.items : undefined;
  if (isNode(node.properties) && Object.hasOwn(node.properties, key)) {
    const child = node.properties[key];
    return isNode(child) ? child : undefined;
  }
  if (isNode(node.patternProperties)) {
    for (const [pattern, child] of Object.entries(node.patternProperties))
      if (new RegExp(pattern, 'u').test(key) && isNode(child)) return child;
  }
  return undefined;
}

/** Whether a key would be accepted as a member name by an object node (declared or matching a map pattern). */
export function keyIsDeclared(node: SchemaNode, key: string): boolean {
  return childSchema(node, key) !== undefined;
}

/** Every value of a valid document with its schema nodes, in document order. */
export function locations(root: JsonValue, schema: SchemaNode): Location[] {
  const out: Location[] = [];
  const visit = (
    value: JsonValue,
    declared: SchemaNode,
    path: Path,
    memberOf: SchemaNode | undefined,
    unions: number,
  ): void => {
    const isUnion = Array.isArray(declared.anyOf) || Array.isArray(declared.oneOf);
    const resolved = resolveBranch(declared, value);
    const depth = unions + (isUnion ? 1 : 0);
    out.push({ path, value, declared, resolved, memberOf, unions: depth });
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        const child = childSchema(resolved, index);
        if (child !== undefined) visit(item, child, [...path, index], undefined, depth);
      });
    } else if (value !== null && typeof value === 'object') {
      for (const key of Object.keys(value)) {
        const child = childSchema(resolved, key);
        if (child !== undefined) visit(value[key] as JsonValue, child, [...path, key], resolved, depth);
      }
    }
  };
  visit(root, schema, [], undefined, 0);
  return out;
}
