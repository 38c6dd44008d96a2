/**
 * The shell blocks of a Markdown page, for the tests that run a page's commands literally: every
 * fenced block whose info string is `sh` (```` ```sh ````) inside one `## ` section, in order.
 * Blocks fenced as `text` (synopses with placeholders) are not commands and are skipped.
 */
import { spawn } from 'node:child_process';

/** The `sh` blocks of the `## heading` section (the whole page when `heading` is null). */
export function shellBlocks(markdown: string, heading: string | null): string[] {
  const lines = markdown.split('\n');
  let inSection = heading === null;
  let fence: string | null = null;
  let block: string[] = [];
  const blocks: string[] = [];
  for (const line of lines) {
    if (fence === null && /^## /.test(line) && heading !== null) inSection = line.slice(3).trim() === heading;
    const open = /^(```+)\s*(\S*)\s*$/.exec(line);
    if (fence === null && open !== null) {
      fence = open[2] === 'sh' && inSection ? (open[1] ?? '```') : `skip:${open[1] ?? '```'}`;
      block = [];
      continue;
    }
    if (fence !== null && (line === fence || line === fence.replace(/^skip:/, ''))) {
      if (!fence.startsWith('skip:')) blocks.push(block.join('\n'));
      fence = null;
      continue;
    }
    if (fence !== null) block.push(line);
  }
  if (fence !== null) throw new Error(`unterminated code block in section ${heading ?? '(page)'}`);
  return blocks;
}

export interface ScriptResult {
  readonly code: number | null;
  readonly output: string;
}

/**
 * Run `script` with bash (`set -euo pipefail`, each command echoed with `set -x` so a failure
 * shows where) in `cwd` with `env`; the combined output is kept for the failure message.
 */
export function runScript(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ScriptResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -euo pipefail -x\n${script}\n`], { cwd, env, stdio: 'pipe' });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}
