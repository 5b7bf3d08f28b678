import { MemoryDirectory, parseConfig } from "@geo/core";
import { FakeBackend, type FakeBackendOptions } from "@geo/testkit";
import { type RunningProxy, startProxy } from "../../src/index.js";
import { txnSection } from "./txn-data-dir.js";

export const REGIONS = ["eu-west", "us-east", "ap-south"] as const;
export type RegionName = (typeof REGIONS)[number];

/** Keys placed one per region, as in examples/keys.tsv. */
export const KEYS: Record<string, RegionName> = { alice: "eu-west", bob: "us-east", chandra: "ap-south" };

export interface FakeRegions {
  readonly proxy: RunningProxy;
  readonly fakes: Record<RegionName, FakeBackend>;
  close(): Promise<void>;
}

/** A geoproxy TOML for three regions at the given ports (eu-west is home); `server`: more `[server]` lines. */
export function regionsToml(ports: readonly number[], extra = "", server = ""): string {
  const regions = REGIONS.map(
    (id, i) => `[[topology.regions]]
id = "${id}"
${i === 0 ? "home = true\n" : ""}primary = { host = "127.0.0.1", port = ${ports[i]}, database = "postgres", user = "postgres" }
`,
  ).join("\n");
  // Each proxy its own decision log directory (created only by a two-phase commit), never the working directory.
  const txn = extra.includes("[txn]") ? "" : txnSection();
  return `[server]
host = "127.0.0.1"
port = 0
${server}

${regions}
[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "orders"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "currencies"
placement = "global_replicated"

[[tables]]
table = "eu_audit"
placement = "pinned"
region = "eu-west"
${extra}${txn}`;
}

/** Three fake backends as regions behind a proxy listening on a free port. */
export async function startFakeRegions(
  options: Partial<Record<RegionName, FakeBackendOptions>> & { readonly extraToml?: string } = {},
): Promise<FakeRegions> {
  const list = await Promise.all(REGIONS.map((region) => FakeBackend.start(options[region] ?? {})));
  const fakes = Object.fromEntries(REGIONS.map((region, i) => [region, list[i]!])) as Record<
    RegionName,
    FakeBackend
  >;
  const config = parseConfig(
    regionsToml(
      list.map((fake) => fake.port),
      options.extraToml ?? "",
    ),
    "test.toml",
  );
  const directory = new MemoryDirectory(Object.entries(KEYS));
  const proxy = await startProxy({
    config,
    directory,
    logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
  return {
    proxy,
    fakes,
    async close() {
      await proxy.close({ timeoutMs: 200 });
      await Promise.all(list.map((fake) => fake.close()));
    },
  };
}
