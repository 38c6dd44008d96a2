/**
 * `npm run fuzz`: the long malformed-input campaign, 10,000 cases per wire type (FUZZ_RUNS to
 * change), printing per type the counts of crashes, hangs, wrong codes and wrongly accepted
 * inputs; exits 1 when any count is not zero. FUZZ_TYPE limits the run to the types whose id
 * contains it; FUZZ_SEED (and FUZZ_PATH) replay what a failing run printed.
 */
import { failed, reportLines, runCampaign, runsFromEnv, seedFromEnv } from './campaign.js';
import { uncoveredDecoders, wireTypes } from './wire-types.js';

const runs = runsFromEnv(10_000);
const seed = seedFromEnv();
const only = process.env.FUZZ_TYPE ?? '';
const path = process.env.FUZZ_PATH === undefined || process.env.FUZZ_PATH === '' ? undefined : process.env.FUZZ_PATH;
const types = wireTypes().filter((t) => only === '' || t.id.includes(only));
if (types.length === 0) {
  console.error(`no wire type id contains ${JSON.stringify(only)}`);
  process.exit(2);
}

console.log(
  `malformed-input campaign: ${types.length} wire types, ${path === undefined ? runs : 1} cases each, seed ${seed}${path === undefined ? '' : `, path ${path}`}`,
);
let failing = 0;
const uncovered = only === '' ? uncoveredDecoders() : [];
if (uncovered.length > 0) {
  failing++;
  console.log(
    `registered decoders without seeds in test/hostile/fuzz/wire-types.ts (not fuzzed): ${uncovered.join(', ')}`,
  );
}
for (const type of types) {
  const report = runCampaign(type, runs, seed, path);
  if (failed(report)) failing++;
  for (const line of reportLines(report)) console.log(line);
}
console.log(
  failing === 0
    ? 'all counts are zero'
    : `${failing} failing (of ${types.length} wire types${uncovered.length > 0 ? ', and the uncovered decoders' : ''})`,
);
process.exitCode = failing === 0 ? 0 : 1;
