/**
 * The hub's strict execution config v1 (docs/hub.md "Execution config"): every refusal has its
 * code, through the parser and through `agentscm hub serve --config`, and a valid config
 * decodes to the profiles the routes serve.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { DEFAULT_LISTEN, parseHubConfig, parseListen } from '../../src/hub/config.js';
import { codeOf } from '../helpers/errors.js';

const PROFILE = {
  repository_id: 'acme/widgets',
  profile_id: 'default',
  native_repository: '0123456789abcdef0123456789abcdef',
  data_dir: '/srv/agentscm/data',
  target: 'main',
  requirement_digest: 'a'.repeat(64),
  publish_forge_status: false,
};

function bytes(document: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(document));
}

test('a valid config decodes to its profiles; listen defaults to loopback with a system-chosen port', () => {
  const config = parseHubConfig(
    bytes({ version: 1, agent_task_profiles: [PROFILE, { ...PROFILE, profile_id: 'other', data_dir: '/srv/a/../b' }] }),
  );
  assert.equal(DEFAULT_LISTEN, '127.0.0.1:0');
  assert.deepEqual({ host: config.host, port: config.port }, { host: '127.0.0.1', port: 0 });
  assert.equal(config.profiles.length, 2);
  assert.deepEqual(config.profiles[0], {
    repositoryId: 'acme/widgets',
    profileId: 'default',
    nativeRepository: PROFILE.native_repository,
    dataDir: '/srv/agentscm/data',
    target: 'main',
    requirementDigest: PROFILE.requirement_digest,
    forge: null,
  });
  assert.equal(config.profiles[1]?.dataDir, '/srv/b');
  const v6 = parseHubConfig(bytes({ version: 1, listen: '[::1]:8787', agent_task_profiles: [PROFILE] }));
  assert.deepEqual({ host: v6.host, port: v6.port }, { host: '::1', port: 8787 });
});

test('refusals carry their codes', () => {
  const cases: [string, unknown, string][] = [
    ['unknown top-level field', { version: 1, agent_task_profiles: [PROFILE], extra: true }, 'SCHEMA_UNKNOWN_FIELD'],
    [
      'unknown profile field',
      { version: 1, agent_task_profiles: [{ ...PROFILE, source_profiles: [] }] },
      'SCHEMA_UNKNOWN_FIELD',
    ],
    ['version 2', { version: 2, agent_task_profiles: [PROFILE] }, 'SCHEMA_VERSION_UNSUPPORTED'],
    ['no profiles', { version: 1, agent_task_profiles: [] }, 'SCHEMA_BOUND'],
    [
      'missing data_dir',
      { version: 1, agent_task_profiles: [{ ...PROFILE, data_dir: undefined }] },
      'SCHEMA_MISSING_FIELD',
    ],
    [
      'relative data_dir',
      { version: 1, agent_task_profiles: [{ ...PROFILE, data_dir: 'agentscm-data' }] },
      'HUB_CONFIG_DATA_DIR_RELATIVE',
    ],
    [
      'dot-relative data_dir',
      { version: 1, agent_task_profiles: [{ ...PROFILE, data_dir: './data' }] },
      'HUB_CONFIG_DATA_DIR_RELATIVE',
    ],
    [
      'duplicate profile',
      { version: 1, agent_task_profiles: [PROFILE, { ...PROFILE, data_dir: '/elsewhere' }] },
      'HUB_CONFIG_PROFILE_DUPLICATE',
    ],
    [
      'forge status true without a forge',
      { version: 1, agent_task_profiles: [{ ...PROFILE, publish_forge_status: true }] },
      'HUB_CONFIG_FORGE_INVALID',
    ],
    [
      'a forge without forge status',
      {
        version: 1,
        agent_task_profiles: [
          { ...PROFILE, forge: { kind: 'github', base_url: 'https://api.github.com', token_file: '/t' } },
        ],
      },
      'HUB_CONFIG_FORGE_INVALID',
    ],
    [
      'a forge of an unknown kind',
      {
        version: 1,
        agent_task_profiles: [
          {
            ...PROFILE,
            publish_forge_status: true,
            forge: { kind: 'gitea', base_url: 'https://x.example', token_file: '/t' },
          },
        ],
      },
      'SCHEMA_TYPE',
    ],
    [
      'a forge with an unknown field',
      {
        version: 1,
        agent_task_profiles: [
          {
            ...PROFILE,
            publish_forge_status: true,
            forge: { kind: 'github', base_url: 'https://x.example', token_file: '/t', token: 'x' },
          },
        ],
      },
      'SCHEMA_UNKNOWN_FIELD',
    ],
    [
      'repository_id not OWNER/NAME',
      { version: 1, agent_task_profiles: [{ ...PROFILE, repository_id: 'widgets' }] },
      'SCHEMA_TYPE',
    ],
    [
      'native_repository not 32 hex',
      { version: 1, agent_task_profiles: [{ ...PROFILE, native_repository: 'ABCDEF0123456789ABCDEF0123456789' }] },
      'ID_INVALID',
    ],
    [
      'host name instead of an IP',
      { version: 1, listen: 'localhost:80', agent_task_profiles: [PROFILE] },
      'HUB_CONFIG_LISTEN_INVALID',
    ],
    [
      'port out of range',
      { version: 1, listen: '127.0.0.1:65536', agent_task_profiles: [PROFILE] },
      'HUB_CONFIG_LISTEN_INVALID',
    ],
  ];
  for (const [name, document, code] of cases)
    assert.equal(
      codeOf(() => parseHubConfig(bytes(document))),
      code,
      name,
    );
  assert.equal(
    codeOf(() => parseHubConfig(Buffer.from('{"version":1,"version":1,"agent_task_profiles":[]}'))),
    'JSON_DUPLICATE_KEY',
  );
  for (const listen of ['127.0.0.1', ':80', '127.0.0.1:080', '[127.0.0.1]:80', '::1:80', '999.0.0.1:1'])
    assert.equal(
      codeOf(() => parseListen(listen)),
      'HUB_CONFIG_LISTEN_INVALID',
      listen,
    );
});
