import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  BackendFramer,
  decodeBackendMessage,
  encodeQuery,
  encodeStartupMessage,
  encodeTerminate,
  isProtocolFault,
  PgError,
} from "@geo/proto";
import type { PgServer } from "@geo/testkit";
import { directoryTsv, REGIONS, TICKS_PER_REGION } from "./dataset.js";
import { fidelityConfigToml } from "./world.js";

/** The built geoproxy command line (`pnpm --filter @geo/proxy run build` makes it). */
export const PROXY_CLI = fileURLToPath(new URL("../../../apps/proxy/dist/cli.js", import.meta.url));

export const MERGE_SQL = "SELECT n, payload FROM ticks ORDER BY n";

export interface MergeMemoryResult {
  readonly rows: number;
  /** True when every row's n was one more than the previous one's: the merge interleaved the regions in order. */
  readonly inOrder: boolean;
  readonly bytes: number;
  readonly baselineRssKb: number;
  readonly peakRssKb: number;
  readonly endRssKb: number;
  readonly growthKb: number;
  readonly elapsedMs: number;
}

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`geoproxy exited with ${child.exitCode}: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await sleep(50);
  }
  throw new Error(`geoproxy did not listen on ${port} within 20 s: ${log()}`);
}

/**
 * A client that reads slowly: after each chunk the socket is paused for `pauseMs`, so TCP's window
 * fills and the proxy has to stop pulling from the regions rather than hold what it cannot send.
 */
async function readSlowly(
  port: number,
  sql: string,
  pauseMs: number,
  onChunk: () => void,
): Promise<{ rows: number; inOrder: boolean; bytes: number }> {
  const socket: Socket = connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const framer = new BackendFramer();
  let rows = 0;
  let bytes = 0;
  let previous = 0;
  let inOrder = true;
  let readyCount = 0;
  let failure: Error | undefined;
  const done = new Promise<void>((resolve, reject) => {
    socket.on("error", reject);
    socket.on("close", () => reject(failure ?? new Error("the proxy closed the connection")));
    socket.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      framer.push(chunk);
      for (let frame = framer.next(); frame !== null; frame = framer.next()) {
        if (isProtocolFault(frame)) return reject(new Error(frame.message));
        const message = decodeBackendMessage(frame);
        if (isProtocolFault(message)) return reject(new Error(message.message));
        switch (message.type) {
          case "DataRow": {
            const n = Number(message.values[0]?.toString("latin1"));
            if (n !== previous + 1) inOrder = false;
            previous = n;
            rows++;
            break;
          }
          case "ErrorResponse":
            failure = PgError.fromFields(message.fields);
            break;
          case "ReadyForQuery":
            readyCount++;
            if (readyCount === 1) socket.write(encodeQuery({ sql }));
            else return failure === undefined ? resolve() : reject(failure);
            break;
          default:
            break;
        }
      }
      if (readyCount >= 1) {
        onChunk();
        socket.pause();
        setTimeout(() => socket.resume(), pauseMs);
      }
    });
  });
  socket.write(encodeStartupMessage({ parameters: { user: "postgres", database: "postgres" } }));
  try {
    await done;
  } finally {
    socket.end(encodeTerminate());
  }
  return { rows, inOrder, bytes };
}

/**
 * Starts geoproxy as a child process over the regions, warms it up, then reads the
 * `TICKS_PER_REGION * 3`-row merge slowly while sampling the child's RSS from /proc.
 */
export async function measureMergeMemory(
  regions: readonly PgServer[],
  pauseMs = 2,
): Promise<MergeMemoryResult> {
  const folder = mkdtempSync(join(tmpdir(), "geo-fidelity-"));
  const port = await freePort();
  writeFileSync(join(folder, "keys.tsv"), directoryTsv());
  writeFileSync(join(folder, "geoproxy.toml"), fidelityConfigToml(regions, port, "keys.tsv"));
  let output = "";
  const child = spawn(
    process.execPath,
    [PROXY_CLI, "serve", "--config", join(folder, "geoproxy.toml"), "--log-level", "warn"],
    { stdio: ["ignore", "pipe", "pipe"], cwd: folder },
  );
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  try {
    await waitForPort(port, child, () => output);
    const pid = child.pid!;
    // Warm-up: the pools open their connections and the code paths are compiled before the baseline.
    await readSlowly(port, "SELECT n, payload FROM ticks ORDER BY n LIMIT 2000", 0, () => {});
    await sleep(200);
    const baselineRssKb = rssKb(pid);
    let peakRssKb = baselineRssKb;
    let chunks = 0;
    const started = performance.now();
    const read = await readSlowly(port, MERGE_SQL, pauseMs, () => {
      if (++chunks % 8 === 0) peakRssKb = Math.max(peakRssKb, rssKb(pid));
    });
    const endRssKb = rssKb(pid);
    peakRssKb = Math.max(peakRssKb, endRssKb);
    return {
      ...read,
      baselineRssKb,
      peakRssKb,
      endRssKb,
      growthKb: peakRssKb - baselineRssKb,
      elapsedMs: performance.now() - started,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(folder, { recursive: true, force: true });
  }
}

export const MERGE_ROWS = TICKS_PER_REGION * REGIONS.length;
