/**
 * What the proxy costs per transaction on the single-region hot path: pgbench select-only at one
 * client, simple and prepared, directly against PostgreSQL and through geoproxy running in its own
 * process (`node dist/cli.js serve`). Prints tps and the proxy's CPU time (user + system, from
 * /proc/<pid>/stat) per transaction. Prints figures; asserts nothing. Needs a built dist/.
 *
 *   pnpm run bench:cpu [seconds] [rounds]
 *
 * CPU per transaction is the figure to compare between runs: tps moves with the machine's load,
 * the proxy's own work per transaction much less.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startCluster } from "@geo/testkit";

const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 2);
const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm run build\` first`);

const clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

function cpuSeconds(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name: state ppid ... utime(14) stime(15).
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`geoproxy exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const probe = spawn("pg_isready", ["-q", "-h", "127.0.0.1", "-p", String(port)]);
      probe.on("exit", (code) => resolve(code === 0));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("geoproxy did not start listening within 20 s");
}

interface Measured {
  tps: number;
  cpuMicrosPerTx: number | undefined;
}

function pgbench(port: number, mode: "simple" | "prepared", duration: number, proxyPid?: number): Measured {
  const before = proxyPid === undefined ? 0 : cpuSeconds(proxyPid);
  const output = execFileSync(
    "pgbench",
    [
      "-n",
      "-S",
      "-c",
      "1",
      "-j",
      "1",
      "-M",
      mode,
      "-T",
      String(duration),
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-U",
      "postgres",
      "postgres",
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  const after = proxyPid === undefined ? 0 : cpuSeconds(proxyPid);
  const transactions = Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? 0);
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1] ?? 0);
  return {
    tps,
    cpuMicrosPerTx:
      proxyPid === undefined || transactions === 0 ? undefined : ((after - before) * 1e6) / transactions,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const cluster = await startCluster({ count: 1 });
const server = cluster.servers[0]!;
const workDir = mkdtempSync(join(tmpdir(), "geo-bench-cpu-"));
let proxy: ChildProcess | undefined;
try {
  execFileSync(
    "pgbench",
    ["-i", "-q", "-s", "1", "-h", server.host, "-p", String(server.port), "-U", server.user, server.database],
    {
      stdio: "ignore",
    },
  );
  const port = await freePort();
  const config = join(workDir, "geoproxy.toml");
  const tables = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]
    .map((table) => `[[tables]]\ntable = "${table}"\nplacement = "pinned"\nregion = "local"\n`)
    .join("\n");
  writeFileSync(
    config,
    `[server]
host = "127.0.0.1"
port = ${port}

[[topology.regions]]
id = "local"
home = true
primary = { host = "${server.host}", port = ${server.port}, database = "${server.database}", user = "${server.user}" }

${tables}
[routing]
default_placement = { placement = "pinned", region = "local" }

[pool]
max = 4
`,
  );
  const extraNodeFlags = (process.env.GEO_BENCH_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "");
  proxy = spawn(
    process.execPath,
    [...extraNodeFlags, cli, "serve", "--config", config, "--log-level", "warn"],
    {
      stdio: ["ignore", "ignore", "inherit"],
      cwd: workDir,
    },
  );
  await waitForPort(port, proxy);
  const proxyPid = proxy.pid!;

  // Warm-up: opens the pooled connection and lets V8 compile the hot path before timing.
  pgbench(server.port, "simple", 2);
  pgbench(port, "simple", 3, proxyPid);
  pgbench(port, "prepared", 3, proxyPid);

  const results = new Map<string, Measured[]>();
  for (let round = 0; round < rounds; round++) {
    for (const mode of ["simple", "prepared"] as const) {
      for (const target of ["direct", "geoproxy"] as const) {
        const measured =
          target === "direct" ? pgbench(server.port, mode, seconds) : pgbench(port, mode, seconds, proxyPid);
        const key = `${mode} ${target}`;
        results.set(key, [...(results.get(key) ?? []), measured]);
      }
    }
  }
  console.log(
    `pgbench -S -c 1, ${seconds} s x ${rounds} rounds (medians), load average now ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
  );
  for (const mode of ["simple", "prepared"] as const) {
    const direct = results.get(`${mode} direct`)!;
    const geo = results.get(`${mode} geoproxy`)!;
    const directTps = median(direct.map((m) => m.tps));
    const geoTps = median(geo.map((m) => m.tps));
    const cpu = median(geo.map((m) => m.cpuMicrosPerTx ?? 0));
    console.log(
      `select-only ${mode.padEnd(8)}  direct ${directTps.toFixed(0).padStart(6)} tps  geoproxy ${geoTps.toFixed(0).padStart(6)} tps (${(geoTps / directTps).toFixed(2)}x)  proxy CPU ${cpu.toFixed(1)} µs/tx`,
    );
  }
} finally {
  proxy?.kill("SIGTERM");
  await cluster.stop();
  rmSync(workDir, { recursive: true, force: true });
}
