/**
 * Usage errors of a command (docs/cli.md "Usage errors"): whatever oclif's parser reports —
 * a missing flag or argument, an unknown flag, an extra argument, a bad flag value — becomes
 * one `error[USAGE]` line that names the flag or argument, with the command's usage line as
 * the hint. oclif's own text spans lines ("The following error occurred:", an argument table,
 * "See more help with --help"); only its problems are kept, reworded.
 */
import type { Command, Interfaces } from '@oclif/core';

import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { quoteForMessage } from '../contracts/message-text.js';

// oclif colours parts of its messages on a terminal.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;
const DROPPED = [
  /^The following errors? occurred:?$/,
  /^See more help with --help$/,
  /^Note: /,
  /^Alternatively, you can use "--"/,
];

/** The display name of an argument: `run-id` → `RUN_ID`. */
function argName(name: string): string {
  return name.toUpperCase().replaceAll('-', '_');
}

/** `unknown flag "--a"`, `unexpected arguments "b", "c"`. */
function quotedList(what: string, text: string): string {
  const items = text.split(', ');
  return `${what}${items.length === 1 ? '' : 's'} ${items.map((item) => quoteForMessage(item)).join(', ')}`;
}

/** One oclif problem line in our words, or null when it carries nothing. */
function reword(line: string): string | null {
  let m: RegExpExecArray | null;
  if (DROPPED.some((re) => re.test(line))) return null;
  if ((m = /^Missing required flag (\S+)$/.exec(line)) !== null) return `missing required flag --${m[1] ?? ''}`;
  if ((m = /^Nonexistent flags?: (.+)$/.exec(line)) !== null) return quotedList('unknown flag', m[1] ?? '');
  if ((m = /^Unexpected arguments?: (.+)$/.exec(line)) !== null) return quotedList('unexpected argument', m[1] ?? '');
  if ((m = /^Unexpected flag (.+)$/.exec(line)) !== null) return `unknown flag ${quoteForMessage(m[1] ?? '')}`;
  if ((m = /^Flag --(\S+) can only be specified once$/.exec(line)) !== null)
    return `--${m[1] ?? ''} is given more than once`;
  if ((m = /^Flag --(\S+) expects a value$/.exec(line)) !== null) return `--${m[1] ?? ''} needs a value`;
  if ((m = /^Flag --(\S+) expects one of these values: (.+)$/.exec(line)) !== null)
    return `--${m[1] ?? ''} must be one of: ${m[2] ?? ''}`;
  if ((m = /^Expected --([^=\s]+)=(.*) to be one of: (.+)$/s.exec(line)) !== null)
    return `--${m[1] ?? ''} must be one of: ${m[3] ?? ''} (not ${quoteForMessage(m[2] ?? '')})`;
  if ((m = /^Expected (.*) to be one of: (.+)$/s.exec(line)) !== null)
    return `argument ${quoteForMessage(m[1] ?? '')} must be one of: ${m[2] ?? ''}`;
  return line.charAt(0).toLowerCase() + line.slice(1);
}

/** The problems of an oclif parse failure, one phrase each. */
export function parseProblems(error: Error): string[] {
  const text = error.message.replace(ANSI, '');
  const args = (error as { args?: unknown }).args;
  // RequiredArgsError: its args are the missing argument definitions; the rest of its text is a table of them.
  if (/^Missing \d+ required args?/.test(text) && Array.isArray(args)) {
    return args.map((arg) => {
      const name = (arg as { name?: unknown }).name;
      return `missing required argument ${argName(typeof name === 'string' ? name : '?')}`;
    });
  }
  // A flag's parse function failed: "Parsing --NAME \n\tREASON".
  const parsing = /^Parsing --(\S+)\s*\n\t([\s\S]*?)(\nSee more help with --help)?$/.exec(text);
  if (parsing !== null) {
    const reason = (parsing[2] ?? '').trim();
    return [`--${parsing[1] ?? ''}: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}`];
  }
  const problems = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map(reword)
    .filter((line): line is string => line !== null);
  return problems.length === 0 ? ['invalid command line'] : problems;
}

interface CommandShape {
  readonly args?: Interfaces.ArgInput;
  readonly flags?: Interfaces.FlagInput;
  readonly baseFlags?: Interfaces.FlagInput;
  readonly enableJsonFlag?: boolean;
}

/** `agentscm revision show REVISION [--repository NAME] [--data-dir DIR] [--json]`. */
export function usageLine(bin: string, id: string, command: CommandShape): string {
  const words = [bin, ...id.split(':')];
  for (const [name, arg] of Object.entries(command.args ?? {}))
    words.push(arg.required === true ? argName(name) : `[${argName(name)}]`);
  const flags = Object.entries({ ...command.flags, ...command.baseFlags }).filter(([, flag]) => flag.hidden !== true);
  const shown = (name: string, flag: Interfaces.Flag<unknown>): string => {
    if (flag.type === 'boolean') return `--${name}`;
    const value = flag.helpValue ?? (flag.options === undefined ? argName(name) : flag.options.join('|'));
    return `--${name} ${Array.isArray(value) ? value.join(' ') : value}`;
  };
  for (const [name, flag] of flags) if (flag.required === true) words.push(shown(name, flag));
  for (const [name, flag] of flags) if (flag.required !== true) words.push(`[${shown(name, flag)}]`);
  if (command.enableJsonFlag === true) words.push('[--json]');
  return words.join(' ');
}

function isParseFailure(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  if ('parse' in error) return true; // oclif's CLIParseError and its subclasses
  return /^(Parsing --|Flag --\S+ (can only be specified once|expects)|Unexpected flag )/.test(error.message);
}

/**
 * The USAGE error for a failure of the command line of `id`, or null when `error` is not one.
 * An AgentscmError raised by a flag's own parser keeps its code, without oclif's prefix.
 */
export function commandUsageError(
  error: unknown,
  bin: string,
  id: string,
  command: Command.Class | CommandShape,
): AgentscmError | null {
  if (!isParseFailure(error)) return null;
  const hint = `usage: ${usageLine(bin, id, command)}; see \`${bin} ${id.replaceAll(':', ' ')} --help\``;
  const problems = parseProblems(error);
  if (isAgentscmError(error)) {
    return new AgentscmError(error.code, problems.join('; '), {
      hint: error.hint ?? hint,
      cause: error.cause,
      ...(error.details === undefined ? {} : { details: error.details }),
    });
  }
  return new AgentscmError('USAGE', problems.join('; '), { hint, cause: error });
}
