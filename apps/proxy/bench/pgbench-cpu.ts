/**
 * What the proxy costs per transaction on the single-region hot path: pgbench select-only at one
 * client, simple and prepared, directly against PostgreSQL and through geoproxy running in its own
 * process (`node dist/cli.js serve`), twice: with the fast lane (the default) and with
 * `fast_lane = false`, interleaved in each round so both see the same machine. Prints tps and the
 * proxy's CPU time (user + system, from /proc/<pid>/stat) per transaction. Prints figures;
 * asserts nothing. Needs a built dist/.
 *
 *   pnpm run bench:cpu [seconds] [rounds]
 *
 * GEO_BENCH_CLIENTS=16 runs pgbench with 16 clients (and 2 threads) instead of one, the proxies
 * with a pool of 20. GEO_BENCH_MODES=simple (or prepared) measures one protocol only, e.g. under
 * a profiler: GEO_BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=$PWD/prof" passes flags to the
 * proxies (they run in a temporary folder removed at the end, so the folder is an absolute path).
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

const modes = (process.env.GEO_BENCH_MODES ?? "simple prepared")
  .split(" ")
  .filter((mode): mode is "simple" | "prepared" => mode === "simple" || mode === "prepared");
const clients = Number(process.env.GEO_BENCH_CLIENTS ?? 1);
const clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** User and system CPU seconds of a process so far. */
function cpuSeconds(pid: number): { user: number; system: number } {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name: state ppid ... utime(14) stime(15).
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]) / clockTicks, system: Number(fields[12]) / clockTicks };
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
  userMicrosPerTx: number | undefined;
}

function pgbench(port: number, mode: "simple" | "prepared", duration: number, proxyPid?: number): Measured {
  const before = proxyPid === undefined ? undefined : cpuSeconds(proxyPid);
  const output = execFileSync(
    "pgbench",
    [
      "-n",
      "-S",
      "-c",
      String(clients),
      "-j",
      clients > 1 ? "2" : "1",
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
  const after = proxyPid === undefined ? undefined : cpuSeconds(proxyPid);
  const transactions = Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? 0);
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1] ?? 0);
  if (before === undefined || after === undefined || transactions === 0)
    return { tps, cpuMicrosPerTx: undefined, userMicrosPerTx: undefined };
  const user = after.user - before.user;
  const system = after.system - before.system;
  return {
    tps,
    cpuMicrosPerTx: ((user + system) * 1e6) / transactions,
    userMicrosPerTx: (user * 1e6) / transactions,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const cluster = await startCluster({ count: 1 });
const server = cluster.servers[0]!;
const workDir = mkdtempSync(join(tmpdir(), "geo-bench-cpu-"));
const proxies: ChildProcess[] = [];
try {
  execFileSync(
    "pgbench",
    ["-i", "-q", "-s", "1", "-h", server.host, "-p", String(server.port), "-U", server.user, server.database],
    {
      stdio: "ignore",
    },
  );
  const tables = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]
    .map((table) => `[[tables]]\ntable = "${table}"\nplacement = "pinned"\nregion = "local"\n`)
    .join("\n");
  const extraNodeFlags = (process.env.GEO_BENCH_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "");
  const startGeoproxy = async (name: string, fastLane: boolean): Promise<{ port: number; pid: number }> => {
    const port = await freePort();
    const config = join(workDir, `${name}.toml`);
    writeFileSync(
      config,
      `[server]
host = "127.0.0.1"
port = ${port}
node = "${name}"
fast_lane = ${fastLane}

[[topology.regions]]
id = "local"
home = true
primary = { host = "${server.host}", port = ${server.port}, database = "${server.database}", user = "${server.user}" }

${tables}
[routing]
default_placement = { placement = "pinned", region = "local" }

[pool]
max = ${clients > 1 ? 20 : 4}
`,
    );
    const child = spawn(
      process.execPath,
      [...extraNodeFlags, cli, "serve", "--config", config, "--log-level", "warn"],
      { stdio: ["ignore", "ignore", "inherit"], cwd: workDir },
    );
    proxies.push(child);
    await waitForPort(port, child);
    return { port, pid: child.pid! };
  };
  const targets = {
    geoproxy: await startGeoproxy("geoproxy", true),
    "no lane": await startGeoproxy("no-lane", false),
  };

  // Warm-up: opens the pooled connections and lets V8 compile the hot paths before timing.
  pgbench(server.port, "simple", 2);
  for (const target of Object.values(targets)) {
    for (const mode of modes) pgbench(target.port, mode, 3, target.pid);
  }

  const results = new Map<string, Measured[]>();
  const names = ["direct", "geoproxy", "no lane"] as const;
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      for (const target of names) {
        const measured =
          target === "direct"
            ? pgbench(server.port, mode, seconds)
            : pgbench(targets[target].port, mode, seconds, targets[target].pid);
        const key = `${mode} ${target}`;
        results.set(key, [...(results.get(key) ?? []), measured]);
      }
    }
  }
  console.log(
    `pgbench -S -c ${clients}, ${seconds} s x ${rounds} rounds (medians), load average now ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
  );
  for (const mode of modes) {
    const directTps = median(results.get(`${mode} direct`)!.map((m) => m.tps));
    const figures = (["geoproxy", "no lane"] as const).map((target) => {
      const measured = results.get(`${mode} ${target}`)!;
      const tps = median(measured.map((m) => m.tps));
      const cpu = median(measured.map((m) => m.cpuMicrosPerTx ?? 0));
      const user = median(measured.map((m) => m.userMicrosPerTx ?? 0));
      return `${target} ${tps.toFixed(0).padStart(6)} tps (${(tps / directTps).toFixed(2)}x) ${cpu.toFixed(1)} µs/tx (${user.toFixed(1)} user)`;
    });
    console.log(
      `select-only ${mode.padEnd(8)}  direct ${directTps.toFixed(0).padStart(6)} tps  ${figures.join("  ")}`,
    );
  }
} finally {
  for (const child of proxies) child.kill("SIGTERM");
  await cluster.stop();
  rmSync(workDir, { recursive: true, force: true });
}
