/**
 * A JSON writer for the campaign, independent of agentscm's encoders: it writes bigints exactly,
 * can splice raw text in place of any value (bad numbers, deep nesting, duplicate members) and
 * can put whitespace between tokens.
 */
import type { JsonValue } from '../../../src/contracts/json/json-value.js';

/** Text written as is where a value goes. */
export class Raw {
  constructor(readonly text: string) {}
}

/** A value tree that may hold raw pieces. */
export type Tree = JsonValue | Raw | TreeObject | Tree[];
export interface TreeObject {
  [key: string]: Tree;
}

export type Path = readonly (string | number)[];

export interface WriteOptions {
  /** Whitespace to put at the n-th place between tokens ('' for none). */
  readonly gap?: (n: number) => string;
}

/** Write a tree as JSON text. */
export function writeJson(value: Tree, options: WriteOptions = {}): string {
  let gaps = 0;
  const gap = (): string => (options.gap === undefined ? '' : options.gap(gaps++));
  const write = (node: Tree): string => {
    if (node instanceof Raw) return node.text;
    if (node === null) return 'null';
    if (typeof node === 'bigint') return node.toString();
    if (typeof node === 'number' || typeof node === 'boolean') return String(node);
    if (typeof node === 'string') return JSON.stringify(node);
    if (Array.isArray(node)) {
      if (node.length === 0) return `[${gap()}]`;
      return `[${gap()}${node.map((item) => `${write(item)}${gap()}`).join(`,${gap()}`)}]`;
    }
    const keys = Object.keys(node);
    if (keys.length === 0) return `{${gap()}}`;
    return `{${gap()}${keys.map((key) => `${JSON.stringify(key)}${gap()}:${gap()}${write(node[key] as Tree)}${gap()}`).join(`,${gap()}`)}}`;
  };
  return `${gap()}${write(value)}${gap()}`;
}

/** A deep copy of a tree (bigints kept). */
export function copyTree(value: Tree): Tree {
  if (value instanceof Raw || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyTree);
  const out: TreeObject = {};
  for (const key of Object.keys(value)) setMember(out, key, copyTree(value[key] as Tree));
  return out;
}

/** Set a member as an own data property, `__proto__` included. */
export function setMember(object: TreeObject, key: string, value: Tree): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The node at a path. */
export function nodeAt(root: Tree, path: Path): Tree {
  let node = root;
  for (const key of path) node = (node as Record<string | number, Tree>)[key] as Tree;
  return node;
}

/** A copy of root with the node at path replaced (path [] replaces the root). */
export function replaceAt(root: Tree, path: Path, value: Tree): Tree {
  if (path.length === 0) return value;
  const copy = copyTree(root);
  const parent = nodeAt(copy, path.slice(0, -1)) as Record<string | number, Tree>;
  const key = path[path.length - 1] as string | number;
  if (Array.isArray(parent)) parent[key as number] = value;
  else setMember(parent, key as string, value);
  return copy;
}

/** A copy of root with the member at path removed. */
export function removeAt(root: Tree, path: Path): Tree {
  const copy = copyTree(root);
  const parent = nodeAt(copy, path.slice(0, -1)) as TreeObject;
  delete parent[path[path.length - 1] as string];
  return copy;
}

/** Number of arrays and objects that enclose the value at path (the root value is enclosed by none). */
export function enclosingContainers(path: Path): number {
  return path.length;
}
