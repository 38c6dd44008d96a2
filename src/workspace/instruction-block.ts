/**
 * The managed instruction block (docs/stop-hooks.md "The managed instruction block"): a short
 * "Workflow tasks" section between two marker lines in AGENTS.md, .cursor/rules/agentscm.mdc
 * and .github/copilot-instructions.md. Writing replaces the block in place, or appends it to a
 * file that has none, and leaves every other byte of the file as it was (the edit is done on
 * bytes, so line endings and encodings outside the block survive). A
 * file whose markers are not exactly one begin line followed by one end line is refused
 * (INSTRUCTION_BLOCK_INVALID) before any file is written. It lives beside init-repo, which
 * writes it into the tree before the first revision is recorded.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';

export const INSTRUCTION_BLOCK_BEGIN =
  '<!-- agentscm:begin managed block (rewritten by `agentscm instructions write`; edit outside it) -->';
export const INSTRUCTION_BLOCK_END = '<!-- agentscm:end managed block -->';
/** The files the block is written into, relative to the workspace root. */
export const INSTRUCTION_FILES = [
  'AGENTS.md',
  '.cursor/rules/agentscm.mdc',
  '.github/copilot-instructions.md',
] as const;
/** Front matter of a new Cursor rule file: the rule applies to every request. */
const CURSOR_FRONT_MATTER = '---\ndescription: agentscm workflow tasks and Stop hooks\nalwaysApply: true\n---\n\n';
const BEGIN_PREFIX = '<!-- agentscm:begin';

/** The block's text, markers included, ending with a newline. */
export const INSTRUCTION_BLOCK = `${INSTRUCTION_BLOCK_BEGIN}
## Workflow tasks (agentscm)

Work on this repository is accepted only when its exact bytes pass the target's required checks.
Use the agentscm MCP tools (or \`agentscm agent-task call OPERATION\`); discover, then fetch:

1. \`capabilities\`: the schema versions the service supports; then \`next\` for your Change.
2. \`instructions\` for the task \`next\` names: every required criterion is inline.
3. \`reference\` for one named reference, only when the instructions need it.
4. \`claim\` a task \`next\` offers as claim. One \`next\` offers as \`collector_claim\` you run yourself
   on this machine: \`agentscm agent-task claim --profile ID …\` writes its descriptor, then
   \`agentscm agent-task collect\` runs the check with the key and state directory the operator
   configured (\`agentscm agent-task collector add\`); a plain claim of it is refused.

What next: \`agentscm qualification --change ID --token-file TOKEN\` (the \`qualification\` tool) says
whether your checkpointed revision qualifies and prints the exact next command lines
(\`$ agentscm …\`, every argument filled in); run them as printed. When you try to finish, a
Stop hook may block you: its reason carries the same \`$ agentscm …\` lines and ends with one
JSON line \`{"failures":[{"task_id","code"}],"next_action":"…","next":{"operation":"…"}}\`. Do what
\`next_action\` says, then finish again: \`checkpoint\` means record your edits (the printed
\`agentscm checkpoint --change ID\` line; it creates the new version's review context itself);
\`collector_claim\` (naming its collector_profile_id) or \`reconcile\` name a task_id; \`none\` means
no operation can help this revision: fix it and checkpoint a new one. A \`schema_mismatch\` answer
lists the server's schema versions: update the client.
${INSTRUCTION_BLOCK_END}
`;

export interface InstructionFileOutcome {
  readonly path: string;
  readonly action: 'created' | 'appended' | 'replaced' | 'unchanged';
}

function invalid(file: string, why: string): AgentscmError {
  return new AgentscmError('INSTRUCTION_BLOCK_INVALID', `${file}: ${why}; no instruction file was changed`, {
    hint:
      `leave exactly one "${BEGIN_PREFIX} …" line followed by one "${INSTRUCTION_BLOCK_END}" line ` +
      '(or neither), then run again',
  });
}

function indexesOf(bytes: Buffer, needle: Buffer): number[] {
  const found: number[] = [];
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) found.push(at);
  return found;
}

/** The new bytes of one file (pure): the block replaced in place, appended, or a new file. */
export function withInstructionBlock(
  file: string,
  current: Buffer | null,
): { bytes: Buffer; action: InstructionFileOutcome['action'] } {
  const block = Buffer.from(INSTRUCTION_BLOCK, 'utf8');
  if (current === null) {
    const head = file.endsWith('.mdc') ? Buffer.from(CURSOR_FRONT_MATTER, 'utf8') : Buffer.alloc(0);
    return { bytes: Buffer.concat([head, block]), action: 'created' };
  }
  const begins = indexesOf(current, Buffer.from(BEGIN_PREFIX, 'utf8'));
  const ends = indexesOf(current, Buffer.from(INSTRUCTION_BLOCK_END, 'utf8'));
  if (begins.length === 0 && ends.length === 0) {
    const separator = current.length === 0 ? '' : current.at(-1) === 0x0a ? '\n' : '\n\n';
    return { bytes: Buffer.concat([current, Buffer.from(separator, 'utf8'), block]), action: 'appended' };
  }
  const begin = begins[0];
  const end = ends[0];
  if (begins.length !== 1 || ends.length !== 1 || begin === undefined || end === undefined || end < begin)
    throw invalid(file, 'its agentscm markers are unbalanced or repeated');
  let stop = end + INSTRUCTION_BLOCK_END.length;
  // The block's own line break: LF, or CRLF when the file uses it.
  if (current[stop] === 0x0d && current[stop + 1] === 0x0a) stop += 2;
  else if (current[stop] === 0x0a) stop += 1;
  const bytes = Buffer.concat([current.subarray(0, begin), block, current.subarray(stop)]);
  return { bytes, action: bytes.equals(current) ? 'unchanged' : 'replaced' };
}

/** Write the block into every instruction file of a workspace (all checked before any is written). */
export function writeInstructionBlocks(root: string): InstructionFileOutcome[] {
  const planned = INSTRUCTION_FILES.map((path) => {
    const full = join(root, path);
    let current: Buffer | null = null;
    if (existsSync(full) || isDanglingLink(full)) {
      if (!lstatSync(full).isFile()) throw invalid(path, 'it is not a regular file');
      current = readFileSync(full);
    }
    return { path, full, ...withInstructionBlock(path, current) };
  });
  for (const file of planned) {
    if (file.action === 'unchanged') continue;
    try {
      mkdirSync(dirname(file.full), { recursive: true });
      const aside = `${file.full}.agentscm-${process.pid}.tmp`;
      const mode = file.action === 'created' ? 0o644 : lstatSync(file.full).mode & 0o777;
      writeFileSync(aside, file.bytes, { mode });
      renameSync(aside, file.full);
    } catch (error) {
      throw new AgentscmError('IO_ERROR', `cannot write ${file.path}: ${(error as Error).message}`, { cause: error });
    }
  }
  return planned.map((f) => ({ path: f.path, action: f.action }));
}

function isDanglingLink(full: string): boolean {
  try {
    return lstatSync(full).isSymbolicLink();
  } catch {
    return false;
  }
}
