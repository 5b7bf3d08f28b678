import { parseArgs } from "node:util";
import { runDrill } from "./run-drill.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "60" },
    clients: { type: "string", default: "6" },
    seed: { type: "string" },
  },
  // `pnpm run drill -- --seconds 60` passes the `--` through.
  args: process.argv.slice(2).filter((arg) => arg !== "--"),
});
const seconds = Number(values.seconds);
const clients = Number(values.clients);
const seed = values.seed === undefined ? Date.now() : Number(values.seed);
if (!Number.isFinite(seconds) || seconds <= 0 || !Number.isInteger(clients) || clients <= 0) {
  console.error("usage: drill [--seconds 60] [--clients 6] [--seed n]");
  process.exit(2);
}
console.log(`transfer drill: ${seconds} s, ${clients} clients, seed ${seed}`);
const report = await runDrill({ seconds, clients, seed, onProgress: (line) => console.log(`  ${line}`) });
console.log(`transfers attempted ${report.attempted}`);
console.log(`          committed ${report.committed}`);
console.log(`          failed    ${report.failed}`);
console.log(`          unknown   ${report.unknown} (connection lost during COMMIT; all-or-none checked)`);
console.log(
  `          lost      ${report.lost} (committed ${report.lostBy.committed}, failed ${report.lostBy.failed}, unknown ${report.lostBy.unknown})`,
);
console.log(
  `total balance ${report.totalBefore} -> ${report.totalAfter}; unbalanced accounts ${report.unbalancedAccounts}`,
);
console.log(
  `prepared transactions left ${report.preparedLeft} (recovered in ${report.recoverySeconds.toFixed(1)} s)`,
);
console.log(`faults: ${report.proxyKills} proxy SIGKILLs, ${report.regionRestarts} region restarts`);
const ok =
  report.lost === 0 &&
  report.totalAfter === report.totalBefore &&
  report.unbalancedAccounts === 0 &&
  report.preparedLeft === 0;
console.log(ok ? "OK" : "FAILED");
process.exit(ok ? 0 : 1);
