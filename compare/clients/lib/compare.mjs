// Side-by-side counts of one suite's runs, and the tests that fail through the proxy but pass through
// the pipe.  node compare.mjs SUITE RESULTS_DIR way...   |   node compare.mjs --count results.jsonl
// results.jsonl: one {"name", "status": "pass"|"fail"|"skip", "error"?} per test.
import fs from "node:fs";
import path from "node:path";

function load(file) {
  if (!fs.existsSync(file)) return null;
  const rows = new Map();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    rows.set(r.name, r);
  }
  return rows;
}
function count(rows) {
  const c = { pass: 0, fail: 0, skip: 0 };
  for (const r of rows.values()) c[r.status] = (c[r.status] ?? 0) + 1;
  return c;
}
const args = process.argv.slice(2);
if (args[0] === "--count") {
  const rows = load(args[1]);
  if (!rows) console.log("no results");
  else {
    const c = count(rows);
    console.log(`${c.pass} pass, ${c.fail} fail, ${c.skip} skip`);
  }
  process.exit(0);
}
const [suite, dir, ...ways] = args;
const runs = Object.fromEntries(ways.map((w) => [w, load(path.join(dir, w, "results.jsonl"))]));
const secs = (w) => {
  try {
    return fs.readFileSync(path.join(dir, w, "seconds"), "utf8").trim();
  } catch {
    return "?";
  }
};
console.log(`\n${suite}`);
console.log("| way | pass | fail | skip | total | seconds |");
console.log("|---|---|---|---|---|---|");
for (const w of ways) {
  const rows = runs[w];
  if (!rows) {
    console.log(`| ${w} | - | - | - | - | - |`);
    continue;
  }
  const c = count(rows);
  console.log(`| ${w} | ${c.pass} | ${c.fail} | ${c.skip} | ${rows.size} | ${secs(w)} |`);
}
const short = (e) => (e ?? "").replace(/\s+/g, " ").slice(0, 300);
if (runs.proxy) {
  const base = runs.pipe ?? runs.direct;
  const baseName = runs.pipe ? "pipe" : "direct";
  if (base) {
    const only = [...runs.proxy.values()].filter(
      (r) => r.status === "fail" && base.get(r.name)?.status === "pass",
    );
    const missing = [...base.values()].filter((r) => r.status === "pass" && !runs.proxy.has(r.name));
    console.log(`\nFailing through the proxy, passing through the ${baseName} (${only.length}):`);
    for (const r of only) console.log(`- ${r.name}\n    ${short(r.error)}`);
    if (missing.length) {
      console.log(`\nPassing through the ${baseName}, not run through the proxy (${missing.length}):`);
      for (const r of missing) console.log(`- ${r.name}`);
    }
    const both = [...runs.proxy.values()].filter(
      (r) => r.status === "fail" && base.get(r.name)?.status !== "pass",
    );
    if (both.length) {
      console.log(
        `\nFailing through the proxy and not passing through the ${baseName} either (${both.length}):`,
      );
      for (const r of both) console.log(`- ${r.name}`);
    }
  }
}
