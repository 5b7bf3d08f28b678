import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  BackendFramer,
  encodeQuery,
  encodeStartupMessage,
  encodeTerminate,
  isProtocolFault,
} from "@geo/proto";
import { type PgCluster, startCluster } from "@geo/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { regionsToml } from "./support/fake-regions.js";

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const MB = 1024 * 1024;

let cluster: PgCluster;
let proxy: ChildProcess;
let port = 0;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0");
  return kb * 1024;
}

beforeAll(async () => {
  cluster = await startCluster({ count: 1 });
  const server = cluster.servers[0]!;
  const config = join(tmpdir(), `geoproxy-memory-${process.pid}.toml`);
  writeFileSync(config, regionsToml([server.port, server.port, server.port]));
  proxy = spawn(process.execPath, ["--import", "tsx", cli, "serve", "--config", config], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  port = await new Promise<number>((resolve, reject) => {
    let out = "";
    proxy.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /"port":(\d+),[^\n]*"msg":"geoproxy listening"/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    proxy.once("exit", (code) => reject(new Error(`proxy exited with ${code}: ${out}`)));
  });
});

afterAll(async () => {
  if (proxy !== undefined && proxy.exitCode === null) {
    const exited = new Promise((resolve) => proxy.once("exit", resolve));
    proxy.kill("SIGTERM");
    await exited;
  }
  await cluster?.stop();
});

/** Runs one query over a bare socket, reading slowly, and returns how many bytes came back. */
function stream(sql: string, onProgress: () => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const framer = new BackendFramer();
    let bytes = 0;
    let ready = 0;
    let sinceNap = 0;
    socket.on("error", reject);
    socket.on("connect", () => socket.write(encodeStartupMessage({ parameters: { user: "postgres" } })));
    socket.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      sinceNap += chunk.length;
      framer.push(chunk);
      for (let frame = framer.next(); frame !== null; frame = framer.next()) {
        if (isProtocolFault(frame)) return reject(new Error(frame.message));
        if (frame.code === 0x45) return reject(new Error("error from the proxy"));
        if (frame.code !== 0x5a) continue;
        ready++;
        if (ready === 1) socket.write(encodeQuery({ sql }));
        else {
          socket.end(encodeTerminate());
          resolve(bytes);
          return;
        }
      }
      // A client slower than the server: the proxy must hold off the backend, not buffer for it.
      if (sinceNap > 4 * MB) {
        sinceNap = 0;
        onProgress();
        socket.pause();
        setTimeout(() => socket.resume(), 15);
      }
    });
  });
}

it("streams a 500 MB result through a slow client while the proxy's RSS grows by less than 64 MB", async () => {
  await stream("SELECT 1", () => undefined);
  await stream("SELECT repeat('w', 1000) FROM generate_series(1, 20000)", () => undefined);
  const baseline = rssOf(proxy.pid!);
  let peak = baseline;
  const sample = () => {
    peak = Math.max(peak, rssOf(proxy.pid!));
  };
  const timer = setInterval(sample, 25);
  const bytes = await stream("SELECT repeat('x', 1000) FROM generate_series(1, 520000)", sample);
  clearInterval(timer);
  sample();
  const growth = peak - baseline;
  console.log(
    `streamed ${(bytes / MB).toFixed(0)} MB; proxy RSS ${(baseline / MB).toFixed(1)} MB -> peak ${(peak / MB).toFixed(1)} MB (+${(growth / MB).toFixed(1)} MB)`,
  );
  expect(bytes).toBeGreaterThan(500 * MB);
  expect(growth).toBeLessThan(64 * MB);
}, 180_000);
