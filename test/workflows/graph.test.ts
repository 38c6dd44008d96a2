/**
 * Step graph: uniqueness, existence, acyclicity and a stable topological order
 * (docs/skill-workflows.md "The definition").
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';

import { orderSteps } from '../../src/workflows/graph.js';

// Fixtures mutate nested JSON and inspect thrown errors freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const ids = (nodes: { id: string }[], order: number[]): string[] => order.map((i) => (nodes[i] as { id: string }).id);

test('a definition already in dependency order keeps its declared order', () => {
  const nodes = [
    { id: 'a', needs: [] },
    { id: 'b', needs: ['a'] },
    { id: 'c', needs: [] },
    { id: 'd', needs: ['b', 'c'] },
  ];
  assert.deepEqual(ids(nodes, orderSteps(nodes)), ['a', 'b', 'c', 'd']);
});

test('a dependency declared later moves before its dependent; ties keep declaration order', () => {
  const nodes = [
    { id: 'deploy', needs: ['test', 'lint'] },
    { id: 'lint', needs: [] },
    { id: 'test', needs: ['build'] },
    { id: 'build', needs: [] },
  ];
  assert.deepEqual(ids(nodes, orderSteps(nodes)), ['lint', 'build', 'test', 'deploy']);
});

test('duplicate ids, duplicate needs, self needs, unknown needs and cycles are WORKFLOW_GRAPH_INVALID', () => {
  const cases: [{ id: string; needs: string[] }[], RegExp][] = [
    [
      [
        { id: 'a', needs: [] },
        { id: 'a', needs: [] },
      ],
      /declared more than once/,
    ],
    [
      [
        { id: 'a', needs: [] },
        { id: 'b', needs: ['a', 'a'] },
      ],
      /twice/,
    ],
    [[{ id: 'a', needs: ['a'] }], /itself/],
    [[{ id: 'a', needs: ['missing'] }], /"missing", which is not a step/],
    [
      [
        { id: 'a', needs: ['c'] },
        { id: 'b', needs: ['a'] },
        { id: 'c', needs: ['b'] },
        { id: 'd', needs: [] },
      ],
      /cycle among steps "a", "b", "c"/,
    ],
  ];
  for (const [nodes, message] of cases) {
    assert.throws(
      () => orderSteps(nodes),
      (error: Loose) => error.code === 'WORKFLOW_GRAPH_INVALID' && message.test(error.message),
    );
  }
});

test('property: for any DAG in any declaration order, the order respects every dependency and is deterministic', () => {
  const dag = fc.integer({ min: 1, max: 32 }).chain((n) =>
    fc.tuple(
      fc.constant(n),
      fc.array(fc.array(fc.nat({ max: 31 }), { maxLength: 6 }), { minLength: n, maxLength: n }),
      fc.shuffledSubarray(
        Array.from({ length: n }, (_, i) => i),
        { minLength: n, maxLength: n },
      ),
    ),
  );
  fc.assert(
    fc.property(dag, ([n, rawNeeds, permutation]) => {
      // Node i may only need nodes < i in the hidden order: acyclic by construction.
      const hidden = Array.from({ length: n }, (_, i) => ({
        id: `n${i}`,
        needs: [...new Set((rawNeeds[i] ?? []).filter((j) => j < i))].map((j) => `n${j}`),
      }));
      const declared = permutation.map((i) => hidden[i] as { id: string; needs: string[] });
      const order = orderSteps(declared);
      assert.deepEqual(orderSteps(declared), order);
      assert.equal(new Set(order).size, n);
      const position = new Map(order.map((index, at) => [(declared[index] as { id: string }).id, at]));
      for (const node of declared)
        for (const need of node.needs) assert.ok((position.get(need) ?? -1) < (position.get(node.id) ?? -1));
    }),
    { numRuns: 300 },
  );
});
