import { measureMergeMemory } from "./merge-memory.js";
import { formatReport } from "./report.js";
import { RESULT_FORMATS, runFidelity } from "./run-fidelity.js";
import { STATEMENTS } from "./statements.js";
import { startFidelityWorld } from "./world.js";

async function main(): Promise<number> {
  console.error("starting three regions, a reference PostgreSQL and geoproxy ...");
  const world = await startFidelityWorld();
  const onSignal = () => {
    void world.stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    let failed = 0;
    for (const format of RESULT_FORMATS) {
      const report = await runFidelity(STATEMENTS, world, format);
      failed += report.total.wrong + report.total.invalid;
      console.log(`${formatReport(report)}\n`);
    }
    const memory = await measureMergeMemory(world.regions);
    const mb = (kb: number) => (kb / 1024).toFixed(1);
    console.log(
      `## Merge memory\n\n${memory.rows} rows (${mb(memory.bytes / 1024)} MB on the wire) merged in order: ${memory.inOrder}, ` +
        `read slowly in ${(memory.elapsedMs / 1000).toFixed(1)} s. geoproxy RSS: ${mb(memory.baselineRssKb)} MB before, ` +
        `peak ${mb(memory.peakRssKb)} MB, end ${mb(memory.endRssKb)} MB: growth ${mb(memory.growthKb)} MB.`,
    );
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
