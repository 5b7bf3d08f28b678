import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";
import { connectDirect, MOVE_SCHEMA } from "./support/move-regions.js";
import { ProxyChild } from "./support/proxy-child.js";

// Proxies as real processes over three real servers: a proxy whose directory changes (a
// [directory_store] that is not shared) must be the only one routing its geo-partitioned tables,
// since nothing tells another proxy of its moves and new keys (shared-directory.e2e covers shared).
let cluster: PgCluster;
let direct: Record<RegionName, pg.Client>;
let folder: string;
let directoryFile: string;
const running: ProxyChild[] = [];

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
  direct = await connectDirect(cluster);
  folder = await mkdtemp(join(tmpdir(), "geo-directory-claim-"));
  directoryFile = join(folder, "keys.tsv");
  await writeFile(directoryFile, "alice\teu-west\nbob\tus-east\n");
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((child) => child.stop()));
});

afterAll(async () => {
  for (const client of Object.values(direct ?? {})) await client.end().catch(() => undefined);
  await cluster?.stop();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

/** A proxy named `node` over the three servers; `store` is its [directory_store] section, if any. */
async function launch(node: string, store?: string): Promise<ProxyChild> {
  const data = await mkdtemp(join(folder, "txn-"));
  const toml = regionsToml(
    cluster.servers.map((s) => s.port),
    `\n[txn]\ndata_dir = "${data}"\n${store === undefined ? "" : `\n[directory_store]\n${store}\n`}`,
  ).replace("[server]\n", `[server]\nnode = "${node}"\n`);
  const configPath = join(data, "geoproxy.toml");
  await writeFile(configPath, toml);
  const args = ["--config", configPath, "--log-level", "info"];
  const child = new ProxyChild(store === undefined ? [...args, "--directory", directoryFile] : args);
  running.push(child);
  return child;
}

function refusals(stderr: string): string[] {
  return stderr
    .trim()
    .split("\n")
    .filter((line) => line.startsWith("geoproxy: "));
}

function regionOf(line: string): string | undefined {
  return /in region ([a-z-]+)/.exec(line)?.[1];
}

/** A write and a read of one key through the proxy on `port`: it still serves. */
async function serves(port: number, key: string): Promise<boolean> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  await client.connect();
  try {
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, 'x') ON CONFLICT DO NOTHING", [
      key,
    ]);
    const rows = await client.query("SELECT name FROM users WHERE tenant_id = $1", [key]);
    return rows.rows.length === 1;
  } finally {
    await client.end();
  }
}

/** The sessions holding the directory claim of `node` in a region. */
async function claimSessions(region: RegionName, node: string): Promise<number> {
  const result = await direct[region].query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name IN ($1, $2)",
    [`geoproxy store ${node}`, `geoproxy tables ${node}`],
  );
  return result.rows[0].n as number;
}

describe("one proxy per directory store", () => {
  it("refuses a second proxy over the same directory store, naming the table, each region, the holder and why", async () => {
    const first = await launch("first", "");
    const port = await first.listening();
    // The same table, spelt schema-qualified.
    const second = await launch("second", 'table = "public.geoproxy_directory"');
    expect(await second.exitCode()).toBe(69);
    const lines = refusals(second.stderr);
    expect(lines.map(regionOf).sort()).toEqual([...REGIONS].sort());
    for (const line of lines) {
      expect(line).toMatch(
        /^geoproxy: \[directory_store\] table public\.geoproxy_directory is in use in region /,
      );
      expect(line).toContain('application_name "geoproxy store first"');
      expect(line).toContain("shared = true in every one of them");
    }
    // Nothing of the refused one is left behind, and the first goes on serving.
    for (const region of REGIONS) expect(await claimSessions(region, "second")).toBe(0);
    expect(await serves(port, "kept")).toBe(true);
  });

  it("refuses a second directory store over the same geo-partitioned tables, even in another table", async () => {
    const first = await launch("left", "");
    await first.listening();
    const second = await launch("right", 'table = "other_directory"');
    expect(await second.exitCode()).toBe(69);
    const lines = refusals(second.stderr);
    expect(lines).toHaveLength(REGIONS.length);
    expect(lines[0]).toMatch(
      /the geo-partitioned tables public\.orders, public\.users are routed in region /,
    );
    expect(lines[0]).toContain('application_name "geoproxy store left"');
  });

  it("refuses a proxy with a fixed directory beside one whose directory store moves keys, and the other way round", async () => {
    const store = await launch("mover", "");
    const storePort = await store.listening();
    const fixed = await launch("follower");
    expect(await fixed.exitCode()).toBe(69);
    expect(refusals(fixed.stderr)[0]).toMatch(
      /the geo-partitioned tables public\.orders, public\.users are under the \[directory_store\] of another live proxy \(pid \d+, application_name "geoproxy store mover"/,
    );
    expect(await serves(storePort, "still")).toBe(true);
    await store.stop();

    const reader = await launch("reader");
    await reader.listening();
    const late = await launch("mover", "");
    expect(await late.exitCode()).toBe(69);
    expect(refusals(late.stderr)[0]).toMatch(
      /routed in region [a-z-]+ by another live proxy \(pid \d+, application_name "geoproxy tables reader"/,
    );
  });

  it("runs several proxies with fixed directories together: none of them changes where keys live", async () => {
    const a = await launch("fixed-a");
    const b = await launch("fixed-b");
    const [portA, portB] = await Promise.all([a.listening(), b.listening()]);
    expect(await serves(portA, "alice")).toBe(true);
    expect(await serves(portB, "bob")).toBe(true);
  });

  it("starts a proxy over the directory store of one killed with SIGKILL: the claim died with its sessions", async () => {
    const first = await launch("doomed", "");
    await first.listening();
    expect(await claimSessions("eu-west", "doomed")).toBe(1);
    await first.kill();
    const next = await launch("heir", "");
    expect(await serves(await next.listening(), "heir-key")).toBe(true);
  });
});
