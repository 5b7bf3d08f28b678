import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CONTENT_SECURITY_POLICY,
  ProxyMetrics,
  type RunningAdminServer,
  startAdminServer,
} from "../src/index.js";
import { FakeSource, REGIONS, runStatement } from "./fake-source.js";
import { get } from "./http.js";
import { parsePrometheusText } from "./prometheus-text.js";

let metrics: ProxyMetrics;
let source: FakeSource;
let admin: RunningAdminServer;

beforeAll(async () => {
  metrics = new ProxyMetrics({
    node: "geo-test",
    homeRegion: "eu-west",
    regions: REGIONS,
    processMetrics: false,
  });
  source = new FakeSource(metrics);
  metrics.setCollectors({ pools: () => source.pools(), regions: () => source.regions() });
  for (let i = 0; i < 50; i++) runStatement(metrics, i);
  admin = await startAdminServer({ host: "127.0.0.1", port: 0, source, metrics, readyTimeoutMs: 200 });
});

afterAll(async () => {
  await admin.close();
});

describe("admin endpoints", () => {
  it("serves /metrics in the Prometheus text format with the proxy's counts", async () => {
    const answer = await get(`${admin.url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusText(answer.body);
    const count = families
      .get("geoproxy_statement_duration_seconds")
      ?.samples.filter((s) => s.name.endsWith("_count"))
      .reduce((sum, s) => sum + s.value, 0);
    expect(count).toBe(50);
    expect(families.get("geoproxy_backend_up")?.samples.length).toBe(4);
  });

  it("serves /snapshot as the source's JSON", async () => {
    const answer = await get(`${admin.url}/snapshot`);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    const snapshot = JSON.parse(answer.body);
    expect(snapshot.node).toBe("geo-test");
    expect(snapshot.homeRegion).toBe("eu-west");
    expect(snapshot.traffic.statements).toBe(50);
    expect(snapshot.regions.map((r: { id: string }) => r.id)).toEqual(["eu-west", "us-east", "ap-south"]);
    expect(snapshot.transactions.inDoubt[0].gid).toBe("geo_17_3");
  });

  it("answers /key/<table>/<key> with the region holding the key", async () => {
    const answer = await get(`${admin.url}/key/users/bob`);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      table: "users",
      key: "bob",
      region: "us-east",
      state: "resident",
    });
  });

  it("passes a key with an encoded slash and space through whole", async () => {
    const answer = await get(`${admin.url}/key/users/${encodeURIComponent("al/ice smith")}`);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).key).toBe("al/ice smith");
  });

  it("answers 404 with the SQLSTATE and hint for a table with no placement", async () => {
    const answer = await get(`${admin.url}/key/nope/alice`);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({
      error: "no placement for table nope",
      sqlstate: "42P01",
      hint: "add a [[tables]] entry",
    });
  });

  it("answers 400 for a key the source cannot read, and for a missing key", async () => {
    const bad = await get(`${admin.url}/key/users/bad`);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).sqlstate).toBe("22P02");
    const missing = await get(`${admin.url}/key/users/`);
    expect(missing.status).toBe(400);
  });

  it("answers /healthz 200 when ready, 503 when not, and 503 when ready() does not answer in time", async () => {
    source.readyAnswer = true;
    expect((await get(`${admin.url}/healthz`)).status).toBe(200);
    source.readyAnswer = false;
    const down = await get(`${admin.url}/healthz`);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.body)).toEqual({ ready: false });
    source.readyAnswer = "hang";
    expect((await get(`${admin.url}/healthz`)).status).toBe(503);
    source.readyAnswer = true;
  });

  it("renders the dashboard on the server, readable without scripts", async () => {
    const answer = await get(`${admin.url}/`);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8");
    const html = answer.body;
    expect(html).toContain('<noscript><meta http-equiv="refresh" content="5"></noscript>');
    expect(html).toContain('data-live="statements-total">50<');
    expect(html).toContain("eu-west (home)");
    expect(html).toContain('class="health-down">down<');
    expect(html).toContain("4.0 KiB");
    expect(html).toContain("geo_17_3");
    expect(html).toMatch(/<svg class="bars"[^>]*>.*<rect class="bar down"/s);
    expect(html).toContain('<svg class="sparkline"');
    expect(html).toContain('<svg class="occupancy"');
    expect(html.match(/<script/g)?.length).toBe(1);
  });

  it("shows alerts on the dashboard, escaped", async () => {
    source.alerts = [{ name: "backend_down", subject: "ap.db:5432", message: "<b>gone</b>", since: "now" }];
    const html = (await get(`${admin.url}/`)).body;
    source.alerts = [];
    expect(html).toContain("Alerts (1)");
    expect(html).toContain("&lt;b&gt;gone&lt;/b&gt;");
    expect(html).not.toContain("<b>gone</b>");
  });

  it("shows the drifted tables on the dashboard: their count, each region that differs and how, escaped", async () => {
    expect((await get(`${admin.url}/`)).body).toContain('data-live="schema-drift-tables">0<');
    source.schemaDrift = {
      checkedAt: "2026-01-01T10:00:00.000Z",
      reference: "eu-west",
      tables: [
        {
          table: "public.orders",
          regions: [
            { region: "ap-south", status: "missing", detail: "no table public.orders in ap-south" },
            { region: "us-east", status: "differs", detail: "extra column <note> text" },
          ],
        },
      ],
    };
    const html = (await get(`${admin.url}/`)).body;
    source.schemaDrift = { checkedAt: null, reference: null, tables: [] };
    expect(html).toContain('data-live="schema-drift-tables">1<');
    expect(html).toContain("Schema drift (1)");
    expect(html).toContain("Compared with eu-west at 10:00:00.");
    expect(html).toContain('<td rowspan="2">public.orders</td><td>ap-south</td><td>missing</td>');
    expect(html).toContain("<td>us-east</td><td>differs</td><td>extra column &lt;note&gt; text</td>");
  });

  it("sends the same Content-Security-Policy on every response, found or not", async () => {
    for (const path of [
      "/",
      "/metrics",
      "/snapshot",
      "/healthz",
      "/key/users/a",
      "/key/nope/a",
      "/missing",
    ]) {
      const answer = await get(`${admin.url}${path}`);
      expect(answer.headers["content-security-policy"], path).toBe(CONTENT_SECURITY_POLICY);
      expect(answer.headers["x-content-type-options"], path).toBe("nosniff");
    }
    expect(CONTENT_SECURITY_POLICY).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+=*';/);
  });

  it("answers an unknown path with 404 JSON and refuses methods other than GET and HEAD", async () => {
    const missing = await get(`${admin.url}/nothing-here`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body).code).toBe("not_found");
    const post = await get(`${admin.url}/metrics`, { method: "POST" });
    expect(post.status).toBe(404);
    const head = await get(`${admin.url}/healthz`, { method: "HEAD" });
    expect(head.status).toBe(200);
  });

  it("answers 500 without details when the source throws", async () => {
    const original = source.snapshot.bind(source);
    source.snapshot = () => {
      throw new Error("secret internals");
    };
    const answer = await get(`${admin.url}/snapshot`);
    source.snapshot = original;
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain("secret internals");
  });
});
