/**
 * COPY FROM STDIN of many rows over three regions through geoproxy (each row split to its key's
 * region, the three COPYs committed in two phases) against the same COPY straight into one of
 * the servers, in the same run, and the proxy's resident memory while it streams (the proxy runs
 * as a child process, so its RSS is its own). The client sends as fast as the proxy reads, with
 * backpressure; rows are generated as they are sent. Prints figures; asserts nothing.
 *
 *   pnpm exec tsx bench/copy.ts [rows]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  BackendFramer,
  encodeCopyData,
  encodeCopyDone,
  encodeQuery,
  encodeStartupMessage,
  encodeTerminate,
  isProtocolFault,
} from "@geo/proto";
import { startCluster } from "@geo/testkit";
import pg from "pg";

const rows = Number(process.argv[2] ?? 1_000_000);
const KEYS = 300;
const CHUNK = 64 * 1024;
const MB = 1024 * 1024;
const REGIONS = ["eu-west", "us-east", "ap-south"];
const TABLE =
  "CREATE TABLE loads (tenant_id text NOT NULL, id int8 NOT NULL, note text, qty int8, PRIMARY KEY (tenant_id, id));";

const cluster = await startCluster({
  count: 3,
  initSql: `${TABLE}\nCREATE TABLE direct_loads (LIKE loads INCLUDING ALL);`,
  settings: { max_prepared_transactions: "16" },
});
const work = mkdtempSync(join(tmpdir(), "geo-copy-bench-"));
const keys = join(work, "keys.tsv");
writeFileSync(keys, Array.from({ length: KEYS }, (_, k) => `k${k}\t${REGIONS[k % 3]}\n`).join(""));
const config = join(work, "geoproxy.toml");
writeFileSync(
  config,
  `[server]
host = "127.0.0.1"
port = 0

${REGIONS.map(
  (id, i) => `[[topology.regions]]
id = "${id}"
${i === 0 ? "home = true\n" : ""}primary = { host = "127.0.0.1", port = ${cluster.servers[i]!.port}, database = "postgres", user = "postgres" }
`,
).join("\n")}
[[tables]]
table = "loads"
placement = "geo_partitioned"
key = "tenant_id"

[txn]
data_dir = "${join(work, "txn")}"
`,
);
const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const proxy = spawn(
  process.execPath,
  ["--import", "tsx", cli, "serve", "--config", config, "--directory", keys, "--log-level", "info"],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const proxyPort = await new Promise<number>((resolve, reject) => {
  let out = "";
  proxy.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    const match = /"port":(\d+),[^\n]*"msg":"geoproxy listening"/.exec(out);
    if (match) resolve(Number(match[1]));
  });
  proxy.once("exit", (code) => reject(new Error(`proxy exited with ${code}: ${out}`)));
});

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0") * 1024;
}

/** The rows, text format, as CopyData messages of about CHUNK bytes, made as they are sent. */
function* copyMessages(): Generator<Buffer> {
  let parts: string[] = [];
  let size = 0;
  for (let i = 0; i < rows; i++) {
    const line = `k${i % KEYS}\t${i}\tnote number ${i} for the load\t${i * 7}\n`;
    parts.push(line);
    size += line.length;
    if (size >= CHUNK) {
      yield encodeCopyData({ data: Buffer.from(parts.join("")) });
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield encodeCopyData({ data: Buffer.from(parts.join("")) });
}

/** One COPY over a bare socket; resolves with the time from the statement to its CommandComplete. */
function copyOver(port: number, sql: string): Promise<{ ms: number; bytes: number; tag: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const framer = new BackendFramer();
    let ready = 0;
    let started = 0;
    let bytes = 0;
    let tag = "";
    const send = (messages: Generator<Buffer>): void => {
      for (let next = messages.next(); !next.done; next = messages.next()) {
        bytes += next.value.length - 5;
        if (!socket.write(next.value)) {
          socket.once("drain", () => send(messages));
          return;
        }
      }
      socket.write(encodeCopyDone());
    };
    socket.on("error", reject);
    socket.on("connect", () => socket.write(encodeStartupMessage({ parameters: { user: "postgres" } })));
    socket.on("data", (chunk: Buffer) => {
      framer.push(chunk);
      for (let frame = framer.next(); frame !== null; frame = framer.next()) {
        if (isProtocolFault(frame)) return reject(new Error(frame.message));
        if (frame.code === 0x45) return reject(new Error(`error: ${frame.payload.toString("latin1")}`));
        if (frame.code === 0x47) send(copyMessages());
        if (frame.code === 0x43) tag = frame.payload.toString("latin1", 0, frame.payload.length - 1);
        if (frame.code !== 0x5a) continue;
        ready++;
        if (ready === 1) {
          started = performance.now();
          socket.write(encodeQuery({ sql }));
        } else {
          const ms = performance.now() - started;
          socket.end(encodeTerminate());
          resolve({ ms, bytes, tag });
        }
      }
    });
  });
}

function report(name: string, run: { ms: number; bytes: number; tag: string }): void {
  const seconds = run.ms / 1000;
  console.log(
    `${name.padEnd(34)} ${run.tag.padEnd(12)} ${(rows / seconds).toFixed(0).padStart(9)} rows/s ${(run.bytes / MB / seconds).toFixed(1).padStart(7)} MB/s  (${seconds.toFixed(2)} s, ${(run.bytes / MB).toFixed(1)} MB)`,
  );
}

const direct = await copyOver(cluster.servers[0]!.port, "COPY direct_loads FROM STDIN");
const before = rssOf(proxy.pid!);
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, rssOf(proxy.pid!));
}, 20);
const proxied = await copyOver(proxyPort, "COPY loads FROM STDIN");
clearInterval(sampler);
peak = Math.max(peak, rssOf(proxy.pid!));

console.log(`COPY FROM STDIN of ${rows} rows (text format), three regions, 2 cores shared`);
report("straight into one server", direct);
report("through geoproxy, split over 3", proxied);
console.log(
  `proxy RSS: ${(before / MB).toFixed(1)} MB before, ${(peak / MB).toFixed(1)} MB at most during the COPY (+${((peak - before) / MB).toFixed(1)} MB)`,
);
const counts: number[] = [];
for (const server of cluster.servers) {
  const client = new pg.Client({ host: "127.0.0.1", port: server.port, user: "postgres" });
  await client.connect();
  counts.push((await client.query("SELECT count(*)::int AS n FROM loads")).rows[0].n as number);
  await client.end();
}
console.log(`rows per region: ${counts.join(", ")}`);

const exited = new Promise((resolve) => proxy.once("exit", resolve));
proxy.kill("SIGTERM");
await exited;
await cluster.stop();
