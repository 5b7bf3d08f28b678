import { parseArgs } from "node:util";
import { generateStatements } from "./generator.js";
import { startOracleWorld } from "./oracle-world.js";
import { PROTOCOLS, type Protocol } from "./outcome.js";
import { formatReport } from "./report.js";
import { describeFailure, runOracle } from "./run-oracle.js";

const usage =
  "pnpm --filter @geo/compare-oracle run oracle -- [--count 2000] [--seed 1] [--start 0] [--protocol both|simple|extended] [--shapes] [--verbose]";

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new Error(`--${name} must be a non-negative integer, got ${value}\n${usage}`);
  return parsed;
}

function protocols(value: string | undefined): readonly Protocol[] {
  if (value === undefined || value === "both") return PROTOCOLS;
  const chosen = PROTOCOLS.find((protocol) => protocol === value);
  if (chosen === undefined)
    throw new Error(`--protocol must be both, simple or extended, got ${value}\n${usage}`);
  return [chosen];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== "--"),
    options: {
      count: { type: "string" },
      seed: { type: "string" },
      start: { type: "string" },
      protocol: { type: "string" },
      shapes: { type: "boolean", default: false },
      verbose: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const count = integer(values.count, 2000, "count");
  const seed = integer(values.seed, 1, "seed");
  const start = integer(values.start, 0, "start");
  const statements = generateStatements(seed, count, start);

  console.error("starting three regions, a reference PostgreSQL and geoproxy ...");
  const world = await startOracleWorld();
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    console.error("\ninterrupted: stopping the servers");
    void world.stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    let failed = 0;
    const reports: string[] = [];
    for (const protocol of protocols(values.protocol)) {
      let done = 0;
      const report = await runOracle(statements, world, {
        protocol,
        onGraded: (graded) => {
          done++;
          const verdict = graded.grade.verdict;
          if (verdict === "wrong" || verdict === "invalid")
            console.error(`\n${describeFailure(graded, protocol)}`);
          else if (values.verbose)
            console.error(`${verdict.padEnd(7)} #${graded.statement.index} ${graded.statement.shape}`);
          if (done % 500 === 0) console.error(`  ${protocol}: ${done}/${count} graded`);
        },
      });
      if (interrupted) return 130;
      failed += report.total.wrong + report.total.invalid;
      reports.push(formatReport(report, { seed, count, shapes: values.shapes }));
    }
    console.log(reports.join("\n\n"));
    return failed === 0 ? 0 : 1;
  } finally {
    await world.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(2);
  },
);
