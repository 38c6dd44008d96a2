import { Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { parseActor, parseGrantScope } from '../../contracts/grant.js';
import { createGrantInStore, type GrantWithTokenFile } from '../../native/grants.js';
import { withStore } from '../../tasks/store.js';

export default class GrantCreate extends BaseCommand {
  static override summary = 'Create a grant for one actor on one repository and write its token to a new file.';
  static override description =
    'Every agent-task operation runs as the actor of a live grant. This records a grant {grant_id, repository, ' +
    'owner, agent, scope, generation 1} and writes its bearer token (agentscm_ and 43 base64url characters, 256 ' +
    'random bits) to a NEW file, mode 0600, in a directory that group and others cannot write (missing ' +
    'directories are created, mode 0700); an existing file is never overwritten. The authority keeps only the ' +
    "token's SHA-256, and no command prints the token.";
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data grant create --actor alice/claude-1 --token-file ' +
      '~/.agentscm/alice.token',
    '<%= config.bin %> grant create --repository demo --actor alice/claude-1 --token-file ./alice.token --json',
  ];
  static override flags = {
    repository: repositoryFlag,
    actor: Flags.string({
      description: 'The actor the grant authenticates, OWNER/AGENT.',
      required: true,
      helpValue: 'OWNER/AGENT',
    }),
    'token-file': Flags.string({
      description:
        'New file to write the token to (created 0600; refused if it exists; missing directories are created 0700).',
      required: true,
      helpValue: 'PATH',
    }),
    scope: Flags.string({
      description: 'agent (task operations) or reader (read-only hub routes).',
      default: 'agent',
      options: ['agent', 'reader'],
      helpValue: 'agent|reader',
    }),
  };

  async run(): Promise<GrantWithTokenFile> {
    const { flags } = await this.parse(GrantCreate);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const input = {
      repository: this.repositoryOf(flags.repository, dataDir),
      actor: parseActor(flags.actor),
      scope: parseGrantScope(flags.scope),
      tokenFile: flags['token-file'],
      nowMs: Date.now(),
    };
    const result = withStore(dataDir, 'write', (store) => createGrantInStore(store, input));
    const { grant } = result;
    this.log(
      `grant ${grant.grant_id}: ${grant.owner_id}/${grant.agent_id} on repository ${grant.repository}, scope ` +
        `${grant.scope}, generation ${grant.generation}`,
    );
    for (const dir of result.created_directories) this.log(`created directory ${dir} (mode 0700)`);
    this.log(`token written to ${result.token_file} (mode 0600)`);
    return result;
  }
}
