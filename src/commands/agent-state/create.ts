import { BaseCommand } from '../_base.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import { inputArg, runOperation } from './_operation.js';

export default class AgentStateCreate extends BaseCommand {
  static override summary = "Build an agent-state envelope v1 from the builder's arguments.";
  static override description =
    'Reads {agent_id, backend, task_id?, state, blocked_reason?, state_source?, scopes?: [{path, access}], ' +
    'capabilities?: {name: authority}, revision?, result?} and prints the complete envelope: version 1, every ' +
    'capability of the matrix (resume, fork, read_transcript, send_message, switch_model, mutate_workspace) with ' +
    'the undeclared ones as "unknown", state_source "unknown" and revision 0 when omitted. Scope paths are ' +
    'canonical repository-relative paths ("." is the whole repository). Input is strict JSON ' +
    '(docs/schemas/agent-state-create-v1.schema.json).';
  static override examples = [
    'echo ' +
      '\'{"agent_id":"builder","backend":"codex","task_id":"task-1","state":"working","state_source":"native",' +
      '"scopes":[{"path":"src/parser","access":"write"}],' +
      '"capabilities":{"send_message":"native","mutate_workspace":"native"}}\' ' +
      '| <%= config.bin %> agent-state create --json',
    '<%= config.bin %> agent-state create builder.json',
  ];
  static override args = inputArg;

  async run(): Promise<JsonValue> {
    const { args } = await this.parse(AgentStateCreate);
    return runOperation('create', args.file, (line) => this.log(line));
  }
}
