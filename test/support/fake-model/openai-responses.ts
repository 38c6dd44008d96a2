/**
 * A fake OpenAI Responses API for the Codex CLI (a `model_providers` entry with
 * `wire_api = "responses"` and `base_url` = this server's `/v1`): `POST /v1/responses`, streamed as
 * server-sent events — response.created, response.output_item.added/done per item,
 * response.completed. Each command of the policy's turn becomes one `function_call` item of the
 * shell tool the request offers (`shell_command` / `exec_command` with a command string, or
 * `shell` with an argv); a text turn becomes an assistant `message` item. `GET /v1/models` lists
 * one model.
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

export interface FakeResponses extends FakeServer {
  /** The transcripts of the agent's turns, in order (what the model saw each time). */
  readonly turns: Transcript[];
}

type Item = Record<string, unknown>;

/** The tool names that run a shell command, in the order they are preferred. */
const SHELL_TOOLS = ['shell_command', 'exec_command', 'shell'] as const;

function toolName(tool: Item): string {
  if (typeof tool.name === 'string') return tool.name;
  const fn = tool.function as Item | undefined;
  return fn !== undefined && typeof fn.name === 'string' ? fn.name : String(tool.type);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Item[]).map((part) => (typeof part.text === 'string' ? part.text : '')).join('\n');
}

/** The shell command a function call's arguments hold. */
function commandOf(name: string, args: string): string {
  let parsed: Item;
  try {
    parsed = JSON.parse(args) as Item;
  } catch {
    return args;
  }
  const command = parsed.cmd ?? parsed.command;
  if (Array.isArray(command)) return name === 'shell' && command.length === 3 ? String(command[2]) : command.join(' ');
  return String(command);
}

/** The conversation of a Responses request as a Transcript. */
export function responsesTranscript(body: Record<string, unknown>): Transcript {
  const tools = Array.isArray(body.tools) ? (body.tools as Item[]).map(toolName) : [];
  const items: TranscriptItem[] = [];
  const input: Item[] =
    typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : (body.input as Item[]);
  for (const item of input ?? []) {
    const type = item.type ?? 'message';
    if (type === 'message') {
      const text = textOf(item.content);
      items.push(item.role === 'assistant' ? { kind: 'text', text } : { kind: 'input', text });
    } else if (type === 'function_call') {
      items.push({
        kind: 'call',
        id: String(item.call_id),
        command: commandOf(String(item.name), String(item.arguments)),
      });
    } else if (type === 'function_call_output') {
      const output = item.output;
      items.push({
        kind: 'result',
        id: String(item.call_id),
        text: typeof output === 'string' ? output : textOf(output),
      });
    }
  }
  return { system: typeof body.instructions === 'string' ? body.instructions : '', tools, items };
}

function argumentsFor(tool: string, command: string): string {
  if (tool === 'shell') return JSON.stringify({ command: ['bash', '-lc', command] });
  if (tool === 'exec_command') return JSON.stringify({ cmd: command, login: false });
  return JSON.stringify({ command });
}

function outputOf(turn: Turn, tools: readonly string[], next: (prefix: string) => string): Item[] {
  if ('text' in turn) {
    return [
      {
        type: 'message',
        id: next('msg'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: turn.text, annotations: [] }],
      },
    ];
  }
  const tool = SHELL_TOOLS.find((name) => tools.includes(name));
  if (tool === undefined) throw new Error(`no shell tool offered (tools: ${tools.join(', ')})`);
  return turn.commands.map((command) => ({
    type: 'function_call',
    id: next('fc'),
    call_id: next('call'),
    name: tool,
    arguments: argumentsFor(tool, command),
    status: 'completed',
  }));
}

function stream(res: ServerResponse, model: string, id: string, output: Item[]): void {
  const response = { id, object: 'response', created_at: 0, model, status: 'in_progress', output: [] };
  startSse(res);
  let sequence = 0;
  sendEvent(res, 'response.created', { type: 'response.created', sequence_number: sequence++, response });
  output.forEach((item, index) => {
    sendEvent(res, 'response.output_item.added', {
      type: 'response.output_item.added',
      sequence_number: sequence++,
      output_index: index,
      item,
    });
    sendEvent(res, 'response.output_item.done', {
      type: 'response.output_item.done',
      sequence_number: sequence++,
      output_index: index,
      item,
    });
  });
  sendEvent(res, 'response.completed', {
    type: 'response.completed',
    sequence_number: sequence++,
    response: {
      ...response,
      status: 'completed',
      output,
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 20,
      },
    },
  });
  res.end();
}

/** Start the server; `policy` answers every turn of the agent. */
export async function startFakeResponses(policy: Policy): Promise<FakeResponses> {
  const turns: Transcript[] = [];
  let counter = 0;
  const next = (prefix: string): string => `${prefix}_${String(++counter).padStart(6, '0')}`;
  const route = (request: RecordedRequest, res: ServerResponse): boolean => {
    const path = pathOf(request);
    if (request.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', owned_by: 'test' }] });
      return true;
    }
    if (request.method !== 'POST' || path !== '/v1/responses') return false;
    const body = (request.body ?? {}) as Record<string, unknown>;
    const transcript = responsesTranscript(body);
    turns.push(transcript);
    const output = outputOf(policy(transcript), transcript.tools, next);
    stream(res, typeof body.model === 'string' ? body.model : 'fake-model', next('resp'), output);
    return true;
  };
  const server = await startFakeServer(route);
  return { ...server, turns };
}
