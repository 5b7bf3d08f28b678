import { startOracleWorld } from "./src/oracle-world.js";
import { ScriptClient } from "./src/outcome.js";
const world = await startOracleWorld({ world: "grammar", logLevel: "error" });
try {
  const sqls = process.argv.slice(2);
  for (const sql of sqls) {
    const int = sql.startsWith("int:");
    const text = int ? sql.slice(4) : sql;
    const ref = new ScriptClient(int ? world.intKeys!.reference : world.reference);
    const px = new ScriptClient(int ? world.intKeys!.proxy : world.proxy);
    const a = await ref.run([text]);
    const b = await px.run([text]);
    console.log(text, "\n  ref:", JSON.stringify(a).slice(0, 300), "\n  proxy:", JSON.stringify(b).slice(0, 300));
    await ref.close(); await px.close();
  }
} finally { await world.stop(); }
