/**
 * The Stop hook payload (docs/stop-hooks.md "Input": the Stop hooks share the payload decoding).
 * Bytes → size check → fatal UTF-8 → strict JSON → shape. Claude Code: an object with session_id
 * (string), hook_event_name "Stop" and, when present, stop_hook_active (boolean), cwd and
 * transcript_path (string or null); other fields are the client's and are ignored. Codex: exactly
 * its published input schema (every valid input is accepted, nothing else).
 */
import { externalSchemaProblem } from '../../agent-state/external-schema.js';
import { AgentscmError } from '../../contracts/errors.js';
import { isJsonObject, type JsonValue } from '../../contracts/json/json-value.js';
import { parseStrictJson } from '../../contracts/json/strict-json.js';
import { CODEX_STOP_INPUT_SCHEMA } from './codex-schemas.js';

export const STOP_CLIENTS = ['claude-code', 'codex'] as const;
export type StopClient = (typeof STOP_CLIENTS)[number];

/** A Stop payload carries a session, a transcript path and the last message: 4 MiB is ample. */
export const MAX_STOP_PAYLOAD_BYTES = 4 * 1024 * 1024;

export interface StopPayload {
  readonly client: StopClient;
  readonly session_id: string;
  /** True when the agent is already continuing because of a Stop hook (absent: false). */
  readonly stop_hook_active: boolean;
}

function invalid(client: StopClient, why: string, cause?: unknown): AgentscmError {
  return new AgentscmError(
    'HOOK_PAYLOAD_INVALID',
    `the ${client === 'codex' ? 'Codex' : 'Claude Code'} Stop hook input is not valid: ${why}`,
    {
      hint: 'the hook reads one Stop payload as JSON on stdin; it did nothing',
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** Decode the Stop payload a client sent on stdin (HOOK_PAYLOAD_INVALID otherwise). */
export function decodeStopPayload(client: StopClient, bytes: Uint8Array): StopPayload {
  let value: JsonValue;
  try {
    value = parseStrictJson(bytes, { maxBytes: MAX_STOP_PAYLOAD_BYTES });
  } catch (error) {
    throw invalid(client, error instanceof Error ? error.message : 'unreadable', error);
  }
  if (!isJsonObject(value)) throw invalid(client, 'it is not a JSON object');
  if (client === 'codex') {
    const problem = externalSchemaProblem(CODEX_STOP_INPUT_SCHEMA, value);
    if (problem !== null) throw invalid(client, problem);
    return { client, session_id: value.session_id as string, stop_hook_active: value.stop_hook_active === true };
  }
  if (typeof value.session_id !== 'string') throw invalid(client, 'session_id is missing or not a string');
  if (value.hook_event_name !== 'Stop') throw invalid(client, 'hook_event_name is not "Stop"');
  const active = value.stop_hook_active;
  if (active !== undefined && typeof active !== 'boolean') throw invalid(client, 'stop_hook_active is not a boolean');
  for (const key of ['cwd', 'transcript_path'] as const) {
    const field = value[key];
    if (field !== undefined && field !== null && typeof field !== 'string')
      throw invalid(client, `${key} is not a string`);
  }
  return { client, session_id: value.session_id, stop_hook_active: active === true };
}
