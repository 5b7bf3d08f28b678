import { parseArgs } from "node:util";
import { generateStatements } from "./generator.js";
import { generateGrammarStatements, grammarText } from "./grammar/generate.js";
import { formatGrammarReport, runGrammar } from "./grammar/run.js";
import { readStatementFile } from "./grammar/statement-file.js";
import { startOracleWorld } from "./oracle-world.js";
import { PROTOCOLS, type Protocol } from "./outcome.js";
import { formatReport } from "./report.js";
import { describeFailure, runOracle } from "./run-oracle.js";

const usage = [
  "pnpm --filter @geo/compare-oracle run oracle -- --statements 2000 --seed 1[,2,...] [--start 0] [--shrink 40] [--collation C|icu] [--control] [--verbose] [--print]   (the adversarial grammar generator)",
  "pnpm --filter @geo/compare-oracle run oracle -- --sql statements.sql [--collation C|icu] [--verbose]   (statements of your own, graded in the grammar world)",
  "pnpm --filter @geo/compare-oracle run oracle -- --families [--count 2000] [--seed 1] [--start 0] [--protocol both|simple|extended] [--shapes] [--verbose]",
].join("\n");

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
      statements: { type: "string" },
      families: { type: "boolean", default: false },
      print: { type: "boolean", default: false },
      shrink: { type: "string" },
      control: { type: "boolean", default: false },
      collation: { type: "string" },
      sql: { type: "string" },
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
  if (!values.families && values.count === undefined && values.protocol === undefined && !values.shapes)
    return grammarMain(values);
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

/** The adversarial grammar generator over its own world (src/grammar). */
async function grammarMain(values: {
  statements?: string;
  seed?: string;
  start?: string;
  verbose?: boolean;
  print?: boolean;
  shrink?: string;
  control?: boolean;
  collation?: string;
  sql?: string;
}): Promise<number> {
  const written = values.sql === undefined ? undefined : readStatementFile(values.sql);
  const count = written?.length ?? integer(values.statements, 2000, "statements");
  const seeds =
    written !== undefined ? [0] : (values.seed ?? "1").split(",").map((seed) => integer(seed, 1, "seed"));
  const start = integer(values.start, 0, "start");
  if (values.print) {
    for (const seed of seeds)
      for (const statement of generateGrammarStatements(seed, count, start))
        console.log(`-- #${statement.index} ${statement.kind}\n${grammarText(statement)};\n`);
    return 0;
  }
  console.error("starting three regions, a reference PostgreSQL and geoproxy (grammar world) ...");
  if (values.collation !== undefined && values.collation !== "C" && values.collation !== "icu")
    throw new Error(`--collation must be C or icu, got ${values.collation}\n${usage}`);
  const world = await startOracleWorld({
    world: "grammar",
    collation: values.collation === "icu" ? "icu" : "C",
  });
  const onSignal = () => {
    console.error("\ninterrupted: stopping the servers");
    void world.stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    let wrong = 0;
    for (const seed of seeds) {
      let done = 0;
      // --control grades the reference against its own reversed copy: it checks the generator.
      const targets =
        values.control && world.control !== undefined
          ? {
              reference: world.reference,
              proxy: world.control.text,
              intKeys: { reference: world.intKeys!.reference, proxy: world.control.int },
            }
          : world;
      const statements = written ?? generateGrammarStatements(seed, count, start);
      const report = await runGrammar(statements, targets, {
        shrinkLimit: integer(values.shrink, 40, "shrink"),
        otherDatabase: values.control === true,
        onGraded: (statement, grade) => {
          done++;
          if (values.verbose)
            console.error(
              `${grade.verdict.padEnd(7)} #${statement.index} ${statement.kind} ${grade.detail ?? ""}`,
            );
          if (done % 250 === 0) console.error(`  seed ${seed}: ${done}/${count} graded`);
        },
      });
      wrong += report.wrong + report.lost.length;
      console.log(formatGrammarReport(report, { seed, start }));
      console.log("");
    }
    return wrong === 0 ? 0 : 1;
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
