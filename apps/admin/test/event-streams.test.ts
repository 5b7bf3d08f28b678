import { type ClientRequest, type IncomingMessage, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyMetrics, type RunningAdminServer, startAdminServer } from "../src/index.js";
import { eventFrame } from "../src/server/event-streams.js";
import { FakeSource, REGIONS, runStatement } from "./fake-source.js";
import { basic } from "./http.js";

interface OpenStream {
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly request: ClientRequest;
  /** Resolves with the data of the next `update` event. */
  nextUpdate(): Promise<string>;
}

function openStream(url: string, headers: Record<string, string> = {}): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/events`, { agent: false, headers }, (res) => {
      let buffered = "";
      const waiting: ((data: string) => void)[] = [];
      const updates: string[] = [];
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffered += chunk;
        for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const lines = block.split("\n");
          if (!lines.includes("event: update")) continue;
          const data = lines
            .filter((l) => l.startsWith("data: "))
            .map((l) => l.slice(6))
            .join("\n");
          const waiter = waiting.shift();
          if (waiter === undefined) updates.push(data);
          else waiter(data);
        }
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        request: req,
        nextUpdate: () =>
          new Promise((done) => {
            const ready = updates.shift();
            if (ready === undefined) waiting.push(done);
            else done(ready);
          }),
      });
    });
    req.on("error", reject);
    req.end();
  });
}

let metrics: ProxyMetrics;
let admin: RunningAdminServer;

beforeAll(async () => {
  metrics = new ProxyMetrics({
    node: "geo-test",
    homeRegion: "eu-west",
    regions: REGIONS,
    processMetrics: false,
  });
  admin = await startAdminServer({
    host: "127.0.0.1",
    port: 0,
    source: new FakeSource(metrics),
    metrics,
    password: "s3cret",
    updateIntervalMs: 100,
  });
});

afterAll(async () => {
  await admin.close();
});

function statementsTotal(fragment: string): number {
  const match = /data-live="statements-total">([\d,]+)</.exec(fragment);
  if (match?.[1] === undefined) throw new Error("no statements-total in the update");
  return Number(match[1].replaceAll(",", ""));
}

describe("the live event stream", () => {
  it("streams server-rendered updates that follow the proxy's numbers", async () => {
    const stream = await openStream(admin.url, basic("s3cret"));
    expect(stream.status).toBe(200);
    expect(stream.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(stream.headers["content-security-policy"]).toContain("default-src 'none'");
    const first = statementsTotal(await stream.nextUpdate());
    for (let i = 0; i < 25; i++) runStatement(metrics, i);
    let latest = first;
    while (latest === first) latest = statementsTotal(await stream.nextUpdate());
    expect(latest).toBe(first + 25);
    stream.request.destroy();
  });

  it("needs the password like every other page", async () => {
    const stream = await openStream(admin.url);
    expect(stream.status).toBe(401);
    stream.request.destroy();
  });

  it("holds at most 16 streams: the 17th is refused with 503, and a closed one frees its place", async () => {
    const streams = await Promise.all(
      Array.from({ length: 16 }, () => openStream(admin.url, basic("s3cret"))),
    );
    expect(streams.map((s) => s.status)).toEqual(Array(16).fill(200));
    await Promise.all(streams.map((s) => s.nextUpdate()));
    expect(admin.eventStreams).toBe(16);
    const refused = await openStream(admin.url, basic("s3cret"));
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("5");
    refused.request.destroy();

    streams[0]?.request.destroy();
    for (let i = 0; i < 50 && admin.eventStreams > 15; i++) await new Promise((r) => setTimeout(r, 20));
    const again = await openStream(admin.url, basic("s3cret"));
    expect(again.status).toBe(200);
    for (const stream of [...streams, again]) stream.request.destroy();
  });

  it("writes a multi-line payload as one data line per line", () => {
    expect(eventFrame("update", "a\nb\r\nc")).toBe("event: update\ndata: a\ndata: b\ndata: c\n\n");
  });
});
