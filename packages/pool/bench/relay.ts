/**
 * Relay throughput of one BackendConnection against real PostgreSQL: a large result framed and
 * handed to a receiver that only counts bytes (what the proxy does before writing to its client).
 * Usage: pnpm exec tsx bench/relay.ts [rows] [runs]
 */
import { BackendCode, encodeQuery } from "@geo/proto";
import { startCluster } from "@geo/testkit";
import { BackendConnection } from "../src/index.js";

const rows = Number(process.argv[2] ?? 1_000_000);
const runs = Number(process.argv[3] ?? 5);

await using cluster = await startCluster({ count: 1 });
const server = cluster.servers[0]!;
const connection = await BackendConnection.connect({
  host: server.host,
  port: server.port,
  database: "postgres",
  user: "postgres",
  connectTimeoutMs: 5_000,
});

const sql = `SELECT g, repeat('x', 100) FROM generate_series(1, ${rows}) g`;
const results: { mibPerSecond: number; framesPerSecond: number }[] = [];
for (let run = 0; run < runs; run++) {
  let bytes = 0;
  let frames = 0;
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve) => {
    connection.setReceiver({
      onFrame(frame) {
        bytes += frame.bytes.length;
        frames++;
        if (frame.code === BackendCode.ReadyForQuery) resolve();
      },
    });
    connection.write(encodeQuery({ sql }));
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  results.push({ mibPerSecond: bytes / 1048576 / seconds, framesPerSecond: frames / seconds });
}
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(`relay of ${rows.toLocaleString("en-US")} rows (~120 B each), median of ${runs} runs:`);
console.log(`  ${median(results.map((r) => r.mibPerSecond)).toFixed(1)} MiB/s`);
console.log(
  `  ${Math.round(median(results.map((r) => r.framesPerSecond))).toLocaleString("en-US")} frames/s`,
);
connection.setReceiver(null);
await connection.close();
