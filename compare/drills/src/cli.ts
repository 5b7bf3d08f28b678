import { parseArgs } from "node:util";
import { markdownTable } from "./report-table.js";
import { type DrillReport, drillPassed, runDrill } from "./run-drill.js";
import { SCENARIOS, scenarioNamed } from "./scenarios.js";

const USAGE =
  "usage: drill (--scenario <name> [--scenario <name> ...] | --all | --list) [--seconds 20] [--clients 3] [--seed n]";

const { values } = parseArgs({
  options: {
    scenario: { type: "string", multiple: true },
    all: { type: "boolean", default: false },
    list: { type: "boolean", default: false },
    seconds: { type: "string", default: "20" },
    clients: { type: "string", default: "3" },
    seed: { type: "string" },
  },
  // `pnpm run drill -- --seconds 60` passes the `--` through.
  args: process.argv.slice(2).filter((arg) => arg !== "--"),
});

if (values.list) {
  for (const scenario of SCENARIOS) console.log(`${scenario.name.padEnd(22)} ${scenario.summary}`);
  process.exit(0);
}
const seconds = Number(values.seconds);
const clients = Number(values.clients);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const chosen = values.all
  ? [...SCENARIOS]
  : (values.scenario ?? []).map((name) => scenarioNamed(name) ?? name);
const unknown = chosen.filter((scenario) => typeof scenario === "string");
if (
  !Number.isFinite(seconds) ||
  seconds <= 0 ||
  !Number.isInteger(clients) ||
  clients <= 0 ||
  chosen.length === 0 ||
  unknown.length > 0
) {
  if (unknown.length > 0) console.error(`no scenario named ${unknown.join(", ")} (--list lists them)`);
  console.error(USAGE);
  process.exit(2);
}

const reports: DrillReport[] = [];
for (const scenario of chosen) {
  if (typeof scenario === "string") continue;
  const runFor = Math.max(seconds, scenario.minSeconds ?? 0);
  console.log(`${scenario.name}: ${scenario.summary} (${runFor} s, seed ${seed})`);
  const report = await runDrill({
    scenario,
    seconds: runFor,
    transferClients: clients,
    seed,
    onProgress: (line) => console.log(`  ${line}`),
  });
  reports.push(report);
  for (const note of report.notes) console.log(`  note: ${note}`);
  console.log(
    `  proxy kills ${report.proxyKills}, stale reads ${report.staleReads}, misrouted ${report.misrouted}, recovered in ${report.recoverySeconds.toFixed(1)} s`,
  );
  for (const [workload, result] of [
    ["keyed", report.keyed],
    ["transfers", report.transfers],
  ] as const) {
    const keys = Object.entries(result.unavailableByKey).map(([key, ms]) => `${key} ${ms}`);
    console.log(`  ${workload} unavailability per key (ms): ${keys.join(", ")}`);
  }
  for (const sample of [...report.keyed.samples, ...report.transfers.samples]) console.log(`  ! ${sample}`);
  for (const failure of report.failures) console.log(`  ! check failed: ${failure}`);
  if (report.keptDir !== null) console.log(`  proxy and decision logs kept in ${report.keptDir}`);
  console.log(drillPassed(report) ? "  OK" : "  FAILED");
}
console.log("");
console.log(markdownTable(reports));
const failed = reports.filter((report) => !drillPassed(report)).map((report) => report.scenario);
console.log(failed.length === 0 ? "\nOK" : `\nFAILED: ${failed.join(", ")}`);
process.exit(failed.length === 0 ? 0 : 1);
