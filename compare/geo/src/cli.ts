import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { cleanUpOnSignals, cleanup, isCleaningUp } from "./cleanup.js";
import { DEFAULT_CLI, HOME, type RegionSetting, startGeoWorld } from "./geo-world.js";
import { type Measurement, measure, openClient } from "./measure.js";
import { checkRelays } from "./ping-pong.js";
import { latencyTable, relayTable, unmeasuredNotes, type WorkloadRow } from "./report.js";
import { PROTOCOLS, type Protocol, WORKLOADS, type WorkloadContext } from "./workloads.js";

const PROTOCOL_LABEL: Record<Protocol, string> = {
  extended: "keys bound as parameters, extended protocol",
  simple: "keys as literals, simple protocol",
};

const USAGE = `pnpm --filter @geo/compare-geo run geo -- [--iterations 100] [--warmup 20] [--proxy-warmup 500] [--rtt us-east=75,ap-south=110]
    [--remote-region us-east] [--baseline-region us-east] [--keys 50] [--pings 40]
    [--workloads home-read,home-write,remote-read,count-all,two-region-tx,new-key-write] [--protocol both|extended|simple] [--geoproxy-cli <file>]`;

function positive(value: string | undefined, fallback: number, name: string, allowZero = false): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < (allowZero ? 0 : 1))
    throw new Error(`--${name}: expected an integer, got ${value}\n${USAGE}`);
  return parsed;
}

function parseRtts(text: string): RegionSetting[] {
  const remote = text.split(",").map((part) => {
    const [id, rtt] = part.split("=");
    const rttMs = Number(rtt);
    if (id === undefined || id === "" || id === HOME || !Number.isFinite(rttMs) || rttMs <= 0) {
      throw new Error(`--rtt: expected <region>=<ms>,... (regions other than ${HOME}), got ${text}`);
    }
    return { id, rttMs };
  });
  return [{ id: HOME, rttMs: 0 }, ...remote];
}

