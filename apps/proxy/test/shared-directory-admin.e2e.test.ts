import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ProxySnapshot } from "@geo/admin";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseScrape, type Scrape } from "./admin-prometheus.js";
import type { RegionName } from "./support/fake-regions.js";
import type { ProxyChild } from "./support/proxy-child.js";
import { LEASE_MS, SHARED_STORE, SharedProxies, until } from "./support/shared-proxies.js";

// Proxies as real processes over three real servers, sharing one directory whose authority is
// eu-west, each with its admin port: what SHOW PEERS tells the console, /metrics, /snapshot and
// the dashboard tell Prometheus and operators.
const proxies = new SharedProxies("geo-shared-directory-admin-");

beforeAll(() => proxies.start());
beforeEach(() => proxies.reset());
afterEach(() => proxies.stopProxies());
afterAll(() => proxies.close());

/**
 * A proxy named `node`, homed in `home`, over the three servers with `store` as its
 * [directory_store] and an admin port on a free port of loopback.
 */
function launch(node: string, home: RegionName, store = SHARED_STORE): Promise<ProxyChild> {
  return proxies.launch(node, home, { store, sections: "[admin]\nport = 0\n" });
}

const connect = (port: number): Promise<pg.Client> => proxies.connect(port);

/** The admin port's URL, from the line it logs at start (before the proxy's own port listens). */
async function adminUrl(child: ProxyChild): Promise<string> {
  await child.listening();
  const port = /"port":(\d+)[^\n]*"msg":"admin port listening"/.exec(child.stdout)?.[1];
  if (port === undefined) throw new Error(`no admin port in: ${child.output()}`);
  return `http://127.0.0.1:${port}`;
}

async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  return parseScrape(await response.text());
}

async function snapshot(url: string): Promise<ProxySnapshot> {
  const response = await fetch(`${url}/snapshot`);
  expect(response.status).toBe(200);
  return (await response.json()) as ProxySnapshot;
}

/** The dashboard's Peers section, or "" when the page has none. */
async function peersSection(url: string): Promise<string> {
  const response = await fetch(`${url}/`);
  expect(response.status).toBe(200);
  return /<section id="peers">.*?<\/section>/s.exec(await response.text())?.[0] ?? "";
}

function byLease(scraped: Scrape): Record<string, number | undefined> {
  return Object.fromEntries(
    ["held", "lapsing", "lapsed"].map((lease) => [
      lease,
      scraped.value("geoproxy_directory_peers", { lease }),
    ]),
  );
}

/** docs/admin.md's example of `shared`, the JSON block that starts with it. */
function documentedShared(): unknown {
  const doc = readFileSync(fileURLToPath(new URL("../../../docs/admin.md", import.meta.url)), "utf8");
  const example = /```json\n(\{\s*"shared"[\s\S]*?)\n```/.exec(doc)?.[1];
  if (example === undefined) throw new Error("docs/admin.md has no example of shared");
  return (JSON.parse(example) as { shared: unknown }).shared;
}

/** A JSON value's field names as paths (an array by its first element). */
function fieldPaths(value: unknown, path = ""): string[] {
  if (Array.isArray(value)) return value.length === 0 ? [] : fieldPaths(value[0], `${path}[]`);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => [
    `${path}.${key}`,
    ...fieldPaths(inner, `${path}.${key}`),
  ]);
}

describe("a shared directory on the admin port", () => {
  it("counts both proxies held in /metrics of each, with a lease younger than lease_ms and no move holding keys", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const b = await launch("us-proxy", "us-east");
    const [urlA, urlB] = await Promise.all([adminUrl(a), adminUrl(b)]);
    for (const url of [urlA, urlB]) {
      await until(
        async () => (await scrape(url)).value("geoproxy_directory_peers", { lease: "held" }) === 2,
        5000,
      );
      const scraped = await scrape(url);
      expect(byLease(scraped)).toEqual({ held: 2, lapsing: 0, lapsed: 0 });
      expect(scraped.types.get("geoproxy_directory_lease_age_seconds")).toBe("gauge");
      const age = scraped.value("geoproxy_directory_lease_age_seconds");
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(LEASE_MS / 1000);
      expect(scraped.value("geoproxy_move_holds", { by: "this_proxy" })).toBe(0);
      expect(scraped.value("geoproxy_move_holds", { by: "peers" })).toBe(0);
    }
  });

  it("carries shared in /snapshot with both nodes, their homes and leases, this proxy marked", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const b = await launch("us-proxy", "us-east");
    const [url] = await Promise.all([adminUrl(a), adminUrl(b)]);
    await until(async () => ((await snapshot(url)).shared?.peers.length ?? 0) === 2, 5000);
    const shared = (await snapshot(url)).shared!;
    expect(shared.authority).toBe("eu-west");
    expect(shared.leaseMs).toBe(LEASE_MS);
    expect(shared.leaseAgeMs).not.toBeNull();
    expect(shared.leaseAgeMs!).toBeLessThan(LEASE_MS);
    expect(shared.peers.map((peer) => [peer.node, peer.home, peer.lease, peer.thisProxy])).toEqual([
      ["eu-proxy", "eu-west", "held", true],
      ["us-proxy", "us-east", "held", false],
    ]);
    expect(shared.peers[1]!.heartbeatAgeMs!).toBeLessThan(LEASE_MS);
    expect(shared.movesHeld).toEqual({ own: 0, peers: 0 });
    expect(fieldPaths(shared).sort(), "docs/admin.md's example of shared").toEqual(
      fieldPaths(documentedShared()).sort(),
    );
  });

  it("lists both node names in the dashboard's Peers section, and a killed peer there and in /metrics as lapsed", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const b = await launch("us-proxy", "us-east");
    const [url] = await Promise.all([adminUrl(a), adminUrl(b)]);
    await until(async () => (await peersSection(url)).includes("<td>us-proxy</td>"), 5000);
    const section = await peersSection(url);
    expect(section).toContain("<h2>Peers (2)</h2>");
    expect(section).toContain("authority <strong>eu-west</strong>");
    expect(section).toMatch(
      /<tr class="this-proxy"><td>eu-proxy<\/td><td>eu-west<\/td>.*?<td class="lease-held">held<\/td>/,
    );
    expect(section).toMatch(/<tr><td>us-proxy<\/td><td>us-east<\/td>.*?<td class="lease-held">held<\/td>/);

    // Killed, it cannot take its heartbeat out of the authority: the row ages past 1.5 x lease_ms.
    await b.kill();
    await until(async () => byLease(await scrape(url)).lapsed === 1, 5000);
    expect(byLease(await scrape(url))).toEqual({ held: 1, lapsing: 0, lapsed: 1 });
    expect(await peersSection(url)).toMatch(
      /<tr><td>us-proxy<\/td><td>us-east<\/td>.*?<td class="lease-lapsed">lapsed<\/td>/,
    );
  });

  it("shows nothing of it on a proxy whose directory store is not shared", async () => {
    const alone = await launch("alone", "eu-west", "");
    const url = await adminUrl(alone);
    await connect(alone.port);
    expect((await snapshot(url)).shared).toBeUndefined();
    expect(await peersSection(url)).toBe("");
    const scraped = await scrape(url);
    for (const name of [
      "geoproxy_directory_lease_age_seconds",
      "geoproxy_directory_peers",
      "geoproxy_move_holds",
    ])
      expect(scraped.all(name), name).toEqual([]);
  });
});
