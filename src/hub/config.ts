/**
 * The hub's strict execution config v1 (docs/wire.md "Hub"; docs/hub.md "Execution config": each
 * entry pins only repository_id, profile_id, native_repository, absolute data_dir, target and
 * requirement_digest, plus publish_forge_status). Decoded by the published schema
 * (docs/schemas/hub.execution-config.schema.json: unknown fields at any depth refused), then the
 * rules a schema cannot state: data_dir absolute, one entry per repository/profile pair, a listen
 * address that is an IP and a port, and a usable forge exactly when publish_forge_status is true
 * (src/hub/forge-client.ts checkForgeConfig).
 */
import { isIP } from 'node:net';
import { isAbsolute, normalize } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import {
  HUB_CONFIG_MAX_BYTES,
  hubConfigDecoder,
  type HubConfigDocument,
  type HubForgeConfig,
} from '../contracts/hub-config.js';
import { readBoundedInput } from '../native/bounded-input.js';
import { checkForgeConfig } from './forge-client.js';

/** Where the hub listens when the config names no address: loopback, a port the system picks. */
export const DEFAULT_LISTEN = '127.0.0.1:0';

export interface HubProfile {
  /** `OWNER/NAME` as the routes name it. */
  readonly repositoryId: string;
  readonly profileId: string;
  /** The native repository id (32 hex) in `dataDir`. */
  readonly nativeRepository: string;
  /** Absolute, normalized. */
  readonly dataDir: string;
  readonly target: string;
  readonly requirementDigest: string;
  /** Where qualification states are published as commit statuses; absent or null: not published. */
  readonly forge?: HubForgeConfig | null;
}

export interface HubConfig {
  readonly host: string;
  readonly port: number;
  readonly profiles: readonly HubProfile[];
}

/** `HOST:PORT` or `[V6]:PORT` with an IP literal and a port 0..65535 (0: the system picks one). */
export function parseListen(text: string): { host: string; port: number } {
  const invalid = (): AgentscmError =>
    new AgentscmError(
      'HUB_CONFIG_LISTEN_INVALID',
      `listen ${JSON.stringify(text.slice(0, 300))} is not HOST:PORT with an IP address`,
      {
        hint: 'use e.g. "127.0.0.1:8787", "[::1]:8787", or port 0 to let the system pick one',
      },
    );
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([0-9.]+)):([0-9]{1,5})$/.exec(text);
  if (match === null) throw invalid();
  const host = match[1] ?? match[2] ?? '';
  const portText = match[3] ?? '';
  const port = Number(portText);
  const family = match[1] === undefined ? 4 : 6;
  if (isIP(host) !== family || port > 65535 || (portText.length > 1 && portText.startsWith('0'))) throw invalid();
  return { host, port };
}

/** Decode and check an execution config document (bytes of the config file). */
export function parseHubConfig(bytes: Uint8Array): HubConfig {
  const document: HubConfigDocument = hubConfigDecoder.decode(bytes, HUB_CONFIG_MAX_BYTES);
  const seen = new Set<string>();
  const profiles = document.agent_task_profiles.map((entry, index): HubProfile => {
    const where = `agent_task_profiles[${index}]`;
    if (!isAbsolute(entry.data_dir)) {
      throw new AgentscmError(
        'HUB_CONFIG_DATA_DIR_RELATIVE',
        `${where}.data_dir ${JSON.stringify(entry.data_dir.slice(0, 300))} is not an absolute path`,
        {
          hint:
            'name the native data directory by its absolute path; the hub never resolves a path against its ' +
            'working directory',
        },
      );
    }
    const key = `${entry.repository_id}\u0000${entry.profile_id}`;
    if (seen.has(key)) {
      throw new AgentscmError(
        'HUB_CONFIG_PROFILE_DUPLICATE',
        `${where} repeats repository ${entry.repository_id} profile ${entry.profile_id}`,
        {
          hint: 'keep one entry per repository_id and profile_id',
        },
      );
    }
    seen.add(key);
    const publish = entry.publish_forge_status === true;
    if (publish && entry.forge === undefined) {
      throw new AgentscmError(
        'HUB_CONFIG_FORGE_INVALID',
        `${where}.publish_forge_status is true but the entry names no forge`,
        {
          hint:
            'add "forge": {"kind": "github"|"gitlab", "base_url": URL, "token_file": ABS_PATH}, or set ' +
            'publish_forge_status to false',
        },
      );
    }
    if (!publish && entry.forge !== undefined) {
      throw new AgentscmError(
        'HUB_CONFIG_FORGE_INVALID',
        `${where} names a forge but publish_forge_status is not true`,
        {
          hint: 'set publish_forge_status to true to publish, or remove the forge section',
        },
      );
    }
    if (entry.forge !== undefined) checkForgeConfig(entry.forge, where);
    return {
      repositoryId: entry.repository_id,
      profileId: entry.profile_id,
      nativeRepository: entry.native_repository,
      dataDir: normalize(entry.data_dir),
      target: entry.target,
      requirementDigest: entry.requirement_digest,
      forge: entry.forge === undefined ? null : { ...entry.forge, token_file: normalize(entry.forge.token_file) },
    };
  });
  const { host, port } = parseListen(document.listen ?? DEFAULT_LISTEN);
  return { host, port, profiles };
}

/** Read and check the execution config file (a regular file of at most 256 KiB). */
export function readHubConfig(file: string): HubConfig {
  return parseHubConfig(
    readBoundedInput(file, {
      limit: HUB_CONFIG_MAX_BYTES,
      what: 'the hub execution config',
      missingHint: 'pass the path of the hub execution config file (docs/hub.md)',
    }),
  );
}
