import { BaseCommand } from '../_base.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import { inputArg, runOperation } from './_operation.js';

export default class AgentStateConflicts extends BaseCommand {
  static override summary = 'Find overlapping write scopes between active agents (exit 1 when any).';
  static override description =
    'Reads {agents: [envelope…]} and prints {active, conflicts: [{agents, paths, relation}]}. Active agents are ' +
    'queued, working, idle or blocked. Two write scopes overlap when their canonical paths are equal or one is ' +
    'an ancestor of the other by whole components ("src/a" and "src/ab" do not overlap; "." is the whole ' +
    'repository). Read scopes never conflict.';
  static override examples = [
    '<%= config.bin %> agent-state conflicts agents.json --json',
    'cat agents.json | <%= config.bin %> agent-state conflicts',
  ];
  static override args = inputArg;

  async run(): Promise<JsonValue> {
    const { args } = await this.parse(AgentStateConflicts);
    return runOperation('conflicts', args.file, (line) => this.log(line));
  }
}
