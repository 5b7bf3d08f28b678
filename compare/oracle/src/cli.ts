import { parseArgs } from "node:util";
import { generateStatements } from "./generator.js";
import { startOracleWorld } from "./oracle-world.js";
import { formatReport } from "./report.js";
import { describeFailure, runOracle } from "./run-oracle.js";

const usage = `pnpm --filter @geo/compare-oracle run oracle -- [--count 2000] [--seed 1] [--start 0] [--shapes] [--verbose]`;

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new Error(`--${name} must be a non-negative integer, got ${value}\n${usage}`);
  return parsed;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== "--"),
    options: {
      count: { type: "string" },
      seed: { type: "string" },
      start: { type: "string" },
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
    let done = 0;
    const report = await runOracle(statements, world, (graded) => {
      done++;
      const verdict = graded.grade.verdict;
      if (verdict === "wrong" || verdict === "invalid") console.error(`\n${describeFailure(graded)}`);
      else if (values.verbose)
        console.error(`${verdict.padEnd(7)} #${graded.statement.index} ${graded.statement.shape}`);
      if (done % 250 === 0) console.error(`  ${done}/${count} graded`);
    });
    if (interrupted) return 130;
    console.log(formatReport(report, { seed, count, shapes: values.shapes }));
    return report.total.wrong + report.total.invalid === 0 ? 0 : 1;
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
