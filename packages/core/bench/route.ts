/**
 * Routing decision costs: analysis from the warm cache plus the plan, and directory lookups.
 * Prints figures, asserts nothing. Run: pnpm --filter @geo/core run bench
 */
import { fileURLToPath } from "node:url";
import { Analyzer } from "@geo/sql";
import {
  loadConfig,
  loadDirectoryTsv,
  MemoryDirectory,
  plan,
  schemaInfoFor,
  Topology,
} from "../src/index.js";

const examples = fileURLToPath(new URL("../../../examples/", import.meta.url));
const config = loadConfig(`${examples}topology.toml`);
const topology = Topology.fromConfig(config);
const directory = loadDirectoryTsv(`${examples}keys.tsv`, topology);
const regions = topology.regionIds;
for (let index = 0; index < 256; index++)
  directory.assign(`tenant-${index}`, regions[index % regions.length]!);

const analyzer = await Analyzer.create({ ...schemaInfoFor(topology), cacheSize: 4096 });

let sink = 0;

/** Median of rounds, each timing `iterations` calls (each doing `perCall` operations), in nanoseconds per operation. */
function measure(name: string, iterations: number, body: (iteration: number) => unknown, perCall = 1): void {
  for (let warm = 0; warm < iterations; warm++) body(warm);
  const rounds: number[] = [];
  for (let round = 0; round < 9; round++) {
    const start = process.hrtime.bigint();
    for (let iteration = 0; iteration < iterations; iteration++) {
      if (body(iteration) !== undefined) sink++;
    }
    rounds.push(Number(process.hrtime.bigint() - start) / (iterations * perCall));
  }
  rounds.sort((left, right) => left - right);
  const median = rounds[4]!;
  const text = median >= 1000 ? `${(median / 1000).toFixed(2)} µs` : `${median.toFixed(0)} ns`;
  console.log(
    `${name.padEnd(58)} ${text.padStart(10)}   (min ${rounds[0]!.toFixed(0)} ns, max ${rounds[8]!.toFixed(0)} ns)`,
  );
}

const context = { topology, directory };

const pointRead = "SELECT * FROM users WHERE tenant_id = 'alice'";
measure("point read: cached analysis + plan", 200_000, () => plan(analyzer.analyze(pointRead), context));

const inlined = Array.from(
  { length: 256 },
  (_, index) => `SELECT id, name FROM users WHERE tenant_id = 'tenant-${index}'`,
);
measure("256 distinct inlined literals: cached analysis + plan", 200_000, (iteration) =>
  plan(analyzer.analyze(inlined[iteration & 255]!), context),
);

const pointAnalysis = analyzer.analyze(pointRead);
measure("point read: plan alone", 1_000_000, () => plan(pointAnalysis, context));
measure("point read: cached analysis alone", 200_000, () => analyzer.analyze(pointRead));

const large = new MemoryDirectory();
const keyCount = 1_000_000;
for (let index = 0; index < keyCount; index++)
  large.assign(`tenant-${index}`, regions[index % regions.length]!);
const probes = Array.from({ length: 65_536 }, (_, index) => `tenant-${(index * 2_654_435_761) % keyCount}`);
// The loop is inside the timed body so a call through `measure` does not count against a ~100 ns operation.
const lookups = 1_000_000;
measure(
  "directory lookup among 1,000,000 keys",
  1,
  () => {
    let found = 0;
    for (let iteration = 0; iteration < lookups; iteration++) {
      if (large.lookup(probes[iteration & 65_535]!) !== undefined) found++;
    }
    return found;
  },
  lookups,
);

const twoRegionWrite = "INSERT INTO users (tenant_id, name) VALUES ('alice', 'a'), ('bob', 'b')";
measure("distributed write, two regions: cached analysis + plan", 200_000, () =>
  plan(analyzer.analyze(twoRegionWrite), context),
);
measure("distributed write, two regions: + both regions' INSERT text", 20_000, () => {
  const decided = plan(analyzer.analyze(twoRegionWrite), context);
  return decided.kind === "distributed-write"
    ? decided.statements.map((statement) => statement.sql)
    : decided;
});

if (sink < 0) console.log(sink);
