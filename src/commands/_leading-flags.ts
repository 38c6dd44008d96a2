/**
 * Two rewrites of the command line before oclif parses it. `agentscm help [COMMAND…]` and `-h`
 * become `--help` (docs/cli.md "Help"), so both print exactly what `--help` prints.
 *
 * `agentscm --data-dir D <command> ...` as the specification writes it (docs/wire.md "CLI
 * conventions"): a leading `--data-dir D` or `--data-dir=D` becomes the command's own
 * `--data-dir=D`, so it is parsed, and refused when repeated, like the flag after the command.
 * It is never put into AGENTSCM_DATA_DIR, which oclif would also read. Only the exact flag
 * is taken: a word that merely starts with --data-dir, an empty value, a repeated flag and an
 * empty AGENTSCM_DATA_DIR are usage errors (docs/cli.md "Choosing the data directory").
 */
import { AgentscmError } from '../contracts/errors.js';
import { quoteForMessage } from '../contracts/message-text.js';

const FLAG = '--data-dir';
const HINT = 'write --data-dir DIR (or --data-dir=DIR) before or after the command, or set AGENTSCM_DATA_DIR=DIR';

function usage(message: string): AgentscmError {
  return new AgentscmError('USAGE', message, { hint: HINT });
}

/** The argv oclif should parse: leading --data-dir moved behind the command words. */
export function takeLeadingDataDir(args: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.AGENTSCM_DATA_DIR === '') throw usage('AGENTSCM_DATA_DIR is set but empty; it must name a directory');
  const argv = [...args];
  let dataDir: string | undefined;
  while (argv[0]?.startsWith(FLAG) === true) {
    const head = argv.shift() as string;
    let value: string | undefined;
    if (head === FLAG) {
      value = argv.shift();
      if (value === undefined || value.startsWith('-')) throw usage(`${FLAG} needs a directory`);
    } else if (head.startsWith(`${FLAG}=`)) {
      value = head.slice(FLAG.length + 1);
    } else {
      throw usage(`unknown flag ${quoteForMessage(head)} before the command`);
    }
    if (value === '') throw usage(`${FLAG} needs a directory, not an empty value`);
    if (dataDir !== undefined) throw usage(`${FLAG} is given more than once`);
    dataDir = value;
  }
  // No command (e.g. `agentscm --data-dir D`): nothing to hand the flag to; root help follows.
  if (dataDir === undefined || argv.length === 0) return argv;
  const end = argv.indexOf('--');
  argv.splice(end < 0 ? argv.length : end, 0, `${FLAG}=${dataDir}`);
  return argv;
}

const HELP = '--help';

/**
 * `agentscm help [COMMAND…] [FLAGS]` as `agentscm [COMMAND…] [FLAGS] --help`, and every `-h` before a
 * `--` as `--help` (oclif shows a command's or topic's help when `--help` appears before `--`).
 * Run after takeLeadingDataDir, which moves a leading `--data-dir` behind the command words.
 */
export function helpAsFlag(args: readonly string[]): string[] {
  const end = args.indexOf('--');
  const argv = args.map((arg, i) => (arg === '-h' && (end < 0 || i < end) ? HELP : arg));
  if (argv[0] !== 'help') return argv;
  const rest = argv.slice(1);
  const restEnd = rest.indexOf('--');
  rest.splice(restEnd < 0 ? rest.length : restEnd, 0, HELP);
  return rest;
}
