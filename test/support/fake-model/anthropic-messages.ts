/**
 * A fake Anthropic Messages API for Claude Code (`ANTHROPIC_BASE_URL`): `POST /v1/messages`
 * (streamed as server-sent events — message_start, content_block_start/delta/stop, message_delta,
 * message_stop — or as one JSON message when the request does not ask for a stream) and
 * `POST /v1/messages/count_tokens`. A request that offers the `Bash` tool is the agent's turn and
 * is answered by the policy: each command becomes one `tool_use` block of `Bash`. Any other
 * request (the client's own side calls: titles, summaries) is answered with a short text.
 */
import type { ServerResponse } from 'node:http';

import {
  pathOf,
  sendEvent,
  sendJson,
  startFakeServer,
  startSse,
  type FakeServer,
  type RecordedRequest,
} from './server.js';
import type { Policy, Transcript, TranscriptItem, Turn } from './transcript.js';

export interface FakeAnthropic extends FakeServer {
  /** The transcripts of the agent's turns, in order (what the model saw each time). */
  readonly turns: Transcript[];
}

type Block = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Block[])
    .map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : ''))
    .join('\n');
}

/** The conversation of a Messages request as a Transcript. */
export function anthropicTranscript(body: Record<string, unknown>): Transcript {
  const tools = Array.isArray(body.tools) ? (body.tools as Block[]).map((tool) => String(tool.name)) : [];
  const items: TranscriptItem[] = [];
  for (const message of (body.messages ?? []) as Block[]) {
    const content: Block[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as Block[]);
    for (const block of content) {
      if (message.role === 'assistant') {
        if (block.type === 'tool_use') {
          const input = block.input as Block;
          items.push({ kind: 'call', id: String(block.id), command: String(input.command) });
        } else if (block.type === 'text') items.push({ kind: 'text', text: String(block.text) });
      } else if (block.type === 'tool_result') {
        items.push({ kind: 'result', id: String(block.tool_use_id), text: textOf(block.content) });
      } else if (block.type === 'text') items.push({ kind: 'input', text: String(block.text) });
    }
  }
  return { system: textOf(body.system), tools, items };
}

function contentOf(turn: Turn, next: () => string): Block[] {
  if ('text' in turn) return [{ type: 'text', text: turn.text }];
  return turn.commands.map((command) => ({
    type: 'tool_use',
    id: next(),
    name: 'Bash',
    input: { command, description: 'Run the command' },
  }));
}

function stream(res: ServerResponse, model: string, id: string, content: Block[]): void {
  startSse(res);
  sendEvent(res, 'message_start', {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      sendEvent(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      });
      sendEvent(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: block.text },
      });
    } else {
      sendEvent(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      sendEvent(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    sendEvent(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  const stopReason = content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  sendEvent(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 10 },
  });
  sendEvent(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

/** Start the server; `policy` answers every turn of the agent. */
export async function startFakeAnthropic(policy: Policy): Promise<FakeAnthropic> {
  const turns: Transcript[] = [];
  let counter = 0;
  const next = (prefix: string) => () => `${prefix}_${String(++counter).padStart(6, '0')}`;
  const route = (request: RecordedRequest, res: ServerResponse): boolean => {
    const path = pathOf(request);
    if (request.method !== 'POST') return false;
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (path === '/v1/messages/count_tokens') {
      sendJson(res, 200, { input_tokens: 100 });
      return true;
    }
    if (path !== '/v1/messages') return false;
    const transcript = anthropicTranscript(body);
    let content: Block[];
    if (transcript.tools.includes('Bash')) {
      turns.push(transcript);
      content = contentOf(policy(transcript), next('toolu'));
    } else content = [{ type: 'text', text: 'ok' }];
    const model = typeof body.model === 'string' ? body.model : 'fake-model';
    const id = next('msg')();
    if (body.stream === true) stream(res, model, id, content);
    else {
      sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 10 },
      });
    }
    return true;
  };
  const server = await startFakeServer(route);
  return { ...server, turns };
}
