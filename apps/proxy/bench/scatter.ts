/**
 * Scatter-gather figures on one machine, three PostgreSQL regions plus a reference server holding
 * every row: latency of a count over three regions against the same count on one server, the
 * k-way merge's throughput in the proxy, and the proxy's memory growth while it merges.
 * Prints figures; asserts nothing.
 *
 *   pnpm exec tsx bench/scatter.ts [counts] [rowsPerRegion]
 */
import { connect } from "node:net";
import { BackendCode, BackendFramer, encodeQuery, encodeStartupMessage, isProtocolFault } from "@geo/proto";
import pg from "pg";
import { REGIONS } from "../test/support/fake-regions.js";
import { startScatterRegions } from "../test/support/scatter-regions.js";

const counts = Number(process.argv[2] ?? 500);
const rowsPerRegion = Number(process.argv[3] ?? 40_000);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function latency(port: number, database: string, sql: string): Promise<{ p50: number; p99: number }> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database });
  await client.connect();
  for (let i = 0; i < 50; i++) await client.query(sql);
  const times: number[] = [];
  for (let i = 0; i < counts; i++) {
    const t0 = process.hrtime.bigint();
    await client.query(sql);
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  await client.end();
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** Runs a query on a bare socket, counting DataRows without keeping them. */
function countRows(port: number, database: string, sql: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const framer = new BackendFramer();
    let rows = 0;
    let sent = false;
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(encodeStartupMessage({ parameters: { user: "postgres", database } }));
    });
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      framer.push(chunk);
      for (let frame = framer.next(); frame !== null; frame = framer.next()) {
        if (isProtocolFault(frame)) return reject(new Error(frame.message));
        if (frame.code === BackendCode.DataRow) rows++;
        else if (frame.code === BackendCode.ErrorResponse) reject(new Error(frame.payload.toString()));
        else if (frame.code === BackendCode.ReadyForQuery) {
          if (!sent) {
            sent = true;
            socket.write(encodeQuery({ sql }));
          } else {
            socket.end();
            resolve(rows);
          }
        }
      }
    });
  });
}

const regions = await startScatterRegions();
try {
  for (const [i, region] of REGIONS.entries()) {
    const key = regions.entries.find(([, home]) => home === region)![0];
    await regions.direct[region].query(
      `INSERT INTO measures (tenant_id, id, qty, price) SELECT '${key}', 1000 + g, (g * 7919 + ${i}) % 1000003, g / 7.0 FROM generate_series(1, ${rowsPerRegion}) g; ANALYZE measures`,
    );
  }
  const referencePort = regions.cluster.servers[0]!.port;
  const countSql = "SELECT count(*) FROM orders";
  const viaProxy = await latency(regions.proxy.port, "shop", countSql);
  const oneServer = await latency(referencePort, "reference", countSql);
  const oneRegion = await latency(
    regions.proxy.port,
    "shop",
    "SELECT count(*) FROM orders WHERE tenant_id = 'alice'",
  );
  console.log(
    `count over three regions (${counts} runs): p50 ${viaProxy.p50.toFixed(0)} us, p99 ${viaProxy.p99.toFixed(0)} us`,
  );
  console.log(
    `same count on one server:            p50 ${oneServer.p50.toFixed(0)} us, p99 ${oneServer.p99.toFixed(0)} us`,
  );
  console.log(
    `one region's count through geoproxy:  p50 ${oneRegion.p50.toFixed(0)} us, p99 ${oneRegion.p99.toFixed(0)} us`,
  );

  const mergeSql = "SELECT tenant_id, id, qty, price FROM measures ORDER BY qty, id";
  for (const round of [1, 2]) {
    global.gc?.();
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let peakHeap = before.heapUsed;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peakRss = Math.max(peakRss, now.rss);
      peakHeap = Math.max(peakHeap, now.heapUsed);
    }, 20);
    const started = process.hrtime.bigint();
    const rows = await countRows(regions.proxy.port, "shop", mergeSql);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    clearInterval(sampler);
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    console.log(
      `k-way merge round ${round}: ${rows} rows from three regions in ${seconds.toFixed(2)} s = ${Math.round(rows / seconds)} rows/s; RSS growth ${mb(peakRss - before.rss)} MiB, heap growth ${mb(peakHeap - before.heapUsed)} MiB`,
    );
  }
} finally {
  await regions.close();
}
