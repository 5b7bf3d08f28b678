// Turns pg_isolation_regress (PostgreSQL 15) output into results.jsonl rows, one per spec of the
// schedule: ok is a pass, FAILED a failure whose error is the start of the spec's section in
// regression.diffs (or the per-spec limit it hit). With the schedule given (the whole run was stopped
// at its limit), each spec it never reached is a failure too.
//   node parse.mjs <pg_isolation_regress stdout> <outputdir> <timed-out list> <spec seconds> [schedule]
import fs from "node:fs";
import path from "node:path";

const [log, outdir, timedOutFile, specSeconds, schedule] = process.argv.slice(2);
const read = (f) => {
  try {
    return fs.readFileSync(f, "utf8");
  } catch {
    return "";
  }
};
const diffs = read(path.join(outdir, "regression.diffs"));
const timedOut = new Set(read(timedOutFile).split("\n").filter(Boolean));
const diffOf = (name) => {
  const at = diffs.search(new RegExp(`^diff -U3 \\S*/expected/${name}(_\\d)?\\.out`, "m"));
  if (at < 0) return "";
  const rest = diffs.slice(at).split("\n").slice(3); // after the diff, --- and +++ lines
  const end = rest.findIndex((l, i) => i > 0 && l.startsWith("diff -U3 "));
  const hunk = rest.slice(0, end < 0 ? 80 : Math.min(end, 80));
  return hunk
    .filter((l) => /^[-+]/.test(l))
    .slice(0, 12)
    .join("\n");
};
const seen = new Set();
for (const line of read(log).split("\n")) {
  const m = line.match(/^\s*(?:test\s+)?(\S+)\s+\.\.\.\s+(ok|FAILED|failed \(ignored\))/);
  if (!m) continue;
  const name = m[1];
  seen.add(name);
  const status = m[2] === "ok" ? "pass" : m[2] === "FAILED" ? "fail" : "skip";
  const error = timedOut.has(name) ? `timed out after ${specSeconds} s\n${diffOf(name)}` : diffOf(name);
  console.log(JSON.stringify({ name, status, ...(status === "fail" ? { error } : {}) }));
}
// specs after the point where the whole run was stopped
for (const line of schedule ? read(schedule).split("\n") : []) {
  const m = line.match(/^(?:test|ignore):\s*(.+)$/);
  if (!m) continue;
  for (const name of m[1].trim().split(/\s+/)) {
    if (!seen.has(name))
      console.log(JSON.stringify({ name, status: "fail", error: "not run: the run was stopped" }));
  }
}
