/**
 * What a fake model sees of a conversation, the same for both wire formats: the system text, the
 * names of the tools it was offered, and the items in order — inputs (a user prompt, Stop-hook
 * feedback or any other text the client sent), the model's own earlier tool calls and their
 * results, and its earlier text. A policy answers one turn from it: tool calls to make (one shell
 * command each) or a final text.
 */
export type TranscriptItem =
  | { readonly kind: 'input'; readonly text: string }
  | { readonly kind: 'call'; readonly id: string; readonly command: string }
  | { readonly kind: 'result'; readonly id: string; readonly text: string }
  | { readonly kind: 'text'; readonly text: string };

export interface Transcript {
  readonly system: string;
  readonly tools: readonly string[];
  readonly items: readonly TranscriptItem[];
}

/** One model turn: run these shell commands (tool calls), or end the turn with this text. */
export type Turn = { readonly commands: readonly string[] } | { readonly text: string };

export type Policy = (transcript: Transcript) => Turn;

/** The items after the model's last own item (call or text): what is new to it this turn. */
export function newestInputs(transcript: Transcript): readonly TranscriptItem[] {
  const items = transcript.items;
  let i = items.length;
  while (i > 0 && (items[i - 1]!.kind === 'input' || items[i - 1]!.kind === 'result')) i -= 1;
  return items.slice(i);
}

/** The text of the newest inputs, joined. */
export function newestText(transcript: Transcript): string {
  return newestInputs(transcript)
    .map((item) => ('text' in item ? item.text : ''))
    .join('\n');
}

/** Lines of the form `$ agentscm …`, in order. */
export function agentscmCommandLines(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/^\$ (agentscm .*)$/gm)) out.push(match[1]!.trimEnd());
  return out;
}

/** Shell-quote one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
