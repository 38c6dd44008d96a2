import { BaseCommand } from '../_base.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import { inputArg, runOperation } from './_operation.js';

export default class AgentStateEligible extends BaseCommand {
  static override summary = 'List the agents whose capabilities satisfy a requirement (exit 1 when none does).';
  static override description =
    'Reads {agents: [envelope…], require: {capability: true…}} and prints {required, eligible: [agent_id…], ' +
    'ineligible: [{agent_id, missing}]}. A capability declared "unknown" (or undeclared when the envelope was ' +
    'built) never satisfies a requirement; any declared authority (native, adapter, terminal) does.';
  static override examples = ['<%= config.bin %> agent-state eligible agents.json --json'];
  static override args = inputArg;

  async run(): Promise<JsonValue> {
    const { args } = await this.parse(AgentStateEligible);
    return runOperation('eligible', args.file, (line) => this.log(line));
  }
}
