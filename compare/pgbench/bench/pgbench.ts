import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { type BenchOptions, parseOptions, USAGE } from "../src/options.js";
import { runSession } from "../src/session.js";
import { InterruptedError, installSignalHandlers } from "../src/teardown.js";

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

const argv = process.argv.slice(2).filter((arg) => arg !== "--");
let options: BenchOptions | undefined;
try {
  options = parseOptions(argv);
} catch (error) {
  console.error(`${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (options === undefined) {
  console.log(USAGE);
  process.exit(0);
}

// pnpm runs the script from the package folder; paths on the command line mean the caller's folder.
const invocationDir = process.env["INIT_CWD"] ?? process.cwd();
if (options.out !== undefined) options.out = resolve(invocationDir, options.out);
if (options.geoproxyCli !== undefined) options.geoproxyCli = resolve(invocationDir, options.geoproxyCli);

installSignalHandlers();
const command = ["pnpm --filter @geo/compare-pgbench run bench", ...argv.map(quoteArg)].join(" ");
try {
  const report = await runSession(options, command);
  console.log(`\n${report}`);
  if (options.out !== undefined) {
    writeFileSync(options.out, report);
    console.error(`report written to ${options.out}`);
  }
} catch (error) {
  if (error instanceof InterruptedError) {
    process.exitCode = 130;
  } else {
    console.error(`\npgbench comparison failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
