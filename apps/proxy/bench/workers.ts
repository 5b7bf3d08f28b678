/**
 * What `geoproxy serve --workers` buys on one machine: pgbench select-only (simple protocol, 16
 * clients, -j = cores, scale 10) directly against PostgreSQL, through geoproxy as one process,
 * and through geoproxy with two workers, interleaved round by round in one session. Prints tps
 * (medians over rounds, with min-max) and the proxy's CPU time per transaction, primary and workers
 * summed (/proc). Prints figures; asserts nothing. Needs a built dist/.
 *
 *   pnpm run bench:workers [seconds] [rounds]
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startCluster } from "@geo/testkit";

const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 3);
const CLIENTS = 16;
const SCALE = 10;
const threads = availableParallelism();
const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm run build\` first`);

const clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** User + system seconds of `pid` and of its live children (the cluster's workers). */
function treeCpuSeconds(pid: number): number {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    // After the command name: state(0) ppid(1) ... utime(11) stime(12).
    if (fields !== undefined && (Number(entry) === pid || Number(fields[1]) === pid))
      ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / clockTicks;
}

/** `geoproxy serve` with `workers` workers on a free port, once it logged `geoproxy listening`. */
async function startProxy(
  server: { host: string; port: number; database: string; user: string },
  folder: string,
  workers: number,
): Promise<{ child: ChildProcess; port: number }> {
  const tables = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]
    .map((table) => `[[tables]]\ntable = "${table}"\nplacement = "pinned"\nregion = "local"\n`)
    .join("\n");
  const config = join(folder, `geoproxy-${workers}.toml`);
  writeFileSync(
    config,
    `[server]
host = "127.0.0.1"
port = 0
node = "bench-${workers}"

[[topology.regions]]
id = "local"
home = true
primary = { host = "${server.host}", port = ${server.port}, database = "${server.database}", user = "${server.user}" }

${tables}
[routing]
default_placement = { placement = "pinned", region = "local" }

[pool]
max = 20

[txn]
data_dir = "${join(folder, `txn-${workers}`)}"
`,
  );
  const child = spawn(
    process.execPath,
    [cli, "serve", "--config", config, "--log-level", "info", "--workers", String(workers)],
    { stdio: ["ignore", "pipe", "inherit"], cwd: folder },
  );
  let output = "";
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on("data", (data: Buffer) => {
      // Only the start is read; later lines are drained unread.
      if (output.length > 1_000_000) return;
      output += data.toString();
      const found = /"port":(\d+)[^\n]*"msg":"geoproxy listening"/.exec(output)?.[1];
      if (found !== undefined) resolve(Number(found));
    });
    child.once("exit", (code) => reject(new Error(`geoproxy --workers ${workers} exited with ${code}`)));
  });
  return { child, port };
}

interface Measured {
  tps: number;
  cpuMicrosPerTx: number | undefined;
}

function pgbench(port: number, duration: number, proxyPid?: number): Measured {
  const before = proxyPid === undefined ? 0 : treeCpuSeconds(proxyPid);
  const output = execFileSync(
    "pgbench",
    [
      ...["-n", "-S", "-M", "simple", "-c", String(CLIENTS), "-j", String(threads), "-T", String(duration)],
      ...["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "postgres"],
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  const after = proxyPid === undefined ? 0 : treeCpuSeconds(proxyPid);
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
const folder = mkdtempSync(join(tmpdir(), "geo-bench-workers-"));
const proxies: ChildProcess[] = [];
try {
  execFileSync(
    "pgbench",
    [
      "-i",
      "-q",
      "-s",
      String(SCALE),
      "-h",
      server.host,
      "-p",
      String(server.port),
      "-U",
      server.user,
      server.database,
    ],
    { stdio: "ignore" },
  );
  const one = await startProxy(server, folder, 1);
  const two = await startProxy(server, folder, 2);
  proxies.push(one.child, two.child);
  const targets = [
    { name: "PostgreSQL direct", port: server.port, pid: undefined },
    { name: "geoproxy, 1 process", port: one.port, pid: one.child.pid },
    { name: "geoproxy --workers 2", port: two.port, pid: two.child.pid },
  ];
  // Warm-up: opens the pooled connections and lets V8 compile the hot path before timing.
  for (const target of targets) pgbench(target.port, 3, target.pid);
  const results = new Map<string, Measured[]>();
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      const measured = pgbench(target.port, seconds, target.pid);
      results.set(target.name, [...(results.get(target.name) ?? []), measured]);
      console.error(`round ${round + 1}/${rounds} ${target.name}: ${measured.tps.toFixed(0)} tps`);
    }
  }
  const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? "unknown CPU";
  console.log(
    `pgbench -n -S -M simple -c ${CLIENTS} -j ${threads} -T ${seconds}, scale ${SCALE}, ${rounds} interleaved rounds; ${availableParallelism()} cores (${cpu}), Node ${process.version}; load average after ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
  );
  console.log("");
  console.log("| target | tps (median) | min-max | vs direct | proxy CPU µs/tx |");
  console.log("| --- | ---: | --- | ---: | ---: |");
  const directTps = median(results.get(targets[0]!.name)!.map((m) => m.tps));
  for (const target of targets) {
    const runs = results.get(target.name)!;
    const tps = runs.map((m) => m.tps);
    const cpuPerTx =
      target.pid === undefined ? "" : median(runs.map((m) => m.cpuMicrosPerTx ?? 0)).toFixed(1);
    console.log(
      `| ${target.name} | ${median(tps).toFixed(0)} | ${Math.min(...tps).toFixed(0)}-${Math.max(...tps).toFixed(0)} | ${(median(tps) / directTps).toFixed(2)} | ${cpuPerTx} |`,
    );
  }
} finally {
  for (const child of proxies) child.kill("SIGTERM");
  await Promise.all(
    proxies.map(
      (child) =>
        new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(null))),
    ),
  );
  await cluster.stop();
  rmSync(folder, { recursive: true, force: true });
}
