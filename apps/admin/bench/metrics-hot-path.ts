/**
 * What the admin side costs the proxy: the per-statement metric calls, one scrape, and one
 * dashboard update. Prints figures; asserts nothing.
 *
 *   pnpm exec tsx bench/metrics-hot-path.ts
 */
import { History } from "../src/dashboard/history.js";
import { renderLive } from "../src/dashboard/render-dashboard.js";
import { ProxyMetrics } from "../src/index.js";
import { FakeSource, REGIONS } from "../test/fake-source.js";

function timeIt(label: string, iterations: number, run: (i: number) => void): void {
  for (let i = 0; i < Math.min(iterations, 10_000); i++) run(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) run(i);
  const elapsed = Number(process.hrtime.bigint() - start);
  console.log(
    `${label.padEnd(58)} ${(elapsed / iterations).toFixed(1).padStart(10)} ns/op  (${iterations} ops)`,
  );
}

async function timeAsync(label: string, iterations: number, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 20; i++) await run();
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await run();
  const elapsed = Number(process.hrtime.bigint() - start);
  console.log(
    `${label.padEnd(58)} ${(elapsed / iterations / 1000).toFixed(1).padStart(10)} µs/op  (${iterations} ops)`,
  );
}

const metrics = new ProxyMetrics({
  node: "bench",
  homeRegion: "eu-west",
  regions: REGIONS,
  processMetrics: false,
});
const source = new FakeSource(metrics);
metrics.setCollectors({
  cache: () => source.cache(),
  pools: () => source.pools(),
  regions: () => source.regions(),
  alerts: () => source.alerts,
});
const home = ["eu-west"] as const;
const two = ["eu-west", "us-east"] as const;

timeIt("observeStatement(one_region)", 2_000_000, (i) =>
  metrics.observeStatement("one_region", (i % 50) / 10_000),
);
timeIt("countRegions([home])", 2_000_000, () => metrics.countRegions(home));
timeIt("countRegions([home, other])", 2_000_000, () => metrics.countRegions(two));
timeIt("countError(known SQLSTATE)", 2_000_000, () => metrics.countError("0A000"));
timeIt("one statement: observe + countRegions", 2_000_000, (i) => {
  metrics.observeStatement("one_region", (i % 50) / 10_000);
  metrics.countRegions(home);
});

const text = await metrics.render();
await timeAsync(`scrape /metrics text (${text.length} bytes, no process metrics)`, 2_000, () =>
  metrics.render(),
);

const history = new History();
for (let i = 0; i < 60; i++) history.push(source.snapshot(), i * 1000);
const fragment = renderLive({ snapshot: source.snapshot(), history });
await timeAsync(`dashboard update: snapshot + render (${fragment.length} bytes)`, 2_000, async () =>
  renderLive({ snapshot: source.snapshot(), history }),
);
