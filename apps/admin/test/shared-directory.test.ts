import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { History } from "../src/dashboard/history.js";
import { renderLive } from "../src/dashboard/render-dashboard.js";
import {
  ProxyMetrics,
  type RunningAdminServer,
  type SharedDirectoryStatus,
  startAdminServer,
} from "../src/index.js";
import { FakeSource, REGIONS } from "./fake-source.js";
import { get } from "./http.js";
import { type Family, parsePrometheusText } from "./prometheus-text.js";

/** Three proxies: this one, a live peer, and one whose heartbeat stopped; two moves held here. */
const SHARED: SharedDirectoryStatus = {
  authority: "eu-west",
  leaseMs: 5000,
  leaseAgeMs: 250,
  peers: [
    {
      node: "eu-proxy",
      home: "eu-west",
      heartbeatAgeMs: 240,
      lease: "held",
      sessions: 7,
      moves: 1,
      thisProxy: true,
    },
    {
      node: "us-<proxy>",
      home: "us-east",
      heartbeatAgeMs: 5400,
      lease: "lapsing",
      sessions: 2,
      moves: 0,
      thisProxy: false,
    },
    {
      node: "ap-proxy",
      home: "ap-south",
      heartbeatAgeMs: 61_000,
      lease: "lapsed",
      sessions: 0,
      moves: 1,
      thisProxy: false,
    },
  ],
  movesHeld: { own: 1, peers: 1 },
};

function newMetrics(): ProxyMetrics {
  return new ProxyMetrics({
    node: "eu-proxy",
    homeRegion: "eu-west",
    regions: REGIONS,
    processMetrics: false,
  });
}

async function families(metrics: ProxyMetrics): Promise<Map<string, Family>> {
  return parsePrometheusText(await metrics.render());
}

function samples(
  found: Map<string, Family>,
  name: string,
): { labels: Record<string, string>; value: number }[] {
  return (found.get(name)?.samples ?? []).map((sample) => ({ labels: sample.labels, value: sample.value }));
}

const SERIES = ["geoproxy_directory_lease_age_seconds", "geoproxy_directory_peers", "geoproxy_move_holds"];

describe("a shared directory in /metrics", () => {
  it("exports this proxy's lease age, the peers by lease state and the moves holding keys here", async () => {
    const metrics = newMetrics();
    metrics.setCollectors({ shared: () => SHARED });
    const found = await families(metrics);
    expect(found.get("geoproxy_directory_lease_age_seconds")?.type).toBe("gauge");
    expect(samples(found, "geoproxy_directory_lease_age_seconds")).toEqual([{ labels: {}, value: 0.25 }]);
    expect(samples(found, "geoproxy_directory_peers")).toEqual([
      { labels: { lease: "held" }, value: 1 },
      { labels: { lease: "lapsing" }, value: 1 },
      { labels: { lease: "lapsed" }, value: 1 },
    ]);
    expect(samples(found, "geoproxy_move_holds")).toEqual([
      { labels: { by: "this_proxy" }, value: 1 },
      { labels: { by: "peers" }, value: 1 },
    ]);
  });

  it("counts every lease state, at 0 when no proxy is in it", async () => {
    const metrics = newMetrics();
    const held = SHARED.peers.map((peer) => ({ ...peer, lease: "held" as const }));
    metrics.setCollectors({ shared: () => ({ ...SHARED, peers: held, movesHeld: { own: 0, peers: 3 } }) });
    const found = await families(metrics);
    expect(samples(found, "geoproxy_directory_peers")).toEqual([
      { labels: { lease: "held" }, value: 3 },
      { labels: { lease: "lapsing" }, value: 0 },
      { labels: { lease: "lapsed" }, value: 0 },
    ]);
    expect(samples(found, "geoproxy_move_holds")).toEqual([
      { labels: { by: "this_proxy" }, value: 0 },
      { labels: { by: "peers" }, value: 3 },
    ]);
  });

  it("leaves the lease age out before the first visit got through, not 0", async () => {
    const metrics = newMetrics();
    metrics.setCollectors({ shared: () => ({ ...SHARED, leaseAgeMs: null }) });
    const found = await families(metrics);
    expect(samples(found, "geoproxy_directory_lease_age_seconds")).toEqual([]);
    expect(samples(found, "geoproxy_directory_peers")).toHaveLength(3);
  });

  it("has none of the series without the collector, or while the directory is not shared", async () => {
    const without = newMetrics();
    const notShared = newMetrics();
    notShared.setCollectors({ shared: () => undefined });
    for (const metrics of [without, notShared]) {
      const found = await families(metrics);
      for (const name of SERIES) expect(samples(found, name), name).toEqual([]);
    }
  });

  it("reads the collector once per scrape, and leaves its series out and counts the failure when it throws", async () => {
    const metrics = newMetrics();
    let reads = 0;
    metrics.setCollectors({
      shared: () => {
        reads += 1;
        return SHARED;
      },
    });
    await metrics.render();
    expect(reads).toBe(1);
    metrics.setCollectors({
      shared: () => {
        throw new Error("authority view not readable");
      },
    });
    const found = await families(metrics);
    for (const name of SERIES) expect(samples(found, name), name).toEqual([]);
    expect(samples(found, "geoproxy_metric_collect_failures_total")).toEqual([
      { labels: { collector: "shared" }, value: 1 },
    ]);
  });
});

