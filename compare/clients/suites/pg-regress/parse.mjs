// Turns pg_regress (PostgreSQL 15) output into results.jsonl rows; the error of a failed test is the
// start of its section in regression.diffs.   node parse.mjs <pg_regress stdout file> <outputdir>
import fs from "node:fs";
import path from "node:path";

const [log, outdir] = process.argv.slice(2);
const text = fs.readFileSync(log, "utf8");
let diffs = "";
try {
  diffs = fs.readFileSync(path.join(outdir, "regression.diffs"), "utf8");
} catch {}
const diffOf = (name) => {
  const at = diffs.search(new RegExp(`^diff -U3 \\S*/expected/${name}(_\\d)?\\.out`, "m"));
  if (at < 0) return "";
  const rest = diffs.slice(at).split("\n").slice(2);
  const end = rest.findIndex((l, i) => i > 0 && l.startsWith("diff -U3 "));
  const hunk = rest.slice(0, end < 0 ? 60 : Math.min(end, 60));
  return hunk
    .filter((l) => /^[-+]/.test(l))
    .slice(0, 12)
    .join("\n");
};
for (const line of text.split("\n")) {
  const m = line.match(/^\s*(?:test\s+)?(\S+)\s+\.\.\.\s+(ok|FAILED|failed \(ignored\))/);
  if (!m) continue;
  const status = m[2] === "ok" ? "pass" : m[2] === "FAILED" ? "fail" : "skip";
  console.log(JSON.stringify({ name: m[1], status, ...(status === "fail" ? { error: diffOf(m[1]) } : {}) }));
}
