/**
 * The scripted model the client tests use. It knows nothing about agentscm: it reads only what
 * the client sends it (the prompt with the instruction block, tool results, Stop-hook feedback)
 * and follows one generic policy, replayed over the whole transcript so that it needs no state of
 * its own:
 *
 * 1. every line `$ agentscm …` in a new input or tool result is a command to run: one shell tool
 *    call each, in order (a command already run in the same turn is not run again, so an output
 *    that repeats its own advice cannot loop);
 * 2. a test failure in a new input or tool result — a TAP line `not ok N - TITLE` and a test file
 *    path such as `test/x.test.js` — is fixed with the project's own fix for TITLE, the model's
 *    only domain knowledge (`fixes`), run as one shell command;
 * 3. with nothing left to run, the turn ends with a final text.
 */
import { agentscmCommandLines, type Policy, type Transcript } from './transcript.js';

export interface ScriptedAgentOptions {
  /** Shell command that fixes the project, by failing test title. */
  readonly fixes?: Readonly<Record<string, string>>;
  /** The final text of a turn (default "Done."). */
  readonly finalText?: string;
}

export interface TestFailure {
  readonly title: string;
  readonly file: string;
}

/** The first failing test a text reports: a TAP `not ok` line and a test file path. */
export function testFailureIn(text: string): TestFailure | undefined {
  const file = /(?:^|[\s"'(/])(test\/[\w./-]+\.test\.[cm]?js)\b/m.exec(text)?.[1];
  // A line may carry a quoting prefix, as `agentscm agent-task collect` prints a tail (`  | not ok …`).
  const title = /^[\s|]*not ok \d+ - (.+?)\s*$/m.exec(text)?.[1];
  return title !== undefined && file !== undefined ? { title, file } : undefined;
}

/** What the text asks the model to run next: its `$ agentscm` lines, then a known fix. */
function actionsFor(text: string, fixes: Readonly<Record<string, string>>): string[] {
  const actions = agentscmCommandLines(text);
  const failure = testFailureIn(text);
  const fix = failure !== undefined ? fixes[failure.title] : undefined;
  if (fix !== undefined) actions.push(fix);
  return actions;
}

/** The commands still to run at the end of the transcript, in order. */
export function pendingCommands(transcript: Transcript, fixes: Readonly<Record<string, string>> = {}): string[] {
  let queue: string[] = [];
  let ran = new Set<string>();
  for (const item of transcript.items) {
    if (item.kind === 'text') {
      queue = [];
      ran = new Set();
    } else if (item.kind === 'call') {
      ran.add(item.command);
      const at = queue.indexOf(item.command);
      if (at >= 0) queue.splice(at, 1);
    } else {
      for (const action of actionsFor(item.text, fixes)) {
        if (!ran.has(action) && !queue.includes(action)) queue.push(action);
      }
    }
  }
  return queue;
}

export function scriptedAgent(options: ScriptedAgentOptions = {}): Policy {
  const fixes = options.fixes ?? {};
  return (transcript) => {
    const pending = pendingCommands(transcript, fixes);
    return pending.length > 0 ? { commands: [pending[0]!] } : { text: options.finalText ?? 'Done.' };
  };
}