describe("a shared directory on the dashboard", () => {
  const history = new History();

  it("shows no Peers section while the directory is not shared", () => {
    const source = new FakeSource(newMetrics());
    const html = renderLive({ snapshot: source.snapshot(), history });
    expect(html).not.toContain('id="peers"');
    expect(html).not.toContain("Peers");
  });

  it("lists every peer with its home, heartbeat age, lease, sessions and moves, this proxy marked, escaped", () => {
    const source = new FakeSource(newMetrics());
    source.shared = SHARED;
    const html = renderLive({ snapshot: source.snapshot(), history });
    const section = /<section id="peers">.*?<\/section>/s.exec(html)?.[0] ?? "";
    expect(section).toContain("<h2>Peers (3)</h2>");
    expect(section).toContain("authority <strong>eu-west</strong>");
    expect(section).toContain('<span data-live="lease-age">250 ms old</span> (lease_ms 5,000)');
    expect(section).toContain('<span data-live="moves-held-own">1</span> of this proxy');
    expect(section).toContain('<span data-live="moves-held-peers">1</span> of peers');
    expect(section).toContain(
      '<tr class="this-proxy"><td>eu-proxy</td><td>eu-west</td><td class="num">240 ms</td>' +
        '<td class="lease-held">held</td><td class="num">7</td><td class="num">1</td><td>this proxy</td></tr>',
    );
    expect(section).toContain(
      '<tr><td>us-&lt;proxy&gt;</td><td>us-east</td><td class="num">5400 ms</td><td class="lease-lapsing">lapsing</td>',
    );
    expect(section).toContain('<td class="num">61.0 s</td><td class="lease-lapsed">lapsed</td>');
    expect(section).not.toContain("<proxy>");
  });

  it("says so when no visit to the authority got through yet", () => {
    const source = new FakeSource(newMetrics());
    source.shared = {
      ...SHARED,
      leaseAgeMs: null,
      peers: [{ ...SHARED.peers[0]!, heartbeatAgeMs: null, lease: "lapsed" }],
    };
    const html = renderLive({ snapshot: source.snapshot(), history });
    expect(html).toContain('<span data-live="lease-age">no visit got through yet</span>');
    expect(html).toContain('<td class="num">—</td><td class="lease-lapsed">lapsed</td>');
  });
});

describe("a shared directory through the admin port", () => {
  let metrics: ProxyMetrics;
  let source: FakeSource;
  let admin: RunningAdminServer;

  beforeAll(async () => {
    metrics = newMetrics();
    source = new FakeSource(metrics);
    source.shared = SHARED;
    metrics.setCollectors({ shared: () => source.shared });
    admin = await startAdminServer({ host: "127.0.0.1", port: 0, source, metrics, updateIntervalMs: 100 });
  });

  afterAll(async () => {
    await admin.close();
  });

  it("carries the status in /snapshot, the Peers section on /, and the series in /metrics", async () => {
    const snapshot = JSON.parse((await get(`${admin.url}/snapshot`)).body);
    expect(snapshot.shared).toEqual(SHARED);
    expect((await get(`${admin.url}/`)).body).toContain("<h2>Peers (3)</h2>");
    const found = parsePrometheusText((await get(`${admin.url}/metrics`)).body);
    expect(samples(found, "geoproxy_directory_peers")).toHaveLength(3);
  });

  it("refreshes the Peers table in the live updates as peers come and go", async () => {
    const controller = new AbortController();
    const response = await fetch(`${admin.url}/events`, { signal: controller.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    const until = async (text: string): Promise<void> => {
      while (!seen.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${text}`);
        seen += value;
      }
    };
    await until("<td>ap-proxy</td>");
    seen = "";
    source.shared = {
      ...SHARED,
      peers: [...SHARED.peers.slice(0, 2), { ...SHARED.peers[2]!, node: "ap-proxy-2", lease: "held" }],
    };
    await until("<td>ap-proxy-2</td>");
    expect(seen).not.toContain("<td>ap-proxy</td>");
    source.shared = SHARED;
    controller.abort();
  });

  it("drops the field, the section and the series once the directory is not shared", async () => {
    source.shared = undefined;
    const snapshot = JSON.parse((await get(`${admin.url}/snapshot`)).body);
    const html = (await get(`${admin.url}/`)).body;
    const found = parsePrometheusText((await get(`${admin.url}/metrics`)).body);
    source.shared = SHARED;
    expect("shared" in snapshot).toBe(false);
    expect(html).not.toContain('id="peers"');
    for (const name of SERIES) expect(samples(found, name), name).toEqual([]);
  });
});
