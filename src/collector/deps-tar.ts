/**
 * A small in-process tar writer (POSIX ustar, with a pax extended header for any name or link
 * target longer than the ustar fields hold): the build context `agentscm deps build` sends to the
 * engine. Directories, regular files and symbolic links (node_modules/.bin holds links); other
 * kinds are refused. Owner and times are fixed, so the same tree gives the same bytes.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';

const BLOCK = 512;

export interface TarEntry {
  readonly name: string;
  readonly kind: 'file' | 'dir' | 'symlink';
  readonly mode: number;
  readonly data?: Uint8Array;
  readonly target?: string;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, size: number, type: string, mode: number, link: string): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(mode & 0o7777, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(0, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(type, 156, 'ascii');
  block.write(link, 157, 100, 'utf8');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** One pax record: "LEN key=value\n", LEN counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

function fits(text: string): boolean {
  return Buffer.byteLength(text) < 100 && /^[\x20-\x7e]*$/.test(text);
}

/** The tar stream (with its two closing zero blocks) of `entries`, in order. */
export function writeTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const name = entry.kind === 'dir' && !entry.name.endsWith('/') ? `${entry.name}/` : entry.name;
    const target = entry.target ?? '';
    if (!fits(name) || !fits(target)) {
      let pax = '';
      if (!fits(name)) pax += paxRecord('path', name);
      if (!fits(target)) pax += paxRecord('linkpath', target);
      const bytes = Buffer.from(pax, 'utf8');
      parts.push(header('PaxHeader', bytes.byteLength, 'x', 0o644, ''), bytes, padding(bytes.byteLength));
    }
    const shortName = fits(name) ? name : name.slice(0, 99).replace(/[^\x20-\x7e]/g, '_');
    const shortTarget = fits(target) ? target : '';
    const data = entry.kind === 'file' ? (entry.data ?? new Uint8Array()) : new Uint8Array();
    const type = entry.kind === 'file' ? '0' : entry.kind === 'dir' ? '5' : '2';
    parts.push(header(shortName, data.byteLength, type, entry.mode, shortTarget));
    if (data.byteLength > 0) parts.push(Buffer.from(data), padding(data.byteLength));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

/**
 * The entries of the tree at `root`, named under `prefix`, sorted by name; links are kept as
 * links. A device, socket or FIFO is refused.
 */
export function treeEntries(root: string, prefix: string): TarEntry[] {
  const out: TarEntry[] = [{ name: prefix, kind: 'dir', mode: 0o755 }];
  const walk = (dir: string, name: string): void => {
    for (const child of readdirSync(dir).sort()) {
      const path = join(dir, child);
      const childName = `${name}/${child}`;
      const stat = lstatSync(path);
      if (stat.isSymbolicLink())
        out.push({ name: childName, kind: 'symlink', mode: 0o777, target: readlinkSync(path) });
      else if (stat.isDirectory()) {
        out.push({ name: childName, kind: 'dir', mode: stat.mode & 0o755 });
        walk(path, childName);
      } else if (stat.isFile()) {
        out.push({ name: childName, kind: 'file', mode: stat.mode & 0o755, data: readFileSync(path) });
      } else {
        throw new AgentscmError('DEPS_INSTALL_FAILED', `${path} is neither a file, a directory nor a link`, {
          hint: 'install without packages that create special files',
        });
      }
    }
  };
  walk(root, prefix);
  return out;
}
