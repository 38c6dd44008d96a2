/**
 * The dependency graph of a workflow definition (docs/skill-workflows.md "The definition":
 * dependencies must exist, be unique and form an acyclic graph; the compiler uses a stable
 * topological order).
 * Pure: no I/O, so the same order is derived by plan, run, resume and requirement compile.
 */
import { AgentscmError } from '../contracts/errors.js';

export interface GraphNode {
  readonly id: string;
  readonly needs: readonly string[];
}

/**
 * Stable topological order: among the steps whose dependencies are all placed, the one
 * declared first goes next. The same definition therefore always compiles to the same order,
 * and a definition already in dependency order keeps its declared order.
 * Returns the declared indexes in execution order.
 */
export function orderSteps(nodes: readonly GraphNode[]): number[] {
  const indexOf = new Map<string, number>();
  nodes.forEach((node, index) => {
    if (indexOf.has(node.id)) {
      throw new AgentscmError('WORKFLOW_GRAPH_INVALID', `step id "${node.id}" is declared more than once`, {
        hint: 'give every step a unique id',
        details: { step: node.id },
      });
    }
    indexOf.set(node.id, index);
  });
  const pendingNeeds = new Array<number>(nodes.length).fill(0);
  const dependents: number[][] = nodes.map(() => []);
  nodes.forEach((node, index) => {
    const seen = new Set<string>();
    for (const need of node.needs) {
      if (seen.has(need)) {
        throw new AgentscmError('WORKFLOW_GRAPH_INVALID', `step "${node.id}" lists dependency "${need}" twice`, {
          hint: 'list each dependency once',
          details: { step: node.id, need },
        });
      }
      seen.add(need);
      if (need === node.id) {
        throw new AgentscmError('WORKFLOW_GRAPH_INVALID', `step "${node.id}" depends on itself`, {
          hint: 'remove the step from its own needs',
          details: { step: node.id },
        });
      }
      const target = indexOf.get(need);
      if (target === undefined) {
        throw new AgentscmError(
          'WORKFLOW_GRAPH_INVALID',
          `step "${node.id}" needs "${need}", which is not a step of this workflow`,
          {
            hint: 'name only step ids declared in steps',
            details: { step: node.id, need },
          },
        );
      }
      (dependents[target] as number[]).push(index);
      pendingNeeds[index] = (pendingNeeds[index] as number) + 1;
    }
  });
  // At most 32 steps: a linear scan for the earliest ready step is cheaper than a heap.
  const placed = new Array<boolean>(nodes.length).fill(false);
  const order: number[] = [];
  while (order.length < nodes.length) {
    let next = -1;
    for (let i = 0; i < nodes.length; i++) {
      if (!placed[i] && pendingNeeds[i] === 0) {
        next = i;
        break;
      }
    }
    if (next === -1) {
      const cycle = nodes.filter((_, i) => !placed[i]).map((node) => node.id);
      throw new AgentscmError(
        'WORKFLOW_GRAPH_INVALID',
        `the dependencies form a cycle among steps ${cycle.map((id) => `"${id}"`).join(', ')}`,
        {
          hint: 'remove a dependency so that the graph is acyclic',
          details: { steps: cycle },
        },
      );
    }
    placed[next] = true;
    order.push(next);
    for (const dependent of dependents[next] as number[])
      pendingNeeds[dependent] = (pendingNeeds[dependent] as number) - 1;
  }
  return order;
}