function loadAverage(): string {
  return loadavg()
    .map((load) => load.toFixed(2))
    .join(" ");
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== "--"),
    options: {
      iterations: { type: "string" },
      warmup: { type: "string" },
      "proxy-warmup": { type: "string" },
      rtt: { type: "string" },
      "remote-region": { type: "string" },
      "baseline-region": { type: "string" },
      keys: { type: "string" },
      pings: { type: "string" },
      workloads: { type: "string" },
      "geoproxy-cli": { type: "string" },
      protocol: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const iterations = positive(values.iterations, 100, "iterations");
  const warmup = positive(values.warmup, 20, "warmup", true);
  const proxyWarmup = positive(values["proxy-warmup"], 500, "proxy-warmup", true);
  const pings = positive(values.pings, 40, "pings");
  const keysPerRegion = positive(values.keys, 50, "keys");
  const regions = parseRtts(values.rtt ?? "us-east=75,ap-south=110");
  const rttOf = (id: string, flag: string): number => {
    const region = regions.find((r) => r.id === id);
    if (region === undefined)
      throw new Error(`--${flag}: ${id} is not one of ${regions.map((r) => r.id).join(", ")}`);
    return region.rttMs;
  };
  const remoteRegion = values["remote-region"] ?? regions[1]!.id;
  rttOf(remoteRegion, "remote-region");
  const baselineRegion = values["baseline-region"] ?? regions[1]!.id;
  const baselineRttMs = rttOf(baselineRegion, "baseline-region");
  const chosen = values.workloads?.split(",") ?? WORKLOADS.map((w) => w.id);
  const unknown = chosen.filter((id) => !WORKLOADS.some((w) => w.id === id));
  if (unknown.length > 0) throw new Error(`--workloads: unknown ${unknown.join(", ")}\n${USAGE}`);
  const workloads = WORKLOADS.filter((w) => chosen.includes(w.id));
  const protocols: readonly Protocol[] =
    values.protocol === undefined || values.protocol === "both"
      ? PROTOCOLS
      : PROTOCOLS.filter((protocol) => protocol === values.protocol);
  if (protocols.length === 0) throw new Error(`--protocol: expected extended, simple or both\n${USAGE}`);

  cleanUpOnSignals();
  const started = new Date();
  const out: string[] = [];
  const say = (line = "") => {
    out.push(line);
    console.log(line);
  };
  say(`# geoproxy across three regions, clients in ${HOME}`);
  say();
  say(
    `- date: ${started.toISOString()}; machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB; load average at start ${loadAverage()}`,
  );
  say(
    `- regions: ${regions.map((r) => `${r.id} ${r.rttMs === 0 ? "(home, loopback)" : `${r.rttMs} ms away`}`).join(", ")}`,
  );
  say(
    `- baseline: one PostgreSQL holding every row, in ${baselineRegion} (${baselineRttMs} ms from the clients)`,
  );
  say(
    `- ${iterations} timed operations per workload after ${warmup} untimed, one at a time on one connection; geoproxy first warmed up with ${proxyWarmup} home reads and writes`,
  );
  say(
    `- command: pnpm --filter @geo/compare-geo run geo -- ${process.argv
      .slice(2)
      .filter((a) => a !== "--")
      .join(" ")}`,
  );
  say();

  console.error(`checking the delaying relay (${pings} ping-pongs per setting) ...`);
  const rtts = [...new Set([...regions.filter((r) => r.rttMs > 0).map((r) => r.rttMs), baselineRttMs])];
  const check = await checkRelays(rtts, pings);
  say("## The relay adds the configured round trip and nothing else");
  say();
  say(relayTable(check.direct, check.relays));
  say();

  console.error("starting the regions' PostgreSQL servers, the baseline, the relays and geoproxy ...");
  const world = await startGeoWorld({
    regions,
    baselineRttMs,
    baselineRegion,
    keysPerRegion,
    geoproxyCli: values["geoproxy-cli"] ?? DEFAULT_CLI,
  });
  const proxyClient = await openClient(world.proxy);
  const baselineClient = await openClient(world.baseline);
  const runId = Date.now().toString(36);
  // A fresh Node process runs its first statements slower while the JIT compiles the hot path; a
  // proxy in production has long passed that point, so it is warmed up untimed first.
  const homeOnly = WORKLOADS.filter((w) => w.id === "home-read" || w.id === "home-write");
  const base = { keysPerRegion, remoteRegion, regions: regions.map((r) => r.id) };
  console.error(`warming geoproxy up with ${proxyWarmup} home reads and writes ...`);
  for (let i = 0; i < proxyWarmup; i++) {
    const context: WorkloadContext = {
      ...base,
      newKeyPrefix: `warm-${runId}`,
      protocol: protocols[i % protocols.length]!,
    };
    await homeOnly[i % homeOnly.length]!.run(proxyClient, i, context).catch(() => {});
  }
  const baselineLabel = `single PostgreSQL (${baselineRegion}, ${baselineRttMs} ms)`;
  for (const protocol of protocols) {
    const rows: WorkloadRow[] = [];
    for (const workload of workloads) {
      if (isCleaningUp()) return 130;
      const title = workload.title({ ...base, newKeyPrefix: "", protocol });
      console.error(`  ${protocol}: ${title}: geoproxy ...`);
      const proxy = await measure(
        proxyClient,
        workload,
        { ...base, newKeyPrefix: `new-${runId}-${protocol}-p`, protocol },
        iterations,
        warmup,
      );
      console.error(`  ${protocol}: ${title}: single PostgreSQL ...`);
      const baseline: Measurement = await measure(
        baselineClient,
        workload,
        { ...base, newKeyPrefix: `new-${runId}-${protocol}-b`, protocol },
        iterations,
        warmup,
      );
      for (const [who, m] of [
        ["geoproxy", proxy],
        ["single PostgreSQL", baseline],
      ] as const) {
        if (m.kind !== "measured") {
          console.error(
            `\n!!! ${title} (${protocol}): ${who} ${m.kind.toUpperCase()} (${m.sqlstate}): ${m.message}\n`,
          );
        }
      }
      rows.push({ title, proxy, baseline });
    }
    say(`## Latency per workload, ms (clients in ${HOME}, ${PROTOCOL_LABEL[protocol]})`);
    say();
    say(latencyTable(rows, baselineLabel));
    const notes = unmeasuredNotes(rows, baselineLabel);
    if (notes.length > 0) {
      say();
      say("Not measured, with the server's own reason:");
      say();
      for (const note of notes) say(note);
    }
    say();
  }
  await Promise.all([proxyClient.end(), baselineClient.end()]);

  const relayed = world.relays.map(({ label, relay }) => `${label}: ${relay.connections}`).join("; ");
  say(`Connections through the relays: ${relayed}. Load average at the end: ${loadAverage()}.`);
  return 0;
}

main().then(
  async (code) => {
    await cleanup();
    process.exit(code);
  },
  async (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    await cleanup();
    process.exit(2);
  },
);
