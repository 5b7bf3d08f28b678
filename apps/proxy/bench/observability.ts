/**
 * What the metrics add to each statement on the proxy's path: one `routed` call when the route is
 * decided and one `afterMessage` at the end of the exchange, against a session whose answers are
 * already written (the usual case). Also what one /metrics scrape costs with three pools. Prints
 * figures; asserts nothing.
 *
 *   pnpm exec tsx bench/observability.ts [statements]
 */
import { ProxyMetrics } from "@geo/admin";
import { FrontendCode } from "@geo/proto";
import { Analyzer } from "@geo/sql";
import { ObservedClient } from "../src/observability/observed-client.js";
import { RouteBook } from "../src/observability/route-book.js";
import type { Route } from "../src/routing/router.js";
import type { Session } from "../src/session/session.js";

const statements = Number(process.argv[2] ?? 2_000_000);
const regions = ["eu-west", "us-east", "ap-south"];

/** The fields of a session the observer reads on the statement path. */
const session = { id: 1, relay: { pending: 0 } } as unknown as Session;
const metrics = new ProxyMetrics({ node: "bench", homeRegion: "eu-west", regions, processMetrics: false });
const client = new ObservedClient(session, metrics, "eu-west");
const routes: Route[] = regions.map((region) => ({
  kind: "region",
  region,
  readOnly: true,
  anywhere: false,
}));

// The same, with each route written in the recent decisions (a cached shape, as nearly always).
const analyzer = await Analyzer.create({ keyColumns: new Map([["users", "tenant_id"]]) });
analyzer.analyze("SELECT name FROM users WHERE tenant_id = 'alice'");
const analyses = ["alice", "bob", "chandra"].map((key) =>
  analyzer.analyze(`SELECT name FROM users WHERE tenant_id = '${key}'`),
);
const recording = new ObservedClient(session, metrics, "eu-west", {
  book: new RouteBook(),
  analysisOf: (route) => analyses[routes.indexOf(route)],
});

function run(count: number, observed: ObservedClient = client): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    observed.routed(routes[i % 3]!);
    observed.afterMessage(FrontendCode.Query);
  }
  return Number(process.hrtime.bigint() - started) / count;
}

run(200_000);
const perStatement = run(statements);
run(200_000, recording);
const perRecorded = run(statements, recording);
metrics.setCollectors({
  pools: () =>
    regions.map((region, i) => ({
      endpoint: `10.0.0.${i}:5432`,
      region,
      idle: 3,
      busy: 2,
      waiting: 0,
      max: 20,
    })),
});
for (let i = 0; i < 50; i++) await metrics.render();
const scrapes = 500;
const scrapeStart = process.hrtime.bigint();
for (let i = 0; i < scrapes; i++) await metrics.render();
const perScrape = Number(process.hrtime.bigint() - scrapeStart) / scrapes / 1000;

console.log(`statements observed: ${statements.toLocaleString("en")}`);
console.log(`routed + afterMessage per statement: ${perStatement.toFixed(0)} ns`);
console.log(`the same, recording the route by shape: ${perRecorded.toFixed(0)} ns`);
console.log(`one /metrics render (3 pools): ${perScrape.toFixed(0)} µs`);
