import { BaseCommand } from '../_base.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import { inputArg, runOperation } from './_operation.js';

export default class AgentStateReconcile extends BaseCommand {
  static override summary = 'Merge observations of one agent by authority (native > adapter > terminal > unknown).';
  static override description =
    'Reads {observations: [envelope…]} of one agent, backend and task. The lifecycle state, scopes and result ' +
    'come from the strongest state_source (the highest revision among equals); a weaker source never overwrites ' +
    'a stronger one, whatever its revision or position. Each capability keeps its strongest declaration. Prints ' +
    '{state, winner, overruled}; two different observations of equal source and revision exit 3 ' +
    '(AGENT_STATE_CONFLICT).';
  static override examples = ['<%= config.bin %> agent-state reconcile observations.json --json'];
  static override args = inputArg;

  async run(): Promise<JsonValue> {
    const { args } = await this.parse(AgentStateReconcile);
    return runOperation('reconcile', args.file, (line) => this.log(line));
  }
}
